package boltfmt

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
)

// sampleOps are the writes of one group commit: a creation and appends.
func sampleOps() []Op {
	return []Op{
		{ID: "new", HeaderRec: []byte("header-record"), HeadRec: []byte("head-0")},
		{ID: "old", First: 41, Recs: [][]byte{[]byte("r41"), []byte("r42")}, HeadRec: []byte("head-43")},
		{ID: "x", First: 0, Recs: [][]byte{bytes.Repeat([]byte{7}, 300)}, HeadRec: []byte("head-1")},
	}
}

func TestWALEntryRoundTrip(t *testing.T) {
	ops := sampleOps()
	p := EncodeEntry(nil, ops)
	e, err := DecodeEntry(9, p)
	if err != nil {
		t.Fatal(err)
	}
	if e.LSN != 9 || len(e.Ops) != len(ops) {
		t.Fatalf("decoded lsn %d with %d ops", e.LSN, len(e.Ops))
	}
	var size int64
	for i := range ops {
		if !reflect.DeepEqual(e.Ops[i], ops[i]) {
			t.Errorf("op %d = %+v, want %+v", i, e.Ops[i], ops[i])
		}
		size += ops[i].Size()
	}
	if e.Size != size {
		t.Errorf("size %d, want %d", e.Size, size)
	}
}

// TestWALEntryDamage: every truncation and every single-byte change of
// an entry decodes to an error or to a well-formed entry, never a panic;
// truncations are always errors. (The log's CRC catches damage first;
// this is the second line.)
func TestWALEntryDamage(t *testing.T) {
	p := EncodeEntry(nil, sampleOps())
	for n := 0; n < len(p); n++ {
		if _, err := DecodeEntry(1, p[:n]); err == nil {
			t.Errorf("a truncation to %d bytes decoded", n)
		}
	}
	refused := 0
	for i := range p {
		q := bytes.Clone(p)
		q[i] ^= 0x5a
		if _, err := DecodeEntry(1, q); err != nil {
			refused++
			if !errors.IsAny(err, codec.ErrCorrupt, codec.ErrUnsupported) {
				t.Fatalf("byte %d: %v is neither codec.ErrCorrupt nor codec.ErrUnsupported", i, err)
			}
		}
	}
	if refused == 0 {
		t.Fatal("no changed byte was refused")
	}
}

func FuzzWALEntry(f *testing.F) {
	f.Add(EncodeEntry(nil, sampleOps()))
	f.Add([]byte{entryVersion, 1, opAppend, 1, 'a', 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, p []byte) {
		e, err := DecodeEntry(1, p)
		if err != nil {
			return
		}
		// What decodes re-encodes to the same bytes.
		if q := EncodeEntry(nil, e.Ops); !bytes.Equal(p, q) {
			t.Fatalf("decoded %x, re-encoded %x", p, q)
		}
	})
}
