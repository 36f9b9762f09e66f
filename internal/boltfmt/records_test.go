package boltfmt

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/sessionlog/sessionlog/codec"
)

func TestSeqKey(t *testing.T) {
	tests := []struct {
		name string
		key  []byte
		seq  int64
		ok   bool
	}{
		{name: "zero", key: SeqKey(0), seq: 0, ok: true},
		{name: "one", key: []byte{0, 0, 0, 0, 0, 0, 0, 1}, seq: 1, ok: true},
		{name: "big", key: SeqKey(1 << 40), seq: 1 << 40, ok: true},
		{name: "max", key: SeqKey(math.MaxInt64), seq: math.MaxInt64, ok: true},
		{name: "out of range", key: []byte{0x80, 0, 0, 0, 0, 0, 0, 0}},
		{name: "short", key: []byte{0, 0, 0, 0, 0, 0, 1}},
		{name: "long", key: []byte{0, 0, 0, 0, 0, 0, 0, 1, 0}},
		{name: "empty", key: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq, err := ParseSeqKey(tt.key)
			if !tt.ok {
				if !errors.Is(err, codec.ErrCorrupt) {
					t.Fatalf("ParseSeqKey(%x) = %d, %v; want codec.ErrCorrupt", tt.key, seq, err)
				}
				return
			}
			if err != nil || seq != tt.seq {
				t.Fatalf("ParseSeqKey(%x) = %d, %v; want %d", tt.key, seq, err, tt.seq)
			}
		})
	}
	// Byte order is seq order.
	if bytes.Compare(SeqKey(255), SeqKey(256)) >= 0 || bytes.Compare(SeqKey(0), SeqKey(1)) >= 0 {
		t.Errorf("seq keys do not sort in seq order")
	}
}

// rawRecord frames a msgpack value built by msgpack itself (for engine
// records shaped differently from HeadRecord).
func rawRecord(t *testing.T, v interface{}) []byte {
	t.Helper()
	p, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return codec.EncodeRecord(nil, p)
}

func TestHeadRecord(t *testing.T) {
	chain := bytes.Repeat([]byte{7}, 32)
	good := HeadRecord{Next: 10, Turns: 2, LastTime: 1767225600123.5, Chain: chain, Stored: 12345}
	rec, err := EncodeEngineRecord(&good)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeHead(rec)
	if err != nil {
		t.Fatalf("DecodeHead(encoded) = %v", err)
	}
	if got.Next != good.Next || got.Turns != good.Turns || got.LastTime != good.LastTime ||
		!bytes.Equal(got.Chain, chain) || got.Stored != good.Stored {
		t.Fatalf("DecodeHead(encoded) = %+v, want %+v", got, good)
	}
	// The tags are the format: pin the encoding.
	p := rec[1 : len(rec)-4]
	if !bytes.HasPrefix(p, []byte{0x85, 0xa1, 'n', 0x0a, 0xa1, 't', 0x02, 0xa1, 'l', 0xcb}) {
		t.Errorf("head record payload %x does not start with {n: 10, t: 2, l: float64", p)
	}
	if !bytes.HasSuffix(p, append(append([]byte{0xa1, 'c', 0xc4, 32}, chain...), 0xa1, 'b', 0xcd, 0x30, 0x39)) {
		t.Errorf("head record payload %x does not end with c: bin 32, b: 12345", p)
	}

	type extra struct {
		HeadRecord
		X int64 `msgpack:"x"`
	}
	type four struct {
		Next     int64   `msgpack:"n"`
		Turns    int64   `msgpack:"t"`
		LastTime float64 `msgpack:"l"`
		Chain    []byte  `msgpack:"c"`
	}
	trailing := codec.EncodeRecord(nil, append(append([]byte(nil), p...), 0xc0))
	mod := func(f func(h *HeadRecord)) []byte {
		h := good
		h.Chain = append([]byte(nil), chain...)
		f(&h)
		return rawRecord(t, &h)
	}
	tests := []struct {
		name string
		rec  []byte
		want error
	}{
		{name: "crc", rec: append(rec[:len(rec)-1:len(rec)-1], rec[len(rec)-1]^1), want: codec.ErrCorrupt},
		{name: "version byte damaged", rec: append([]byte{2}, rec[1:]...), want: codec.ErrCorrupt},
		{name: "a pack", rec: reframe(3, p), want: codec.ErrCorrupt},
		{name: "newer version", rec: reframe(4, p), want: codec.ErrUnsupported},
		{name: "version zero", rec: reframe(0, p), want: codec.ErrCorrupt},
		{name: "too short", rec: rec[:3], want: codec.ErrCorrupt},
		{name: "trailing bytes", rec: trailing, want: codec.ErrCorrupt},
		{name: "unknown field", rec: rawRecord(t, &extra{HeadRecord: good, X: 1}), want: codec.ErrCorrupt},
		{name: "missing field", rec: rawRecord(t, &four{Next: 1, Chain: chain}), want: codec.ErrCorrupt},
		{name: "not a map", rec: rawRecord(t, []int{1, 2, 3, 4, 5}), want: codec.ErrCorrupt},
		{name: "short chain", rec: mod(func(h *HeadRecord) { h.Chain = h.Chain[:31] }), want: codec.ErrCorrupt},
		{name: "negative next", rec: mod(func(h *HeadRecord) { h.Next = -1; h.Turns = 0 }), want: codec.ErrCorrupt},
		{name: "turns over next", rec: mod(func(h *HeadRecord) { h.Turns = 11 }), want: codec.ErrCorrupt},
		{name: "negative stored", rec: mod(func(h *HeadRecord) { h.Stored = -1 }), want: codec.ErrCorrupt},
		{name: "time not finite", rec: mod(func(h *HeadRecord) { h.LastTime = math.Inf(1) }), want: codec.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := DecodeHead(tt.rec); !errors.Is(err, tt.want) {
				t.Fatalf("decodeHead = %v, want %v", err, tt.want)
			}
		})
	}
}

// reframe frames payload with record version v.
func reframe(v byte, payload []byte) []byte {
	rec := append([]byte{v}, payload...)
	return binary.BigEndian.AppendUint32(rec, crc32.Checksum(rec, crc32.MakeTable(crc32.Castagnoli)))
}

func TestMetaRecord(t *testing.T) {
	rec, err := EncodeEngineRecord(&MetaRecord{Format: FormatVersion})
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0x01, 0x81, 0xa1, 'f', 0x03}; !bytes.HasPrefix(rec, want) || len(rec) != len(want)+4 {
		t.Errorf("meta/format = %x, want %x", rec, want)
	}
	// A newer format may add fields: the version still reads.
	type newer struct {
		Format int64  `msgpack:"f"`
		Logic  string `msgpack:"r"`
	}
	m, err := DecodeMeta(rawRecord(t, &newer{Format: 3, Logic: "x"}))
	if err != nil || m.Format != 3 {
		t.Errorf("DecodeMeta(newer) = %+v, %v; want format 3", m, err)
	}
}
