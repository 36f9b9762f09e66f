package redact_test

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/redact"
)

// gen makes real-looking (generated, never real) secrets from a fixed
// seed.
type gen struct{ r *rand.Rand }

func newGen(seed uint64) *gen { return &gen{rand.New(rand.NewPCG(seed, seed^0x5eed))} }

const (
	base62   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b64url   = base62 + "_-"
	hexLower = "0123456789abcdef"
	upperDig = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567" // AWS key ids: base32
	letters  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	awsChars = base62 + "/+"
	digits   = "0123456789"
)

func (g *gen) of(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[g.r.IntN(len(set))]
	}
	return string(b)
}

func (g *gen) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.UintN(256))
	}
	return b
}

// pem makes a PEM block of label with lines of generated base64.
func (g *gen) pem(label string, lines int, nl string) string {
	var b strings.Builder
	b.WriteString("-----BEGIN " + label + "-----" + nl)
	for range lines {
		b.WriteString(base64.StdEncoding.EncodeToString(g.bytes(48)) + nl)
	}
	b.WriteString("-----END " + label + "-----")
	return b.String()
}

func (g *gen) jwt() string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
		enc.EncodeToString([]byte(`{"sub":"`+g.of(digits, 10)+`","name":"Test User","iat":1516239022}`)) + "." +
		enc.EncodeToString(g.bytes(32))
}

// secretSamples are generated secrets of each shape, by the matcher that
// must find them; each is redacted whole unless redacted says which part.
type secretSample struct {
	matcher, text, secret string
}

func secretSamples() []secretSample {
	g := newGen(1)
	s := func(matcher, secret string) secretSample {
		return secretSample{matcher: matcher, text: "key " + secret + " end", secret: secret}
	}
	in := func(matcher, text, secret string) secretSample {
		return secretSample{matcher: matcher, text: text, secret: secret}
	}
	awsSecret := g.of(awsChars, 40)
	bearerTok := g.of(b64url, 40)
	jwtTok := g.jwt()
	basic := base64.StdEncoding.EncodeToString([]byte("admin:" + g.of(base62, 12)))
	return []secretSample{
		s("openai", "sk-"+g.of(base62, 48)),
		s("openai", "sk-"+g.of(base62, 20)+"T3BlbkFJ"+g.of(base62, 20)),
		s("openai", "sk-proj-"+g.of(b64url, 156)),
		s("openai", "sk-svcacct-"+g.of(b64url, 120)),
		s("openai", "sk-admin-"+g.of(b64url, 120)),
		s("openai", "sk-"+g.of(hexLower, 32)),       // DeepSeek
		s("openai", "sk-or-v1-"+g.of(hexLower, 64)), // OpenRouter
		s("anthropic", "sk-ant-api03-"+g.of(b64url, 93)+"AA"),
		s("anthropic", "sk-ant-admin01-"+g.of(b64url, 93)+"AA"),
		s("anthropic", "sk-ant-oat01-"+g.of(b64url, 93)+"AA"),
		s("google", "AIza"+g.of(b64url, 35)),
		s("github", "ghp_"+g.of(base62, 36)),
		s("github", "gho_"+g.of(base62, 36)),
		s("github", "ghs_"+g.of(base62, 36)),
		s("github", "github_pat_"+g.of(base62, 22)+"_"+g.of(base62, 59)),
		s("gitlab", "glpat-"+g.of(b64url, 20)),
		s("slack", "xoxb-"+g.of(digits, 12)+"-"+g.of(digits, 13)+"-"+g.of(base62, 24)),
		s("slack", "xoxp-"+g.of(digits, 12)+"-"+g.of(digits, 12)+"-"+g.of(digits, 13)+"-"+g.of(hexLower, 32)),
		s("slack", "xapp-1-A"+g.of(upperDig, 10)+"-"+g.of(digits, 13)+"-"+g.of(hexLower, 64)),
		s("stripe", "sk_live_"+g.of(base62, 99)),
		s("stripe", "rk_test_"+g.of(base62, 24)),
		s("stripe", "whsec_"+g.of(base62, 32)),
		s("huggingface", "hf_"+g.of(letters, 34)),
		s("npm", "npm_"+g.of(base62, 36)),
		s("aws-key-id", "AKIA"+g.of(upperDig, 16)),
		s("aws-key-id", "ASIA"+g.of(upperDig, 16)),
		s("aws-key-id", "AKIAIOSFODNN7EXAMPLE"),
		in("aws-secret", "[default]\nregion = eu-west-1\naws_secret_access_key = "+awsSecret+"\n", awsSecret),
		in("aws-secret", "export AWS_SECRET_ACCESS_KEY="+awsSecret, awsSecret),
		in("aws-secret", `{"Credentials": {"SecretAccessKey": "`+awsSecret+`", "Expiration": "2026-12-02T00:00:00Z"}}`, awsSecret),
		in("aws-secret", "secretAccessKey: '"+awsSecret+"'", awsSecret),
		s("jwt", jwtTok),
		in("bearer", "curl -H 'Authorization: Bearer "+bearerTok+"' https://api.example.com", bearerTok),
		in("bearer", "authorization: bearer "+bearerTok, bearerTok),
		in("bearer", "Authorization: Bearer "+jwtTok, jwtTok),
		in("basic-auth", "Authorization: Basic "+basic, basic),
		in("private-key", "the key:\n"+g.pem("RSA PRIVATE KEY", 12, "\n")+"\ndone", g.pem("RSA PRIVATE KEY", 12, "\n")),
		s("private-key", g.pem("OPENSSH PRIVATE KEY", 6, "\n")),
		s("private-key", g.pem("EC PRIVATE KEY", 3, "\r\n")),
		s("private-key", g.pem("PRIVATE KEY", 8, "\n")),
		s("private-key", g.pem("ENCRYPTED PRIVATE KEY", 8, "\n")),
		s("private-key", g.pem("PGP PRIVATE KEY BLOCK", 8, "\n")),
		s("private-key", g.pem("RSA PRIVATE KEY", 4, `\n`)), // a key inside JSON text, escaped
	}
}

// The pem samples above are drawn twice from the generator; rebuild the
// "in" sample's secret from its text instead of trusting the draw order.
func fixPEM(s secretSample) secretSample {
	if s.matcher == "private-key" && strings.HasPrefix(s.text, "the key:\n") {
		s.secret = strings.TrimSuffix(strings.TrimPrefix(s.text, "the key:\n"), "\ndone")
	}
	return s
}

// TestSecrets: every generated secret is found by its matcher and by
// Secrets, whole, once, and the text around it is kept.
func TestSecrets(t *testing.T) {
	byName := map[string][]redact.Matcher{}
	for _, m := range redact.SecretMatchers() {
		byName[m.Name()] = append(byName[m.Name()], m)
	}
	for i, s := range secretSamples() {
		s = fixPEM(s)
		want := strings.Replace(s.text, s.secret, redact.Marker, 1)
		if want == s.text {
			t.Fatalf("sample %d (%s): the secret is not in its text", i, s.matcher)
		}
		got, n := redact.Secrets().Text([]byte(s.text))
		if string(got) != want || n != 1 {
			t.Errorf("sample %d (%s): Secrets gave %d spans:\n%q\nwant\n%q", i, s.matcher, n, got, want)
		}
		ms := byName[s.matcher]
		if len(ms) == 0 {
			t.Fatalf("no matcher %q", s.matcher)
		}
		if got, n := redact.New(ms...).Text([]byte(s.text)); string(got) != want || n != 1 {
			t.Errorf("sample %d: matcher %s alone gave %d spans: %q", i, s.matcher, n, got)
		}
	}
}

// TestNearMisses: text shaped like a secret but not one is left alone.
func TestNearMisses(t *testing.T) {
	g := newGen(2)
	for _, s := range []string{
		"task-management-system-for-large-teams-and-organisations",
		"sk-this-is-a-very-long-kebab-case-identifier-name-indeed",
		"sk-learn is scikit-learn",
		"disk-" + g.of(hexLower, 32),
		"mask-" + g.of(base62, 48),
		"sk-" + g.of(base62, 20), // too short
		"AIza" + g.of(b64url, 34),
		"AIza" + g.of(b64url, 36),
		"ghp_" + g.of(base62, 35),
		"xghp_" + g.of(base62, 36),
		"AKIA" + g.of(upperDig, 15),
		"AKIA" + g.of(upperDig, 16) + "x",
		"AKIAIOSFODNN7EXAMPLEX",
		"the bearer of bad news, and the Bearer token, and Bearer <token>, Bearer ${TOKEN}",
		"Authorization: Bearer YOUR_API_KEY_GOES_HERE_PLEASE",
		"basic usage: see Basic authentication, Basic dGVzdA== (no colon)",
		`if strings.HasPrefix(pem, "-----BEGIN RSA PRIVATE KEY-----") {`,
		"-----BEGIN PUBLIC KEY-----\n" + base64.StdEncoding.EncodeToString(g.bytes(96)) + "\n-----END PUBLIC KEY-----",
		"-----BEGIN CERTIFICATE-----\n" + base64.StdEncoding.EncodeToString(g.bytes(96)) + "\n-----END CERTIFICATE-----",
		"-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
		"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
		"xoxb-your-token-here-for-the-bot-user",
		"sk_live_xxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		"hf_hub_download_function_for_models",
		"npm_config_cache_directory_is_not_a_token",
		"aws_secret_access_key = YOUR_SECRET_ACCESS_KEY",
		"aws_secret_access_key = " + g.of(awsChars, 39),
		g.of(hexLower, 64), // a SHA-256
		"123e4567-e89b-12d3-a456-426614174000",
		base64.StdEncoding.EncodeToString(g.bytes(300)),
		"toolu_01" + g.of(base62, 22), "call_" + g.of(base62, 24),
	} {
		if got, n := redact.Secrets().Text([]byte(s)); n != 0 {
			t.Errorf("%q: %d spans redacted: %q", s, n, got)
		}
	}
}

// TestTextFixedPoint: redacting twice is redacting once, markers already
// there are never matched, and the count is the markers added.
func TestTextFixedPoint(t *testing.T) {
	g := newGen(3)
	key := "sk-ant-api03-" + g.of(b64url, 93) + "AA"
	lit := func(expr string) *redact.Redactor {
		m, err := redact.Regexp("test", expr)
		if err != nil {
			t.Fatal(err)
		}
		return redact.New(m)
	}
	for _, c := range []struct {
		name string
		r    *redact.Redactor
		in   string
		want string
		n    int
	}{
		{"none", redact.Secrets(), "nothing here", "nothing here", 0},
		{"two keys", redact.Secrets(), key + " and " + key, "[REDACTED] and [REDACTED]", 2},
		{"adjacent markers kept", redact.Secrets(), "[REDACTED] " + key, "[REDACTED] [REDACTED]", 1},
		{"marker never matched", lit(`RED`), "[REDACTED] RED", "[REDACTED] [REDACTED]", 1},
		{"bracket", lit(`\]`), "a]b [REDACTED]", "a[REDACTED]b [REDACTED]", 1},
		{"what a span leaves", lit(`x|\bfoo`), "xfoo bar", "[REDACTED] bar", 1},
		{"touching spans are one", lit(`ab|bc`), "abc", "[REDACTED]c", 1},
		{"overlapping matchers", redact.New(mustRegexp(t, `a+`), mustRegexp(t, `ab`)), "aaab", "[REDACTED]", 1},
		{"empty matches ignored", lit(`z*`), "abc", "abc", 0},
		{"secret group", lit(`password=(?P<secret>\S+)`), "password=hunter2 ok", "password=[REDACTED] ok", 1},
		{"whole characters", redact.New(fixed{{1, 2}}), "é!", "[REDACTED]!", 1},
		{"whole characters, WTF-8", redact.New(fixed{{2, 3}}), "a\xed\xa0\x80b", "a[REDACTED]b", 1},
		{"spans outside the string ignored", redact.New(fixed{{-1, 2}, {3, 9}, {2, 2}}), "abc", "abc", 0},
		{"whole characters from a byte class", lit(`[\x{FFFD}]`), "a\xed\xa0\x80b", "a[REDACTED]b", 1},
	} {
		got, n := c.r.Text([]byte(c.in))
		if string(got) != c.want || n != c.n {
			t.Errorf("%s: got %q (%d), want %q (%d)", c.name, got, n, c.want, c.n)
		}
		again, n2 := c.r.Text(got)
		if string(again) != string(got) || n2 != 0 {
			t.Errorf("%s: redacting again changed %q to %q (%d)", c.name, got, again, n2)
		}
		if added := strings.Count(string(got), redact.Marker) - strings.Count(c.in, redact.Marker); added != n {
			t.Errorf("%s: %d markers added, count %d", c.name, added, n)
		}
	}
}

func mustRegexp(t *testing.T, expr string) redact.Matcher {
	t.Helper()
	m, err := redact.Regexp(expr, expr)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fixed is a Matcher that finds the same spans in every string.
type fixed []redact.Span

func (fixed) Name() string { return "fixed" }
func (f fixed) Match(dst []redact.Span, s []byte) []redact.Span {
	if strings.Contains(string(s), redact.Marker) {
		return dst
	}
	return append(dst, f...)
}

// TestRegexpGate: a pattern's leading literal gates the values it runs
// on, in either case with (?i) (the Kelvin sign and the long s, which
// (?i)k and (?i)s match, included); the gate never hides a match.
func TestRegexpGate(t *testing.T) {
	for _, c := range []struct {
		expr, in, want string
	}{
		{`sk-[a-z]{4}`, "a sk-abcd b", "a [REDACTED] b"},
		{`\bghp_\w+`, "x ghp_abc", "x [REDACTED]"},
		{`(?i)password=\S+`, "PassWord=x and password=y", "[REDACTED] and [REDACTED]"},
		{`(?i)password=\S+`, "pa\u017fsword=x", "[REDACTED]"},
		{`(?i)kelvin \d+`, "\u212aelvin 3", "[REDACTED]"},
		{`(?i)task`, "TA\u017fK \u212a", "[REDACTED] \u212a"},
		{`(?P<secret>abc)def`, "abcdef", "[REDACTED]def"},
	} {
		r := redact.New(mustRegexp(t, c.expr))
		got, _ := r.Text([]byte(c.in))
		if string(got) != c.want {
			t.Errorf("%s on %q: %q, want %q", c.expr, c.in, got, c.want)
		}
		v, _, err := r.Value(codec.Array(codec.AppendString(nil, c.in)))
		if err != nil {
			t.Fatal(err)
		}
		if want := codec.Array(codec.AppendString(nil, c.want)); string(v) != string(want) {
			t.Errorf("%s on %q as a value: %x", c.expr, c.in, v)
		}
	}
}
