package codec_test

import (
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
)

// TestAt: each layer adds only the place the error does not name yet, so
// that a session and a seq are said once however many layers pass an
// error up, and the error's class survives.
func TestAt(t *testing.T) {
	leaf := func() error { return errors.Mark(errors.New("codec: bad thing"), codec.ErrInvalid) }
	tests := []struct {
		name string
		err  error
		want string
		// invalid says the error is marked codec.ErrInvalid.
		invalid bool
	}{
		{"at adds both", codec.At(leaf(), "s", 3), `session "s" seq 3: codec: bad thing`, true},
		{"unknown seq", codec.At(leaf(), "s", -1), `session "s": codec: bad thing`, true},
		{"seq once", codec.At(codec.AtSeq(leaf(), 3), "s", 3), `session "s": seq 3: codec: bad thing`, true},
		{"twice the same layer", codec.At(codec.At(leaf(), "s", 3), "s", 3), `session "s" seq 3: codec: bad thing`, true},
		{"AtSeq twice", codec.AtSeq(codec.AtSeq(leaf(), 3), 3), `seq 3: codec: bad thing`, true},
		{"leaf names its seq", codec.At(codec.NamesSeq(errors.New("codec: seq 4 where 3 was expected")), "s", 3),
			`session "s": codec: seq 4 where 3 was expected`, false},
		{"leaf names both", codec.At(codec.NamesSession(codec.NamesSeq(errors.New("codec: seq 4 of session \"s\""))), "s", 4),
			`codec: seq 4 of session "s"`, false},
		{"marks survive a barrier", codec.At(codec.KeepPlace(codec.AtSeq(leaf(), 3), errors.Handled(codec.AtSeq(leaf(), 3))), "s", 3),
			`session "s": seq 3: codec: bad thing`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q; want %q", got, tt.want)
			}
			if errors.Is(tt.err, codec.ErrInvalid) != tt.invalid {
				t.Errorf("errors.Is(%v, ErrInvalid) = %v; want %v", tt.err, !tt.invalid, tt.invalid)
			}
		})
	}
	if codec.At(nil, "s", 1) != nil || codec.AtSeq(nil, 1) != nil || codec.NamesSeq(nil) != nil || codec.NamesSession(nil) != nil {
		t.Error("a nil error must stay nil")
	}
}
