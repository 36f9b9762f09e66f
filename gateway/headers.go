package gateway

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/sessionlog/sessionlog/wire/recorded"
)

// hopByHop are the headers of one connection (RFC 9110 §7.6.1), never
// forwarded; so are the headers Connection names.
var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}

// copyHeader copies src's end-to-end headers to dst.
func copyHeader(dst, src http.Header) {
	var named map[string]bool
	for _, v := range src.Values("Connection") {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				if named == nil {
					named = map[string]bool{}
				}
				named[http.CanonicalHeaderKey(f)] = true
			}
		}
	}
	for k, vv := range src {
		if hopByHop[k] || named[k] || strings.HasPrefix(k, "Proxy-") {
			continue
		}
		dst[k] = append([]string(nil), vv...)
	}
}

// never are headers that hold secrets: never recorded, whatever
// --record-header says.
var never = map[string]bool{
	"authorization": true, "x-api-key": true, "x-goog-api-key": true, "proxy-authorization": true,
	"cookie": true, "set-cookie": true,
}

// The allowlists of docs/gateway.md#running-it: exact names, and prefixes ending in '-'.
var (
	requestAllow = []string{"content-type", "accept", "accept-encoding", "user-agent", "anthropic-version",
		"anthropic-beta", "openai-beta", "x-app", "x-stainless-", "originator", "session-id", "thread-id",
		"x-client-request-id", "x-claude-code-session-id", "x-codex-"}
	responseAllow = []string{"content-type", "request-id", "x-request-id", "retry-after", "anthropic-ratelimit-",
		"x-ratelimit-", "openai-processing-ms"}
)

// allowlist decides which headers are recorded.
type allowlist []string

func (a allowlist) allows(name string) bool {
	if never[name] {
		return false
	}
	for _, p := range a {
		if name == p || (strings.HasSuffix(p, "-") && strings.HasPrefix(name, p)) {
			return true
		}
	}
	return false
}

// recordHeaders returns h's allowed headers, lower-case names in order,
// the values of a repeated one joined with ", ". A value that is not
// valid UTF-8 is left out.
func (a allowlist) recordHeaders(h http.Header) []recorded.Field {
	var out []recorded.Field
	for k, vv := range h {
		name := strings.ToLower(k)
		if !a.allows(name) {
			continue
		}
		v := strings.Join(vv, ", ")
		if !utf8.ValidString(v) {
			continue
		}
		out = append(out, recorded.Field{Name: name, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// secretParams are query parameters that may hold a key (Gemini takes
// ?key=): their values are not recorded in the path.
var secretParams = map[string]bool{"key": true, "api_key": true, "apikey": true, "api-key": true,
	"access_token": true, "token": true}

// recordPath is the path and query to record: the query's secret
// parameters' values replaced by "redacted".
func recordPath(path, rawQuery string) string {
	if rawQuery == "" {
		return path
	}
	parts := strings.Split(rawQuery, "&")
	for i, p := range parts {
		k, _, _ := strings.Cut(p, "=")
		if name, err := url.QueryUnescape(k); err == nil && secretParams[strings.ToLower(name)] {
			parts[i] = k + "=redacted"
		}
	}
	s := path + "?" + strings.Join(parts, "&")
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}
