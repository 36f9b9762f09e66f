package codec

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
)

// validString is validWTF8 with a fast path for ASCII, which nearly every
// key and most text is: eight bytes at a time, then byte by byte, and the
// general check only from the first non-ASCII byte on (every byte before
// it is a whole character, so validity is unchanged).
func validString(s []byte) bool {
	for len(s) >= 8 {
		if binary.LittleEndian.Uint64(s)&0x8080808080808080 != 0 {
			return validWTF8(s)
		}
		s = s[8:]
	}
	for i, c := range s {
		if c >= utf8.RuneSelf {
			return validWTF8(s[i:])
		}
	}
	return true
}

// smallMembers is the most pairs whose keys a smallKeys compares
// pairwise; past them it moves its keys into a keySet.
const smallMembers = 8

// smallKeys detects a repeated key in a map. Nearly every map has at most
// smallMembers pairs: their keys are compared pairwise by their bytes,
// with little to clear and nothing to hash (a keySet on the stack is 512
// bytes to clear per map). A larger map's keys go into a keySet, made on
// its ninth key.
type smallKeys struct {
	n   int
	at  [smallMembers][2]int
	big *keySet
}

// add records the key b[start:end] and reports whether it is new.
func (m *smallKeys) add(b []byte, start, end int) bool {
	if m.big != nil {
		return m.big.add(b, start, end)
	}
	key := b[start:end]
	for _, s := range m.at[:m.n] {
		if s[1]-s[0] == len(key) && string(b[s[0]:s[1]]) == string(key) {
			return false
		}
	}
	if m.n == smallMembers {
		m.big = new(keySet)
		for _, s := range m.at {
			m.big.add(b, s[0], s[1])
		}
		return m.big.add(b, start, end)
	}
	m.at[m.n] = [2]int{start, end}
	m.n++
	return true
}

// errStrict is how a strict Fields refuses bytes that ValidateValue would
// refuse. DecodeStoredEvent never returns it: it answers every refusal
// with the two-step path's own error.
var errStrict = errors.New("codec: not a valid stored value")

// strictObject reads the n pairs of a map whose header was read, as
// Object does, checking each key as ValidateValue does.
func (f Fields) strictObject(n int, fn func(k []byte) error) error {
	r := f.r
	if r.depth <= 0 {
		return errStrict
	}
	r.depth--
	var keys smallKeys
	for i := 0; i < n; i++ {
		start, err := r.member()
		if err != nil || !keys.add(r.b, start, r.off) {
			return errStrict
		}
		if err := fn(r.b[start:r.off]); err != nil {
			return err
		}
	}
	r.depth++
	return nil
}
