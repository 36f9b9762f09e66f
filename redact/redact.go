package redact

import (
	"bytes"
	"slices"

	"github.com/cockroachdb/errors"
)

// Marker is what replaces every redacted span (docs/forgetting.md#redaction).
const Marker = "[REDACTED]"

// ErrPattern marks a pattern that cannot be used: a regular expression
// that does not compile.
var ErrPattern = errors.New("redact: bad pattern")

// Span is a range [Start, End) of the bytes of a string.
type Span struct{ Start, End int }

// Matcher finds what to redact in one string.
type Matcher interface {
	// Name names the matcher in reports ("openai", "match 1").
	Name() string
	// Match appends to dst the spans of s to redact, and returns it.
	// Spans may come in any order and overlap; empty ones are ignored.
	// s is a string value as stored (UTF-8, or WTF-8 for JSON's lone
	// \udxxx escapes) and must not be retained or modified.
	Match(dst []Span, s []byte) []Span
}

// Redactor replaces what its matchers find inside string values with
// Marker. It never changes a key, a number, a boolean, a null, the
// nesting, or a string value under a key that names the schema (see
// Structural). Its methods return their input itself when nothing was
// redacted, and never return or log the text they matched. A Redactor is
// safe for concurrent use.
type Redactor struct {
	ms []Matcher
	// minLen: a string shorter than it cannot hold a match of any
	// matcher (0 when some matcher does not say).
	minLen int
	// grams[k] maps a byte to the anchors (bits, at most 64) that have
	// it at offset k (every byte, past an anchor's end); uses[i] are the
	// anchors of matcher i. A matcher without anchors, or with one past
	// the 64th, always runs (always[i]; anyAlways).
	grams     [gramLen][256]uint64
	uses      []uint64
	always    []bool
	anyAlways bool
}

// gramLen is how many bytes of an anchor the gate compares.
const gramLen = 6

// shortest is implemented by matchers that know the length of their
// shortest match: shorter strings are not looked at.
type shortest interface{ shortest() int }

// anchored is implemented by matchers that look only where one of their
// anchors (literals of three bytes or more) is: a string that holds none
// of them (by their first six bytes) is not given to the matcher.
type anchored interface{ anchors() []string }

// folded is implemented by anchored matchers whose anchors' letters
// match in either case.
type folded interface{ folded() bool }

// New returns a Redactor of the matchers ms, applied together: the spans
// any of them finds are redacted, and spans that overlap or touch are
// one.
func New(ms ...Matcher) *Redactor {
	r := &Redactor{ms: slices.Clone(ms), uses: make([]uint64, len(ms)), always: make([]bool, len(ms))}
	bit := 0
	for i, m := range ms {
		a, ok := m.(anchored)
		if !ok || bit+len(a.anchors()) > 64 {
			r.always[i], r.anyAlways = true, true
			continue
		}
		f, _ := m.(folded)
		fold := f != nil && f.folded()
		for _, lit := range a.anchors() {
			for k := range r.grams {
				if k >= len(lit) {
					for c := range r.grams[k] {
						r.grams[k][c] |= 1 << bit
					}
					continue
				}
				c := lit[k]
				r.grams[k][c] |= 1 << bit
				if fold && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
					r.grams[k][c^0x20] |= 1 << bit
				}
			}
			r.uses[i] |= 1 << bit
			bit++
		}
	}
	for i, m := range ms {
		s, ok := m.(shortest)
		if !ok {
			r.minLen = 0
			break
		}
		if i == 0 || s.shortest() < r.minLen {
			r.minLen = s.shortest()
		}
	}
	return r
}

// Matchers returns the redactor's matchers, in the order given to New.
func (r *Redactor) Matchers() []Matcher { return slices.Clone(r.ms) }

// Text returns s with every span the matchers find replaced by Marker,
// and the number of spans replaced; s itself when none.
//
// The result is a fixed point: redacting it again changes nothing. Text
// that is already Marker is never matched (each piece of s between
// markers is matched on its own), and each piece a replacement leaves
// is matched again, until none holds a match. So redacting twice is
// redacting once, and the count is exactly the number of markers added.
// Spans are widened to whole characters, so that no part of a character
// is left.
func (r *Redactor) Text(s []byte) ([]byte, int) {
	spans := r.find(nil, s)
	if len(spans) == 0 {
		return s, 0
	}
	return replace(nil, s, spans), len(spans)
}

// find appends to dst the spans to replace in s: sorted, merged where
// they overlap or touch, on whole characters, never inside an existing
// Marker. Each piece of s between markers is matched, then each piece
// the spans found leave, until none holds a match.
func (r *Redactor) find(dst []Span, s []byte) []Span {
	if len(s) < r.minLen || len(r.ms) == 0 {
		return dst
	}
	first := len(dst)
	var stack [8]Span
	work := stack[:0]
	lo := 0
	for {
		i := bytes.Index(s[lo:], []byte(Marker))
		if i < 0 {
			break
		}
		if i > 0 {
			work = append(work, Span{lo, lo + i})
		}
		lo += i + len(Marker)
	}
	if lo < len(s) {
		work = append(work, Span{lo, len(s)})
	}
	for len(work) > 0 {
		w := work[len(work)-1]
		work = work[:len(work)-1]
		n := len(dst)
		dst = r.matchPiece(dst, s, w)
		at := w.Start
		for _, sp := range dst[n:] {
			if sp.Start > at {
				work = append(work, Span{at, sp.Start})
			}
			at = sp.End
		}
		if at > w.Start && at < w.End {
			work = append(work, Span{at, w.End})
		}
	}
	return merge(dst, first)
}

// matchPiece appends the spans every matcher finds in the piece w of s,
// made absolute, widened to whole characters within w, sorted and
// merged (touching spans are one).
func (r *Redactor) matchPiece(dst []Span, s []byte, w Span) []Span {
	if w.End-w.Start < r.minLen {
		return dst
	}
	n := len(dst)
	piece := s[w.Start:w.End]
	anchors := r.candidates(piece)
	for i, m := range r.ms {
		if !r.always[i] && anchors&r.uses[i] == 0 {
			continue
		}
		k := len(dst)
		dst = m.Match(dst, piece)
		// Keep what is inside the piece and not empty, made absolute.
		j := k
		for _, sp := range dst[k:] {
			if sp.Start < 0 || sp.End > len(piece) || sp.Start >= sp.End {
				continue
			}
			a, b := w.Start+sp.Start, w.Start+sp.End
			for a > w.Start && continuation(s[a]) {
				a--
			}
			for b < w.End && continuation(s[b]) {
				b++
			}
			dst[j] = Span{a, b}
			j++
		}
		dst = dst[:j]
	}
	return merge(dst, n)
}

// candidates returns the anchors (bits) that begin somewhere in piece,
// by their first gramLen bytes (bytes past the piece's end read as 0,
// which no anchor holds). Every anchor has three bytes or more, so the
// loop looks at pairs of bytes first, and further only where a pair
// begins an anchor.
func (r *Redactor) candidates(piece []byte) uint64 {
	var found uint64
	g := &r.grams
	n := len(piece)
	if n < 2 {
		return 0
	}
	prev := g[0][piece[0]]
	for i := 1; i < n; i++ {
		c := piece[i]
		m := prev & g[1][c]
		prev = g[0][c]
		if m == 0 {
			continue
		}
		for k := 2; k < gramLen && m != 0; k++ {
			var b byte
			if at := i - 1 + k; at < n {
				b = piece[at]
			}
			m &= g[k][b]
		}
		found |= m
	}
	return found
}

// blind reports whether no matcher can match anywhere in b: every one
// is anchored and no anchor begins in b. Bytes around a string add
// candidates, never remove one, so b may be a whole value.
func (r *Redactor) blind(b []byte) bool {
	return !r.anyAlways && r.candidates(b) == 0
}

// continuation reports whether c continues a UTF-8 (or WTF-8) sequence.
func continuation(c byte) bool { return c&0xc0 == 0x80 }

// merge sorts dst[from:] and merges the spans that overlap or touch.
func merge(dst []Span, from int) []Span {
	tail := dst[from:]
	if len(tail) < 2 {
		return dst
	}
	slices.SortFunc(tail, func(a, b Span) int { return a.Start - b.Start })
	j := 0
	for _, sp := range tail[1:] {
		if sp.Start <= tail[j].End {
			tail[j].End = max(tail[j].End, sp.End)
			continue
		}
		j++
		tail[j] = sp
	}
	return dst[:from+j+1]
}

// replace appends s to dst with each span (sorted, disjoint) replaced by
// Marker.
func replace(dst, s []byte, spans []Span) []byte {
	at := 0
	for _, sp := range spans {
		dst = append(dst, s[at:sp.Start]...)
		dst = append(dst, Marker...)
		at = sp.End
	}
	return append(dst, s[at:]...)
}
