package redact

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// regexpMatcher matches a regular expression: the whole match, or only
// its group when group > 0. Every match holds one of lits (when set;
// letters in either case when fold), which the Redactor's gate looks for
// (anchors); with prefilter, Match itself skips a string that holds none
// (exact case).
type regexpMatcher struct {
	name      string
	re        *regexp.Regexp
	group     int
	lits      []string
	fold      bool
	prefilter bool
	min       int
}

func (m *regexpMatcher) Name() string  { return m.name }
func (m *regexpMatcher) shortest() int { return m.min }

func (m *regexpMatcher) Match(dst []Span, s []byte) []Span {
	if m.prefilter {
		found := false
		for _, p := range m.lits {
			if bytes.Contains(s, []byte(p)) {
				found = true
				break
			}
		}
		if !found {
			return dst
		}
	}
	for _, ix := range m.re.FindAllSubmatchIndex(s, -1) {
		a, b := ix[2*m.group], ix[2*m.group+1]
		if a >= 0 && b > a {
			dst = append(dst, Span{a, b})
		}
	}
	return dst
}

// anchoredRegexp is a regexpMatcher whose literals are its anchors.
type anchoredRegexp struct{ *regexpMatcher }

func (m anchoredRegexp) anchors() []string { return m.lits }
func (m anchoredRegexp) folded() bool      { return m.fold }

// Regexp returns a Matcher of the regular expression expr (Go's RE2
// syntax, as package regexp takes it), named name: every match is
// redacted; when expr has a group named "secret" (?P<secret>…), only
// what that group matched, so that `password=(?P<secret>\S+)` keeps the
// word password. Matches are found in each string value on its own
// (^ and $ are its start and end; (?m) makes them lines'). A pattern that
// begins with a literal of three ASCII characters or more (sk-…,
// password=…, \bghp_…; (?i)password… by its "word") is looked for only in
// values that hold it, as the ready matchers are; one that does not
// (\b[A-Z0-9]{20}\b)
// runs over every string value, at the speed of package regexp. A
// pattern that does not compile is ErrPattern; the error names what is
// wrong, not the pattern (which may hold the secret it is meant to
// find).
func Regexp(name, expr string) (Matcher, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, errclass.Mark(errors.Newf("redact: pattern %s: %s", errors.Safe(name), errors.Safe(string(se.Code))), ErrPattern)
		}
		return nil, errclass.Mark(errors.Newf("redact: pattern %s does not compile", errors.Safe(name)), ErrPattern)
	}
	m := &regexpMatcher{name: name, re: re}
	if i := re.SubexpIndex("secret"); i > 0 {
		m.group = i
	}
	lit, fold := leadingLiteral(expr)
	if fold {
		lit = foldSafe(lit)
	}
	if len(lit) >= 3 {
		m.lits, m.fold = []string{lit}, fold
		return anchoredRegexp{m}, nil
	}
	return m, nil
}

// foldSafe returns the longest run of lit without k or s: (?i)k also
// matches the Kelvin sign and (?i)s the long s, whose UTF-8 is two or
// three bytes, so a case-folded anchor holds neither.
func foldSafe(lit string) string {
	best, at := "", 0
	for i := 0; i <= len(lit); i++ {
		if i == len(lit) || lit[i]|0x20 == 'k' || lit[i]|0x20 == 's' {
			if i-at > len(best) {
				best = lit[at:i]
			}
			at = i + 1
		}
	}
	return best
}

// leadingLiteral returns the ASCII literal every match of expr begins
// with (after zero-width assertions), and whether it is matched in
// either case; "" when there is none.
func leadingLiteral(expr string) (string, bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return "", false
	}
	re = re.Simplify()
	for {
		switch re.Op {
		case syntax.OpCapture:
			re = re.Sub[0]
			continue
		case syntax.OpConcat:
			i := 0
			for i < len(re.Sub) && zeroWidth(re.Sub[i].Op) {
				i++
			}
			if i == len(re.Sub) {
				return "", false
			}
			re = re.Sub[i]
			continue
		case syntax.OpLiteral:
			var b []byte
			for _, r := range re.Rune {
				if r >= utf8.RuneSelf {
					break
				}
				b = append(b, byte(r))
			}
			return string(b), re.Flags&syntax.FoldCase != 0
		}
		return "", false
	}
}

func zeroWidth(op syntax.Op) bool {
	switch op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpEmptyMatch:
		return true
	}
	return false
}
