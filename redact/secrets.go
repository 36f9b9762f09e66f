package redact

import (
	"bytes"
	"encoding/base64"
	"regexp"
	"sync"
)

// Secrets returns the ready Redactor for common secrets: the matchers of
// SecretMatchers.
func Secrets() *Redactor { return secrets() }

var secrets = sync.OnceValue(func() *Redactor { return New(SecretMatchers()...) })

// SecretMatchers returns the ready matchers, one per kind of secret:
//
//	openai       sk-… keys of OpenAI and the APIs shaped like it (sk-proj-…,
//	             sk-svcacct-…, DeepSeek's and OpenRouter's sk-…): 32+ characters
//	anthropic    sk-ant-api03-…, sk-ant-admin01-…, sk-ant-oat01-…
//	google       AIza and 35 characters (Google API keys)
//	github       ghp_, gho_, ghu_, ghs_, ghr_ tokens; github_pat_ tokens
//	gitlab       glpat- tokens
//	slack        xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe- and xapp- tokens
//	stripe       sk_live_, sk_test_, rk_live_, rk_test_ keys, whsec_ secrets
//	huggingface  hf_ tokens
//	npm          npm_ tokens
//	aws-key-id   AKIA, ASIA, ABIA, ACCA and 16 upper-case letters or digits
//	aws-secret   the value of a secret access key assignment
//	             (aws_secret_access_key = …, "SecretAccessKey": "…")
//	jwt          eyJ….eyJ….… (a signed JSON Web Token)
//	bearer       the token after Bearer (an Authorization header in text)
//	basic-auth   the credentials after Basic, when they decode to user:password
//	private-key  a PEM private key block, BEGIN to END (or, cut short, to
//	             the end of its base64)
//
// A token must stand alone (no letter or digit right before it or right
// after it) and look random: the keys' bodies hold digits and letters
// both (or both cases), which words and identifiers in text rarely do.
// Over the DSH corpus and the transcripts of ../shared they match nothing
// (TestCorpusFalsePositives).
func SecretMatchers() []Matcher {
	return []Matcher{
		&token{name: "openai", prefixes: []string{"sk-"}, body: b64url, min: 32, max: 512, check: mixed, not: "ant-"},
		&token{name: "anthropic", prefixes: []string{"sk-ant-"}, body: b64url, min: 40, max: 512, check: mixedCased},
		&token{name: "google", prefixes: []string{"AIza"}, body: b64url, min: 35, max: 35, check: mixed},
		&token{name: "github", prefixes: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, body: alnum, min: 36, max: 255, check: mixed},
		&token{name: "github", prefixes: []string{"github_pat_"}, body: alnumUnder, min: 60, max: 255, check: mixed},
		&token{name: "gitlab", prefixes: []string{"glpat-"}, body: b64url, min: 20, max: 255, check: mixed},
		&token{name: "slack", prefixes: []string{"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe-", "xapp-"}, body: alnumDash, min: 20, max: 255, check: mixed},
		&token{name: "stripe", prefixes: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"}, body: alnum, min: 16, max: 255, check: mixed},
		&token{name: "huggingface", prefixes: []string{"hf_"}, body: alnum, min: 30, max: 64, check: cased},
		&token{name: "npm", prefixes: []string{"npm_"}, body: alnum, min: 36, max: 36, check: mixed},
		&token{name: "aws-key-id", prefixes: []string{"AKIA", "ASIA", "ABIA", "ACCA"}, body: upperDigit, min: 16, max: 16},
		awsSecret,
		jwt{},
		bearer{},
		basicAuth{},
		privateKey{},
	}
}

// charset is a set of bytes.
type charset [256]bool

func newCharset(ranges string) *charset {
	var c charset
	for i := 0; i < len(ranges); i++ {
		if i+2 < len(ranges) && ranges[i+1] == '-' {
			for b := int(ranges[i]); b <= int(ranges[i+2]); b++ {
				c[b] = true
			}
			i += 2
			continue
		}
		c[ranges[i]] = true
	}
	return &c
}

var (
	alnum      = newCharset("A-Za-z0-9")
	alnumUnder = newCharset("A-Za-z0-9_")
	alnumDash  = newCharset("A-Za-z0-9-")
	b64url     = newCharset("A-Za-z0-9_-")
	upperDigit = newCharset("A-Z0-9")
	tokenChars = newCharset("A-Za-z0-9._~+/=-") // RFC 6750's b64token
	base64Std  = newCharset("A-Za-z0-9+/=")
	// word is what may not touch a token: a letter, a digit, '_' (and
	// before it, '-': "task-sk-…" is no key).
	word = newCharset("A-Za-z0-9_")
)

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

// classes says which of digits, upper- and lower-case letters b holds.
func classes(b []byte) (digit, upper, lower bool) {
	for _, c := range b {
		switch {
		case isDigit(c):
			digit = true
		case isUpper(c):
			upper = true
		case isLower(c):
			lower = true
		}
	}
	return
}

// mixed: digits and letters both, as a random key has.
func mixed(b []byte) bool {
	d, u, l := classes(b)
	return d && (u || l)
}

// cased: upper- and lower-case letters both.
func cased(b []byte) bool {
	_, u, l := classes(b)
	return u && l
}

func mixedCased(b []byte) bool {
	d, u, l := classes(b)
	return d && u && l
}

// before reports whether the byte before s[at] may precede a token: none,
// or one that is no word byte and no '-'.
func before(s []byte, at int) bool {
	return at == 0 || !(word[s[at-1]] || s[at-1] == '-')
}

// after reports whether the byte at s[end] may follow a token: none, or
// no letter or digit.
func after(s []byte, end int) bool {
	return end == len(s) || !alnum[s[end]]
}

// run returns the length of the run of bytes of set at s[at:], counting
// no further than limit.
func run(s []byte, at int, set *charset, limit int) int {
	n := 0
	for at+n < len(s) && n <= limit && set[s[at+n]] {
		n++
	}
	return n
}

// token matches a literal prefix and a body of min to max bytes of a
// set, standing alone; check, when set, must accept the body, and a body
// that starts with not belongs to another matcher.
type token struct {
	name     string
	prefixes []string
	body     *charset
	min, max int
	check    func([]byte) bool
	not      string
}

func (t *token) Name() string      { return t.name }
func (t *token) anchors() []string { return t.prefixes }

func (t *token) shortest() int {
	n := len(t.prefixes[0])
	for _, p := range t.prefixes[1:] {
		n = min(n, len(p))
	}
	return n + t.min
}

func (t *token) Match(dst []Span, s []byte) []Span {
	for _, p := range t.prefixes {
		for i := 0; ; {
			j := bytes.Index(s[i:], []byte(p))
			if j < 0 {
				break
			}
			at := i + j
			i = at + 1
			if !before(s, at) {
				continue
			}
			b := at + len(p)
			n := run(s, b, t.body, t.max)
			if n < t.min || n > t.max || !after(s, b+n) {
				continue
			}
			body := s[b : b+n]
			if t.not != "" && bytes.HasPrefix(body, []byte(t.not)) {
				continue
			}
			if t.check != nil && !t.check(body) {
				continue
			}
			dst = append(dst, Span{at, b + n})
			i = b + n
		}
	}
	return dst
}

// jwt matches a signed JSON Web Token: three base64url parts, the first
// two JSON objects ("eyJ" is how base64 of `{"` begins).
type jwt struct{}

// jwtMin are the shortest lengths of a JWT's parts.
var jwtMin = [3]int{13, 13, 16}

func (jwt) Name() string      { return "jwt" }
func (jwt) anchors() []string { return []string{"eyJ"} }
func (jwt) shortest() int     { return 3 + 10 + 1 + 3 + 10 + 1 + 16 }

func (jwt) Match(dst []Span, s []byte) []Span {
	for i := 0; ; {
		j := bytes.Index(s[i:], []byte("eyJ"))
		if j < 0 {
			return dst
		}
		at := i + j
		i = at + 1
		if !before(s, at) {
			continue
		}
		end, ok := at, true
		for part := 0; part < 3 && ok; part++ {
			if part > 0 {
				if end >= len(s) || s[end] != '.' {
					ok = false
					break
				}
				end++
				if part == 1 && !bytes.HasPrefix(s[end:], []byte("eyJ")) {
					ok = false
					break
				}
			}
			n := run(s, end, b64url, 8192)
			if n < jwtMin[part] || n > 8192 {
				ok = false
			}
			end += n
		}
		if ok && after(s, end) {
			dst = append(dst, Span{at, end})
			i = end
		}
	}
}

// bearer matches the token after "Bearer" and blanks: RFC 6750's
// b64token, 16 to 4096 bytes, digits and letters both.
type bearer struct{}

func (bearer) Name() string      { return "bearer" }
func (bearer) anchors() []string { return []string{"earer ", "EARER ", "earer\t", "EARER\t"} }
func (bearer) shortest() int     { return len("Bearer ") + 16 }

func (bearer) Match(dst []Span, s []byte) []Span {
	return scheme(dst, s, bearerWords, tokenChars, func(tok []byte) bool {
		return len(tok) >= 16 && mixed(tok)
	})
}

// basicAuth matches the credentials after "Basic" and blanks: base64
// that decodes to printable user:password.
type basicAuth struct{}

var (
	bearerWords = []string{"Bearer", "bearer", "BEARER"}
	basicWords  = []string{"Basic", "basic", "BASIC"}
)

func (basicAuth) Name() string      { return "basic-auth" }
func (basicAuth) anchors() []string { return []string{"asic ", "ASIC ", "asic\t", "ASIC\t"} }
func (basicAuth) shortest() int     { return len("Basic ") + 8 }

func (basicAuth) Match(dst []Span, s []byte) []Span {
	return scheme(dst, s, basicWords, base64Std, func(tok []byte) bool {
		if len(tok) < 8 || len(tok)%4 != 0 {
			return false
		}
		var buf [768]byte
		if base64.StdEncoding.DecodedLen(len(tok)) > len(buf) {
			return false
		}
		n, err := base64.StdEncoding.Decode(buf[:], tok)
		if err != nil {
			return false
		}
		creds := buf[:n]
		colon := bytes.IndexByte(creds, ':')
		if colon < 1 || colon == n-1 {
			return false
		}
		for _, c := range creds {
			if c < 0x20 || c >= 0x7f {
				return false
			}
		}
		return true
	})
}

// scheme matches a token of set after one of the words (an HTTP
// authorization scheme) and one or more blanks; the span is the token.
func scheme(dst []Span, s []byte, words []string, set *charset, ok func([]byte) bool) []Span {
	for _, w := range words {
		for i := 0; ; {
			j := bytes.Index(s[i:], []byte(w))
			if j < 0 {
				break
			}
			at := i + j
			i = at + 1
			if at > 0 && alnum[s[at-1]] {
				continue
			}
			b := at + len(w)
			blanks := 0
			for b < len(s) && (s[b] == ' ' || s[b] == '\t') {
				b++
				blanks++
			}
			if blanks == 0 {
				continue
			}
			n := run(s, b, set, 4096)
			if n > 4096 || !after(s, b+n) || !ok(s[b:b+n]) {
				continue
			}
			dst = append(dst, Span{b, b + n})
			i = b + n
		}
	}
	return dst
}

// privateKey matches a PEM private key block: "-----BEGIN … PRIVATE
// KEY-----" to its "-----END … PRIVATE KEY-----"; without an END (a key
// cut short), to the end of the base64 and header lines that follow.
// The block must hold 32 base64 characters at least: a BEGIN line alone,
// as code that looks for one holds it, is no key.
type privateKey struct{}

func (privateKey) Name() string      { return "private-key" }
func (privateKey) anchors() []string { return []string{"BEGIN "} }
func (privateKey) shortest() int     { return len("-----BEGIN PRIVATE KEY-----") + 32 }

var pemBody = newCharset("A-Za-z0-9+/= \t\r\n\\:,.-")

func (privateKey) Match(dst []Span, s []byte) []Span {
	const begin = "-----BEGIN "
	for i := 0; ; {
		j := bytes.Index(s[i:], []byte(begin))
		if j < 0 {
			return dst
		}
		at := i + j
		i = at + 1
		rest := s[at+len(begin):]
		k := bytes.Index(rest[:min(len(rest), 64)], []byte("-----"))
		if k < 0 {
			continue
		}
		label := rest[:k]
		if !bytes.HasSuffix(label, []byte("PRIVATE KEY")) && !bytes.HasSuffix(label, []byte("PRIVATE KEY BLOCK")) {
			continue
		}
		bodyAt := at + len(begin) + k + 5
		end := -1
		endLine := "-----END " + string(label) + "-----"
		if e := bytes.Index(s[bodyAt:], []byte(endLine)); e >= 0 {
			end = bodyAt + e
		} else {
			end = bodyAt + run(s, bodyAt, pemBody, len(s))
		}
		b64 := 0
		for _, c := range s[bodyAt:end] {
			if base64Std[c] {
				b64++
			}
		}
		if b64 < 32 {
			continue
		}
		if bytes.HasPrefix(s[end:], []byte(endLine)) {
			end += len(endLine)
		}
		dst = append(dst, Span{at, end})
		i = end
	}
}

// awsSecret matches the 40-character value of an AWS secret access key
// assignment, in the forms of credentials files, environment variables,
// JSON and YAML.
var awsSecret = anchoredRegexp{&regexpMatcher{name: "aws-secret",
	re:        regexp.MustCompile(`(?i)secret_?access_?key["']?\s*[:=]>?\s*["']?(?P<secret>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`),
	group:     1,
	lits:      []string{"_access", "_ACCESS", "_Access", "taccess", "tAccess", "TACCESS"},
	prefilter: true,
	min:       len("secret_access_key=") + 40,
}}
