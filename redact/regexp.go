package redact

import (
	"bytes"
	"regexp"
	"regexp/syntax"

	"github.com/cockroachdb/errors"
)

// regexpMatcher matches a regular expression: the whole match, or only
// its group when group > 0. A string that holds none of prefilter (when
// set) is not searched.
type regexpMatcher struct {
	name      string
	re        *regexp.Regexp
	group     int
	prefilter []string
	min       int
}

func (m *regexpMatcher) Name() string  { return m.name }
func (m *regexpMatcher) shortest() int { return m.min }

func (m *regexpMatcher) Match(dst []Span, s []byte) []Span {
	if m.prefilter != nil {
		found := false
		for _, p := range m.prefilter {
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

// Regexp returns a Matcher of the regular expression expr (Go's RE2
// syntax, as package regexp takes it), named name: every match is
// redacted; when expr has a group named "secret" (?P<secret>…), only
// what that group matched, so that `password=(?P<secret>\S+)` keeps the
// word password. Matches are found in each string value on its own
// (^ and $ are its start and end; (?m) makes them lines'). A pattern that
// does not compile is ErrPattern; the error names what is wrong, not the
// pattern (which may hold the secret it is meant to find).
func Regexp(name, expr string) (Matcher, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, errors.Mark(errors.Newf("redact: pattern %s: %s", errors.Safe(name), errors.Safe(string(se.Code))), ErrPattern)
		}
		return nil, errors.Mark(errors.Newf("redact: pattern %s does not compile", errors.Safe(name)), ErrPattern)
	}
	m := &regexpMatcher{name: name, re: re}
	if i := re.SubexpIndex("secret"); i > 0 {
		m.group = i
	}
	return m, nil
}

// prefiltered is a regexpMatcher with a prefilter: its literals are its
// anchors.
type prefiltered struct{ *regexpMatcher }

func (m prefiltered) anchors() []string { return m.prefilter }
