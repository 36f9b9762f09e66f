package layout_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/sessionlog/sessionlog/eventlog/layout"
)

func TestSeqKey(t *testing.T) {
	tests := []struct {
		key  []byte
		seq  int64
		ok   bool
		name string
	}{
		{name: "zero", key: []byte{0, 0, 0, 0, 0, 0, 0, 0}, seq: 0, ok: true},
		{name: "order", key: []byte{0, 0, 0, 0, 0, 0, 1, 2}, seq: 258, ok: true},
		{name: "max", key: []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, seq: math.MaxInt64, ok: true},
		{name: "out of range", key: []byte{0x80, 0, 0, 0, 0, 0, 0, 0}},
		{name: "short", key: []byte{0, 1}},
		{name: "long", key: make([]byte, 9)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq, ok := layout.ParseSeqKey(tt.key)
			if ok != tt.ok || seq != tt.seq {
				t.Fatalf("ParseSeqKey(%x) = %d, %v; want %d, %v", tt.key, seq, ok, tt.seq, tt.ok)
			}
			if ok && !bytes.Equal(layout.AppendSeqKey(nil, seq), tt.key) {
				t.Fatalf("AppendSeqKey(%d) = %x, want %x", seq, layout.AppendSeqKey(nil, seq), tt.key)
			}
		})
	}
}
