package main

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/sessionlog/sessionlog/eventlog/pglog"
	"github.com/sessionlog/sessionlog/internal/printable"
)

// storeName is a store (--db, --from, --to) as every message prints it:
// a postgres:// URL without its secrets (redactStore), with its control
// characters escaped.
func storeName(db string) string { return printable.Line(redactStore(db)) }

// masked stands for a secret in a printed store name.
const masked = "xxxxx"

// secretParams are the connection parameters whose values are secrets
// (or name a file of them): masked wherever a store is printed.
var secretParams = map[string]bool{"password": true, "sslpassword": true, "passfile": true}

// redactStore returns db without its secrets: a postgres:// URL with the
// password of its user-info and the values of its query parameters
// password, sslpassword and passfile replaced by xxxxx; a URL that does not
// parse (a password holding a '#' or a '/', say) as its scheme alone,
// "postgres://…"; a keyword/value connection string with those keywords'
// values masked. A file path is returned as it is.
func redactStore(db string) string {
	if pglog.IsURL(db) {
		scheme, _, _ := strings.Cut(db, "://")
		u, err := url.Parse(db)
		if err != nil || u.Opaque != "" {
			return scheme + "://…"
		}
		if u.User != nil {
			if _, ok := u.User.Password(); ok {
				u.User = url.UserPassword(u.User.Username(), masked)
			}
		}
		u.RawQuery = maskQuery(u.RawQuery)
		u.Fragment, u.RawFragment = "", ""
		return u.String()
	}
	if keywordDSN(db) {
		return keywordSecret.ReplaceAllString(db, "${1}="+masked)
	}
	return db
}

// maskQuery masks the values of the secret parameters of a raw query,
// keeping the others and their order as they were written.
func maskQuery(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, _, _ := strings.Cut(p, "=")
		if key, err := url.QueryUnescape(k); err != nil || secretParams[strings.ToLower(key)] {
			parts[i] = k + "=" + masked
		}
	}
	return strings.Join(parts, "&")
}

// keywordSecret matches a secret keyword and its value in a keyword/value
// connection string: a quoted value ('…', with \' and \\ inside) or one
// up to the next space.
var keywordSecret = regexp.MustCompile(`(?i)\b(password|sslpassword|passfile)\s*=\s*(?:'(?:[^'\\]|\\.)*'?|\S*)`)

// keywordToken is one key=value word of a keyword/value connection string.
var keywordToken = regexp.MustCompile(`^([a-z_]+)\s*=`)

// libpqKeywords are connection keywords of libpq that a file name is
// unlikely to start with.
var libpqKeywords = map[string]bool{
	"host": true, "hostaddr": true, "port": true, "dbname": true, "user": true, "password": true,
	"passfile": true, "sslmode": true, "sslpassword": true, "sslcert": true, "sslkey": true,
	"sslrootcert": true, "connect_timeout": true, "application_name": true, "options": true,
	"service": true, "target_session_attrs": true, "search_path": true,
}

// keywordDSN reports whether db looks like a keyword/value connection
// string ("host=db user=me password=…") rather than a file path: it
// starts with a libpq keyword and an '='. logtool takes a postgres:// URL
// only, and refuses this form instead of creating a file of that name.
func keywordDSN(db string) bool {
	m := keywordToken.FindStringSubmatch(strings.TrimSpace(db))
	return m != nil && libpqKeywords[m[1]]
}
