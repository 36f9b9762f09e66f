package eventlog

import (
	"bytes"
	"crypto/sha256"
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
		{name: "zero", key: seqKey(0), seq: 0, ok: true},
		{name: "one", key: []byte{0, 0, 0, 0, 0, 0, 0, 1}, seq: 1, ok: true},
		{name: "big", key: seqKey(1 << 40), seq: 1 << 40, ok: true},
		{name: "max", key: seqKey(math.MaxInt64), seq: math.MaxInt64, ok: true},
		{name: "out of range", key: []byte{0x80, 0, 0, 0, 0, 0, 0, 0}},
		{name: "short", key: []byte{0, 0, 0, 0, 0, 0, 1}},
		{name: "long", key: []byte{0, 0, 0, 0, 0, 0, 0, 1, 0}},
		{name: "empty", key: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq, err := parseSeqKey(tt.key)
			if !tt.ok {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("parseSeqKey(%x) = %d, %v; want ErrCorrupt", tt.key, seq, err)
				}
				return
			}
			if err != nil || seq != tt.seq {
				t.Fatalf("parseSeqKey(%x) = %d, %v; want %d", tt.key, seq, err, tt.seq)
			}
		})
	}
	// Byte order is seq order.
	if bytes.Compare(seqKey(255), seqKey(256)) >= 0 || bytes.Compare(seqKey(0), seqKey(1)) >= 0 {
		t.Errorf("seq keys do not sort in seq order")
	}
}

// rawRecord frames a msgpack value built by msgpack itself (for engine
// records shaped differently from headRecord).
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
	good := headRecord{Next: 10, Turns: 2, LastTime: 1767225600123.5, Chain: chain, Stored: 12345}
	rec, err := encodeEngineRecord(&good)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeHead(rec)
	if err != nil {
		t.Fatalf("decodeHead(encoded) = %v", err)
	}
	if got.Next != good.Next || got.Turns != good.Turns || got.LastTime != good.LastTime ||
		!bytes.Equal(got.Chain, chain) || got.Stored != good.Stored {
		t.Fatalf("decodeHead(encoded) = %+v, want %+v", got, good)
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
		headRecord
		X int64 `msgpack:"x"`
	}
	type four struct {
		Next     int64   `msgpack:"n"`
		Turns    int64   `msgpack:"t"`
		LastTime float64 `msgpack:"l"`
		Chain    []byte  `msgpack:"c"`
	}
	trailing := codec.EncodeRecord(nil, append(append([]byte(nil), p...), 0xc0))
	mod := func(f func(h *headRecord)) []byte {
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
		{name: "crc", rec: append(rec[:len(rec)-1:len(rec)-1], rec[len(rec)-1]^1), want: ErrCorrupt},
		{name: "version byte damaged", rec: append([]byte{2}, rec[1:]...), want: ErrCorrupt},
		{name: "a pack", rec: reframe(3, p), want: ErrCorrupt},
		{name: "newer version", rec: reframe(4, p), want: ErrUnsupported},
		{name: "version zero", rec: reframe(0, p), want: ErrCorrupt},
		{name: "too short", rec: rec[:3], want: ErrCorrupt},
		{name: "trailing bytes", rec: trailing, want: ErrCorrupt},
		{name: "unknown field", rec: rawRecord(t, &extra{headRecord: good, X: 1}), want: ErrCorrupt},
		{name: "missing field", rec: rawRecord(t, &four{Next: 1, Chain: chain}), want: ErrCorrupt},
		{name: "not a map", rec: rawRecord(t, []int{1, 2, 3, 4, 5}), want: ErrCorrupt},
		{name: "short chain", rec: mod(func(h *headRecord) { h.Chain = h.Chain[:31] }), want: ErrCorrupt},
		{name: "negative next", rec: mod(func(h *headRecord) { h.Next = -1; h.Turns = 0 }), want: ErrCorrupt},
		{name: "turns over next", rec: mod(func(h *headRecord) { h.Turns = 11 }), want: ErrCorrupt},
		{name: "negative stored", rec: mod(func(h *headRecord) { h.Stored = -1 }), want: ErrCorrupt},
		{name: "time not finite", rec: mod(func(h *headRecord) { h.LastTime = math.Inf(1) }), want: ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := decodeHead(tt.rec); !errors.Is(err, tt.want) {
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
	rec, err := encodeEngineRecord(&metaRecord{Format: FormatVersion})
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
	m, err := decodeMeta(rawRecord(t, &newer{Format: 3, Logic: "x"}))
	if err != nil || m.Format != 3 {
		t.Errorf("decodeMeta(newer) = %+v, %v; want format 3", m, err)
	}
}

func TestChain(t *testing.T) {
	hdr := codec.EncodeRecord(nil, codec.NewSessionHeader("s", 1, "", "", 0).Raw)
	want := sha256.Sum256(append([]byte("sessionlog/chain/1"), hdr...))
	c0 := ChainStart(hdr)
	if c0 != want {
		t.Fatalf("ChainStart = %x, want %x", c0, want)
	}
	payload := []byte{0x81, 0xa1, 'a', 0x01}
	want1 := sha256.Sum256(append(want[:], payload...))
	if c1 := ChainNext(c0, payload); c1 != want1 {
		t.Fatalf("ChainNext = %x, want %x", c1, want1)
	}
	ch := newChainer(c0)
	ch.add(payload)
	ch.add(payload)
	if want2 := ChainNext(want1, payload); ch.c != want2 {
		t.Fatalf("chainer = %x, want %x", ch.c, want2)
	}
}
