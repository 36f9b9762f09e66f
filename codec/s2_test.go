package codec_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/klauspost/compress/s2"

	"github.com/sessionlog/sessionlog/codec"
)

// largeEvent is a compressible event of about 12 KB.
var largeEvent = `{"type":"assistant/message","seq":9,"time":1767225600000,"data":{"turn":1,"step":1,"content":[{"type":"text","text":"` +
	strings.Repeat("The quick brown fox jumps over the lazy dog. ", 270) + `"}]}}`

// TestDictionaryFrozen pins the embedded dictionary: version 2 records
// written with it can only be read with the same bytes.
func TestDictionaryFrozen(t *testing.T) {
	b, err := os.ReadFile("s2.dict")
	if err != nil {
		t.Fatal(err)
	}
	const want = "4de2498d21c56e8d315e5be73bf675c7f1241b938d7fd89abf5984545a6a3c02"
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != want {
		t.Fatalf("s2.dict has sha256 %x, want %s: the dictionary is part of the on-disk format", sum, want)
	}
	if s2.NewDict(b) == nil {
		t.Fatalf("s2.dict of %d bytes is not an s2 dictionary", len(b))
	}
}

// TestEventRecordRoundTrip checks EncodeEventRecord/DecodeRecord: the
// version chosen, that dst is kept, and that the payload comes back.
func TestEventRecordRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		payload []byte
		version byte
	}{
		{name: "small event", payload: mustPayload(t, smallEvent), version: codec.RecordVersionS2},
		{name: "large event", payload: mustPayload(t, largeEvent), version: codec.RecordVersionS2},
		{name: "scalar", payload: mustPayload(t, `7`), version: codec.RecordVersion},
		{name: "below the threshold", payload: strPayload(codec.CompressMin-1, 'a'), version: codec.RecordVersion},
		{name: "at the threshold", payload: strPayload(codec.CompressMin, 'a'), version: codec.RecordVersionS2},
		{name: "incompressible", payload: strPayload(4000, 0), version: codec.RecordVersion},
		{name: "below the better level", payload: textPayload(codec.BetterMin - 1), version: codec.RecordVersionS2},
		{name: "at the better level", payload: textPayload(codec.BetterMin), version: codec.RecordVersionS2},
		{name: "far above the better level", payload: textPayload(1 << 20), version: codec.RecordVersionS2},
		{name: "incompressible above the better level", payload: strPayload(codec.BetterMin*2, 0), version: codec.RecordVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := codec.EncodeEventRecord([]byte("keep"), tt.payload)
			if string(rec[:4]) != "keep" {
				t.Fatalf("EncodeEventRecord overwrote dst")
			}
			rec = rec[4:]
			if rec[0] != tt.version {
				t.Fatalf("EncodeEventRecord of %d bytes wrote version %d, want %d", len(tt.payload), rec[0], tt.version)
			}
			if tt.version == codec.RecordVersion && !bytes.Equal(rec, codec.EncodeRecord(nil, tt.payload)) {
				t.Fatalf("uncompressed EncodeEventRecord differs from EncodeRecord")
			}
			if tt.version == codec.RecordVersionS2 && len(rec) >= len(tt.payload)+5 {
				t.Fatalf("compressed record of %d bytes is not smaller than the payload's %d", len(rec), len(tt.payload))
			}
			got, err := codec.DecodeRecord(rec)
			if err != nil {
				t.Fatalf("DecodeRecord = %v", err)
			}
			if !bytes.Equal(got, tt.payload) {
				t.Fatalf("DecodeRecord = %d bytes, want the %d of the payload", len(got), len(tt.payload))
			}
		})
	}
}

// textPayload is the msgpack string of n bytes of numbered lines: text
// that compresses, but not to nothing.
func textPayload(n int) []byte {
	var b []byte
	for i := 0; len(b) < n-5; i++ {
		b = fmt.Appendf(b, "line %d of a tool's output, %x\n", i, i*2654435761)
	}
	return append([]byte{0xdb, byte((n - 5) >> 24), byte((n - 5) >> 16), byte((n - 5) >> 8), byte(n - 5)}, b[:n-5]...)
}

// strPayload is the msgpack string of n bytes: all c, or pseudo-random
// letters when c is 0.
func strPayload(n int, c byte) []byte {
	s := make([]byte, n-1)
	x := uint32(88172645)
	for i := range s {
		if c != 0 {
			s[i] = c
			continue
		}
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		s[i] = 'A' + byte(x%58)
		if s[i] > 'Z' && s[i] < 'a' {
			s[i] = 'x'
		}
	}
	if n-1 < 32 {
		return append([]byte{0xa0 | byte(n-1)}, s...)
	}
	if n-1 < 256 {
		return append([]byte{0xd9, byte(n - 1)}, s...)
	}
	return append([]byte{0xda, byte((n - 1) >> 8), byte(n - 1)}, s...)
}

// TestEventRecordDeterministic checks that a payload's record is the same
// whatever was encoded before and however many goroutines encode at once:
// bbolt and PostgreSQL must store the same bytes.
func TestEventRecordDeterministic(t *testing.T) {
	payloads := [][]byte{mustPayload(t, smallEvent), mustPayload(t, largeEvent), strPayload(100, 'z'), strPayload(3000, 0),
		textPayload(codec.BetterMin), textPayload(200 << 10)}
	var want [][]byte
	for _, p := range payloads {
		want = append(want, codec.EncodeEventRecord(nil, p))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := (i + g) % len(payloads)
				if got := codec.EncodeEventRecord(nil, payloads[k]); !bytes.Equal(got, want[k]) {
					errs <- fmt.Errorf("goroutine %d, round %d: record of payload %d differs", g, i, k)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestEventRecordDamage flips every bit of every byte of compressed
// records, and cuts them at every length: each is refused as corrupt. With
// the CRC recomputed over the damage, decoding must not panic, and it
// either fails as corrupt or returns a valid stored value.
func TestEventRecordDamage(t *testing.T) {
	for _, js := range []string{smallEvent, largeEvent} {
		rec := codec.EncodeEventRecord(nil, mustPayload(t, js))
		if rec[0] != codec.RecordVersionS2 {
			t.Fatalf("record of %.40s is not compressed", js)
		}
		refused, decoded := 0, 0
		for i := 0; i < len(rec); i++ {
			for bit := 0; bit < 8; bit++ {
				bad := append([]byte(nil), rec...)
				bad[i] ^= 1 << bit
				if _, err := codec.DecodeRecord(bad); !errors.Is(err, codec.ErrCorrupt) {
					t.Fatalf("byte %d bit %d flipped: DecodeRecord = %v, want ErrCorrupt", i, bit, err)
				}
				if i == 0 || i >= len(rec)-4 {
					continue
				}
				refr := frame(bad[0], bad[1:len(bad)-4])
				p, err := codec.DecodeRecord(refr)
				switch {
				case err == nil:
					decoded++
					if verr := codec.ValidateValue(p); verr != nil {
						t.Fatalf("byte %d bit %d: DecodeRecord returned an invalid value: %v", i, bit, verr)
					}
				case errors.Is(err, codec.ErrCorrupt):
					refused++
				default:
					t.Fatalf("byte %d bit %d, CRC recomputed: DecodeRecord = %v, want ErrCorrupt or a value", i, bit, err)
				}
			}
		}
		for n := 0; n < len(rec); n++ {
			if _, err := codec.DecodeRecord(rec[:n]); !errors.Is(err, codec.ErrCorrupt) {
				t.Fatalf("record cut to %d of %d bytes: DecodeRecord = %v, want ErrCorrupt", n, len(rec), err)
			}
			if n == 0 || n >= len(rec)-4 {
				continue
			}
			if _, err := codec.DecodeRecord(frame(rec[0], rec[1:n])); !errors.Is(err, codec.ErrCorrupt) {
				t.Fatalf("s2 block cut to %d bytes, CRC recomputed: DecodeRecord = %v, want ErrCorrupt", n-1, err)
			}
		}
		if refused == 0 {
			t.Fatalf("no damaged frame with a good CRC was refused: the frame checks did no work")
		}
		t.Logf("%d bytes: with the CRC recomputed, %d damaged frames refused, %d decoded to another valid value", len(rec), refused, decoded)
	}
}

// block builds an S2 block by hand: the declared length, then one literal
// of body (at most 60 bytes).
func block(size uint64, body []byte) []byte {
	b := binary.AppendUvarint(nil, size)
	if len(body) == 0 {
		return b
	}
	b = append(b, byte(len(body)-1)<<2) // literal tag
	return append(b, body...)
}

// TestEventRecordBomb checks that a compressed record cannot make the
// decoder allocate more than the cap: a frame declaring a huge size is
// refused before anything is allocated, and one whose content overruns
// its declared size is refused.
func TestEventRecordBomb(t *testing.T) {
	big := make([]byte, 4<<20)
	bomb := codec.EncodeEventRecord(nil, append([]byte{0xdb, 0x00, 0x40, 0x00, 0x00}, big...)) // str32 of 4 MiB of NULs
	if bomb[0] != codec.RecordVersionS2 || len(bomb) > 4096 {
		t.Fatalf("4 MiB of zeros gave a record of version %d, %d bytes", bomb[0], len(bomb))
	}
	tests := []struct {
		name string
		rec  []byte
	}{
		{name: "declares 1 TiB", rec: frame(2, block(1<<40, []byte{0xc0}))},
		{name: "declares 4 GiB", rec: frame(2, block(1<<32-1, []byte{0xc0}))},
		{name: "declares MaxRecord", rec: frame(2, block(codec.MaxRecord, []byte{0xc0}))},
		{name: "content longer than declared", rec: frame(2, block(1, []byte{0xc0, 0xc0}))},
		{name: "content shorter than declared", rec: frame(2, block(3, []byte{0xc0, 0xc0}))},
		{name: "empty", rec: frame(2, block(0, nil))},
		{name: "no length", rec: frame(2, []byte{0x80})},
		{name: "4 MiB of zeros declared as 1 KiB", rec: lieAboutSize(bomb, 1024)},
		{name: "not s2", rec: frame(2, []byte("hello, world"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := codec.DecodeRecord(tt.rec)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, codec.ErrCorrupt) {
				t.Fatalf("DecodeRecord = %v, want ErrCorrupt", err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Fatalf("DecodeRecord allocated %d bytes for a %d-byte record", n, len(tt.rec))
			}
		})
	}
	// The real bomb decodes: the cap is on what it declares, not its ratio.
	if p, err := codec.DecodeRecord(bomb); err != nil || len(p) != len(big)+5 {
		t.Fatalf("DecodeRecord(4 MiB of zeros) = %d bytes, %v", len(p), err)
	}
}

// lieAboutSize rewrites the declared length of the compressed record rec
// to size, with a good CRC.
func lieAboutSize(rec []byte, size uint64) []byte {
	z := rec[1 : len(rec)-4]
	_, n := binary.Uvarint(z)
	return frame(2, append(binary.AppendUvarint(nil, size), z[n:]...))
}

// TestRecordVersions checks the version byte: 4 (sealed: OpenRecord) and
// up are unsupported; 0 is corrupt, and so is 3, a pack (DecodePack),
// where one record was expected.
func TestRecordVersions(t *testing.T) {
	rec := codec.EncodeEventRecord(nil, mustPayload(t, largeEvent))
	for _, tt := range []struct {
		v    byte
		want error
	}{{0, codec.ErrCorrupt}, {3, codec.ErrCorrupt}, {4, codec.ErrUnsupported}, {5, codec.ErrUnsupported}, {255, codec.ErrUnsupported}} {
		if _, err := codec.DecodeRecord(frame(tt.v, rec[1:len(rec)-4])); !errors.Is(err, tt.want) {
			t.Errorf("version %d: DecodeRecord = %v, want %v", tt.v, err, tt.want)
		}
	}
}

// TestRecordAllocs checks that decoding a version 1 record allocates
// nothing, a version 2 one only its payload, and that encoding into a
// buffer with room allocates nothing.
func TestRecordAllocs(t *testing.T) {
	p := mustPayload(t, largeEvent)
	v1 := codec.EncodeRecord(nil, p)
	v2 := codec.EncodeEventRecord(nil, p)
	dst := make([]byte, 0, 2*len(v1))
	tests := []struct {
		name   string
		fn     func()
		max    float64
		noRace bool // checked without the race detector only
	}{
		{"decode version 1", func() { _, _ = codec.DecodeRecord(v1) }, 0, false},
		{"decode version 2", func() { _, _ = codec.DecodeRecord(v2) }, 1, false},
		{"encode compressed", func() { dst = codec.EncodeEventRecord(dst[:0], p) }, 0, false},
		// Into no buffer, a record is one allocation of its size, not a
		// few grown appends (a long answer's payload copied each time).
		{"encode version 1 into nil", func() { _ = codec.EncodeRecord(nil, p) }, 1, true},
		{"encode compressed into nil", func() { _ = codec.EncodeEventRecord(nil, p) }, 1, true},
		{"pack into nil", func() { _, _ = codec.AppendPack(nil, dst[:0:cap(dst)], [][]byte{p}) }, 1, true},
	}
	for _, tt := range tests {
		if tt.noRace && raceEnabled {
			continue
		}
		if n := testing.AllocsPerRun(100, tt.fn); n > tt.max {
			t.Errorf("%s: %v allocations, want at most %v", tt.name, n, tt.max)
		}
	}
}

// TestLargeScratchNotKept (issue 19 item 7): the scratch buffer that
// compressing a long answer's payload takes (its whole size and more) is
// left to the collector, not kept in the pool through the next
// collections beside the answer's other copies.
func TestLargeScratchNotKept(t *testing.T) {
	p := mustPayload(t, `{"type":"assistant/message","seq":9,"time":1,"data":{"turn":1,"step":1,"content":[{"type":"text","text":"`+
		strings.Repeat("The quick brown fox jumps over the lazy dog. ", 200_000)+`"}]}}`)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	rec := codec.EncodeEventRecord(nil, p)
	pack, _ := codec.AppendPack(nil, nil, [][]byte{p})
	runtime.GC() // a pooled buffer survives one collection (the pool's victim cache)
	runtime.ReadMemStats(&after)
	kept := int64(after.HeapAlloc) - int64(before.HeapAlloc) - int64(len(rec)+len(pack))
	if kept > int64(len(p))/2 {
		t.Errorf("compressing a %d byte payload kept %d bytes besides its record and pack", len(p), kept)
	}
	runtime.KeepAlive(p)
}
