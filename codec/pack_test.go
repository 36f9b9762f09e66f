package codec_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/klauspost/compress/s2"

	"github.com/sessionlog/sessionlog/codec"
)

// packOf returns the pack of the given JSON texts' payloads.
func packOf(t testing.TB, texts ...string) (rec []byte, payloads [][]byte) {
	t.Helper()
	for _, s := range texts {
		payloads = append(payloads, mustPayload(t, s))
	}
	rec, _ = codec.AppendPack(nil, nil, payloads)
	return rec, payloads
}

func TestPackRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		texts []string
	}{
		{name: "one small", texts: []string{`7`}},
		{name: "one event", texts: []string{smallEvent}},
		{name: "several", texts: []string{smallEvent, largeEvent, `"x"`, smallEvent}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, want := packOf(t, tt.texts...)
			if !codec.IsPack(rec) {
				t.Fatalf("IsPack(%x) = false", rec[:1])
			}
			got, err := codec.DecodePack(rec)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("DecodePack: %d events, want %d", len(got), len(want))
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("event %d: %x, want %x", i, got[i], want[i])
				}
			}
			again, _ := codec.AppendPack([]byte("prefix"), nil, want)
			if !bytes.Equal(again[len("prefix"):], rec) {
				t.Fatalf("AppendPack is not deterministic or does not append")
			}
			if _, err := codec.DecodeRecord(rec); !errors.Is(err, codec.ErrCorrupt) {
				t.Fatalf("DecodeRecord(pack) = %v, want ErrCorrupt", err)
			}
		})
	}
}

// TestPackCompresses checks that a pack of similar events is smaller than
// their records one by one: the reason packs exist.
func TestPackCompresses(t *testing.T) {
	var texts []string
	for range 20 {
		texts = append(texts, largeEvent)
	}
	rec, payloads := packOf(t, texts...)
	single := 0
	for _, p := range payloads {
		single += len(codec.EncodeEventRecord(nil, p))
	}
	if len(rec)*4 > single {
		t.Fatalf("pack of 20 like events is %d bytes, their records %d: want under a quarter", len(rec), single)
	}
}

// reframe replaces a pack's body (after the version byte) and recomputes
// its CRC, so that damage reaches the checks behind it.
func reframe(body []byte) []byte {
	rec := append([]byte{codec.RecordVersionPack}, body...)
	return binary.BigEndian.AppendUint32(rec, crc32.Checksum(rec, crc32.MakeTable(crc32.Castagnoli)))
}

// rawPack is a pack declaring n events whose uncompressed block is raw,
// compressed with the dictionary as AppendPack does.
func rawPack(t testing.TB, n uint64, raw []byte) []byte {
	t.Helper()
	dict, err := os.ReadFile("s2.dict")
	if err != nil {
		t.Fatal(err)
	}
	body := binary.AppendUvarint(nil, n)
	return reframe(append(body, s2.NewDict(dict).Encode(nil, raw)...))
}

func TestDecodePackDamage(t *testing.T) {
	good, _ := packOf(t, smallEvent, largeEvent)
	flip := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 0x40
		return b
	}
	long := make([]byte, codec.MaxPack+1)
	long[0] = codec.RecordVersionPack
	tests := []struct {
		name string
		rec  []byte
	}{
		{name: "empty", rec: nil},
		{name: "too short", rec: good[:5]},
		{name: "not a pack", rec: codec.EncodeRecord(nil, mustPayload(t, `1`))},
		{name: "crc", rec: flip(len(good) - 1)},
		{name: "flipped body", rec: flip(len(good) / 2)},
		{name: "torn", rec: good[:len(good)-3]},
		{name: "over the cap", rec: long},
		{name: "no count", rec: reframe([]byte{0x80})},
		{name: "zero events", rec: rawPack(t, 0, []byte{1, 0xc0})},
		{name: "more events than declared", rec: rawPack(t, 1, []byte{1, 0xc0, 1, 0xc0})},
		{name: "fewer events than declared", rec: rawPack(t, 2, []byte{1, 0xc0, 0})},
		{name: "an empty event", rec: rawPack(t, 2, []byte{1, 0xc0, 0, 0})},
		{name: "event overruns", rec: rawPack(t, 1, []byte{9, 0xc0})},
		{name: "bad length", rec: rawPack(t, 1, []byte{0xff, 0xff})},
		{name: "count over bytes", rec: rawPack(t, 1<<40, []byte{1, 0xc0})},
		{name: "bad block", rec: reframe([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := codec.DecodePack(tt.rec)
			if !errors.Is(err, codec.ErrCorrupt) {
				t.Fatalf("DecodePack = %d events, %v; want ErrCorrupt", len(got), err)
			}
		})
	}
}

func FuzzDecodePack(f *testing.F) {
	rec, _ := packOf(f, smallEvent, largeEvent, `7`)
	f.Add(rec)
	f.Add(rawPack(f, 2, []byte{1, 0xc0, 1, 0xc3}))
	f.Add([]byte{codec.RecordVersionPack})
	f.Fuzz(func(t *testing.T, rec []byte) {
		for _, r := range [][]byte{rec, reframe(rec[min(len(rec), 1):])} {
			payloads, err := codec.DecodePack(r)
			if err != nil {
				if !errors.Is(err, codec.ErrCorrupt) {
					t.Fatalf("DecodePack(%x) = %v, not ErrCorrupt", r, err)
				}
				continue
			}
			if len(payloads) == 0 {
				t.Fatalf("DecodePack(%x) accepted a pack of no event", r)
			}
			again, _ := codec.AppendPack(nil, nil, payloads)
			back, err := codec.DecodePack(again)
			if err != nil || len(back) != len(payloads) {
				t.Fatalf("re-pack of %d events: %d, %v", len(payloads), len(back), err)
			}
			for i := range back {
				if !bytes.Equal(back[i], payloads[i]) {
					t.Fatalf("re-pack changed event %d", i)
				}
			}
		}
	})
}

// TestPackOfTheLargestEvent checks that a pack of one event of the
// largest payload a record holds (MaxRecord-5 bytes) decodes: its block,
// the payload and its length, is over what one record's payload may be.
func TestPackOfTheLargestEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 2 × MaxRecord bytes")
	}
	// Zeros: the block compresses to little. The payload and the scratch
	// block are dropped before decoding, and the collector runs often,
	// so that the test holds two of the three buffers at most (the race
	// detector's shadow memory multiplies them).
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	n := codec.MaxRecord - 5
	rec, _ := codec.AppendPack(nil, nil, [][]byte{make([]byte, n)})
	runtime.GC()
	got, err := codec.DecodePack(rec)
	if err != nil || len(got) != 1 || len(got[0]) != n {
		t.Fatalf("DecodePack of a pack of a %d-byte payload = %d events, %v", n, len(got), err)
	}
}
