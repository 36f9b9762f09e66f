package codec_test

import (
	"bytes"
	"crypto/rand"
	stderrors "errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/klauspost/compress/s2"

	"github.com/sessionlog/sessionlog/codec"
)

// testKey and otherKey are data keys for tests: fixed, so that the
// checked-in fuzz seeds open.
var (
	testKey  = bytes.Repeat([]byte{0x5e}, codec.DataKeySize)
	otherKey = bytes.Repeat([]byte{0xa1}, codec.DataKeySize)
)

func mustSealer(t testing.TB, key []byte) *codec.Sealer {
	t.Helper()
	s, err := codec.NewSealer(key)
	if err != nil {
		t.Fatalf("NewSealer = %v", err)
	}
	return s
}

// incompressible returns n random bytes framed as a msgpack string, a
// payload that S2 cannot shrink.
func incompressible(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_, _ = rand.Read(b)
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
	for i := range b {
		b[i] = letters[b[i]%64] // valid UTF-8, no redundancy S2 finds
	}
	return codec.AppendString(nil, string(b))
}

func TestSealRecordRoundTrip(t *testing.T) {
	s := mustSealer(t, testKey)
	tests := []struct {
		name    string
		payload []byte
		form    byte
	}{
		{name: "small event, stored as it is", payload: mustPayload(t, `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`)[:20], form: codec.RecordVersion},
		{name: "scalar", payload: mustPayload(t, `7`), form: codec.RecordVersion},
		{name: "event, compressed", payload: mustPayload(t, smallEvent), form: codec.RecordVersionS2},
		{name: "large event, compressed", payload: mustPayload(t, largeEvent), form: codec.RecordVersionS2},
		{name: "incompressible", payload: incompressible(t, 3000), form: codec.RecordVersion},
		{name: "over BetterMin", payload: mustPayload(t, `{"t":"`+strings.Repeat("ab cd ", 5000)+`"}`), form: codec.RecordVersionS2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := codec.SealRecord([]byte("keep"), tt.payload, s)
			if string(rec[:4]) != "keep" {
				t.Fatalf("SealRecord overwrote dst")
			}
			rec = rec[4:]
			if !codec.IsSealed(rec) || rec[1] != tt.form {
				t.Fatalf("SealRecord = version %d form %d, want %d form %d", rec[0], rec[1], codec.RecordVersionSealed, tt.form)
			}
			got, err := codec.OpenRecord(rec, s, codec.MaxRecord)
			if err != nil || !bytes.Equal(got, tt.payload) {
				t.Fatalf("OpenRecord(SealRecord(p)) = %.40x, %v; want %.40x", got, err, tt.payload)
			}
			if again := codec.SealRecord(nil, tt.payload, s); bytes.Equal(again, rec) {
				t.Errorf("two seals of one payload are the same bytes: the nonce is not random")
			}
			if f, err := codec.CheckFrame(rec, codec.MaxRecord); err != nil || f != (codec.Frame{Version: codec.RecordVersionSealed, Form: tt.form, Events: 1}) {
				t.Errorf("CheckFrame = %+v, %v", f, err)
			}
			// Only a prefix of 8 bytes or more proves anything: a shorter one
			// stands in random sealed bytes by chance (a 1-byte scalar in
			// about one record of ten).
			if len(tt.payload) >= 8 && bytes.Contains(rec, tt.payload[:min(len(tt.payload), 16)]) {
				t.Errorf("the sealed record holds the payload's first bytes in the clear")
			}
			// Readers of plain records refuse it: they cannot know its key.
			if _, err := codec.DecodeRecord(rec); class(err) != "unsupported" {
				t.Errorf("DecodeRecord(sealed) = %v, want unsupported", err)
			}
			if _, err := codec.DecodePack(rec); class(err) != "unsupported" {
				t.Errorf("DecodePack(sealed record) = %v, want unsupported", err)
			}
			if _, err := codec.OpenPack(rec, s); class(err) != "corrupt" {
				t.Errorf("OpenPack(sealed record) = %v, want corrupt", err)
			}
		})
	}
}

func TestSealPackRoundTrip(t *testing.T) {
	s := mustSealer(t, testKey)
	tests := []struct {
		name  string
		texts []string
	}{
		{name: "one small", texts: []string{`7`}},
		{name: "several", texts: []string{smallEvent, largeEvent, `"x"`, smallEvent}},
		{name: "130 events: a count of two bytes", texts: slicesRepeat(smallEvent, 130)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want [][]byte
			for _, js := range tt.texts {
				want = append(want, mustPayload(t, js))
			}
			rec, _ := codec.SealPack([]byte("keep"), nil, want, s)
			rec = rec[4:]
			got, err := codec.OpenPack(rec, s)
			if err != nil || len(got) != len(want) {
				t.Fatalf("OpenPack(SealPack) = %d events, %v; want %d", len(got), err, len(want))
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("event %d: %x, want %x", i, got[i], want[i])
				}
			}
			f, err := codec.CheckFrame(rec, codec.MaxPack)
			if err != nil || f != (codec.Frame{Version: codec.RecordVersionSealed, Form: codec.RecordVersionPack, Events: len(want)}) {
				t.Errorf("CheckFrame = %+v, %v; want a sealed pack of %d", f, err, len(want))
			}
			plain, _ := codec.AppendPack(nil, nil, want)
			if over := len(rec) - len(plain); over > 30 {
				t.Errorf("a sealed pack is %d bytes over the plain one, want at most 30 (form, nonce, tag)", over)
			}
			if _, err := codec.OpenRecord(rec, s, codec.MaxPack); class(err) != "corrupt" {
				t.Errorf("OpenRecord(sealed pack) = %v, want corrupt", err)
			}
			if _, err := codec.DecodePack(rec); class(err) != "unsupported" {
				t.Errorf("DecodePack(sealed pack) = %v, want unsupported", err)
			}
		})
	}
}

func slicesRepeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestSealedWrongKey: a whole frame opened with another key is class
// keys, for cockroachdb/errors and the standard library alike, and its
// message holds neither key.
func TestSealedWrongKey(t *testing.T) {
	s, other := mustSealer(t, testKey), mustSealer(t, otherKey)
	p := mustPayload(t, largeEvent)
	pack, _ := codec.SealPack(nil, nil, [][]byte{p, p}, s)
	tests := []struct {
		name string
		open func() error
	}{
		{"record form 1", func() error {
			_, err := codec.OpenRecord(codec.SealRecord(nil, p[:20], s), other, codec.MaxRecord)
			return err
		}},
		{"record form 2", func() error {
			_, err := codec.OpenRecord(codec.SealRecord(nil, p, s), other, codec.MaxRecord)
			return err
		}},
		{"pack", func() error { _, err := codec.OpenPack(pack, other); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.open()
			if !errors.Is(err, codec.ErrKeys) || !stderrors.Is(err, codec.ErrKeys) {
				t.Fatalf("open with another key = %v, want class keys (cockroachdb %v, stdlib %v)", err, errors.Is(err, codec.ErrKeys), stderrors.Is(err, codec.ErrKeys))
			}
			if errors.IsAny(err, codec.ErrCorrupt, codec.ErrInvalid, codec.ErrUnsupported) {
				t.Errorf("open with another key = %v, in another class too", err)
			}
			for _, f := range []string{"%v", "%+v", "%#v", "%x"} {
				msg := fmt.Sprintf(f, err)
				if bytes.Contains([]byte(msg), testKey[:8]) || bytes.Contains([]byte(msg), otherKey[:8]) || strings.Contains(msg, fmt.Sprintf("%x", testKey[:8])) {
					t.Errorf("%s of the error holds a key: %s", f, msg)
				}
			}
		})
	}
}

// TestSealedDamage flips every bit of sealed frames and cuts them at
// every length: each is refused as corrupt, the CRC covering the sealed
// bytes. With the CRC recomputed over the damage (bytes altered on
// purpose), nothing opens: the refusal is corrupt where the frame's plain
// header no longer parses, else keys (the tag fails), and never a
// success or a panic.
func TestSealedDamage(t *testing.T) {
	s := mustSealer(t, testKey)
	p := mustPayload(t, largeEvent)
	pack, _ := codec.SealPack(nil, nil, [][]byte{mustPayload(t, smallEvent), p}, s)
	type opener func([]byte) error
	openRecord := func(rec []byte) error { _, err := codec.OpenRecord(rec, s, codec.MaxRecord); return err }
	openPack := func(rec []byte) error { _, err := codec.OpenPack(rec, s); return err }
	tests := []struct {
		name string
		rec  []byte
		open opener
	}{
		{"record form 1", codec.SealRecord(nil, mustPayload(t, `{"a":1}`), s), openRecord},
		{"record form 2", codec.SealRecord(nil, mustPayload(t, smallEvent), s), openRecord},
		{"pack", pack, openPack},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.open(tt.rec); err != nil {
				t.Fatalf("the undamaged frame does not open: %v", err)
			}
			counts := map[string]int{}
			for i := range tt.rec {
				for bit := 0; bit < 8; bit++ {
					bad := bytes.Clone(tt.rec)
					bad[i] ^= 1 << bit
					if err := tt.open(bad); class(err) != "corrupt" {
						t.Fatalf("byte %d bit %d flipped: %v, want corrupt", i, bit, err)
					}
					if i >= len(bad)-4 {
						continue
					}
					err := tt.open(frame(bad[0], bad[1:len(bad)-4]))
					c := class(err)
					counts[c]++
					switch {
					case c != "corrupt" && c != "keys":
						t.Fatalf("byte %d bit %d flipped, CRC recomputed: %v (class %s), want corrupt or keys", i, bit, err, c)
					case i >= 2+countLen(tt.rec) && c != "keys":
						t.Fatalf("byte %d bit %d flipped in the sealed bytes, CRC recomputed: %v, want keys", i, bit, err)
					}
				}
			}
			for n := 0; n < len(tt.rec); n++ {
				if err := tt.open(tt.rec[:n]); class(err) != "corrupt" {
					t.Fatalf("cut to %d of %d bytes: %v, want corrupt", n, len(tt.rec), err)
				}
				if n < 5 {
					continue
				}
				if c := class(tt.open(frame(tt.rec[0], tt.rec[1:n-4]))); c != "corrupt" && c != "keys" {
					t.Fatalf("cut to %d bytes, CRC recomputed: class %s, want corrupt or keys", n, c)
				}
			}
			if counts["keys"] == 0 {
				t.Fatalf("no altered frame reached the tag: %v", counts)
			}
			t.Logf("%d bytes; with the CRC recomputed: %v", len(tt.rec), counts)
		})
	}
}

// countLen is the length of a sealed pack's count, 0 for a record.
func countLen(rec []byte) int {
	if rec[1] != codec.RecordVersionPack {
		return 0
	}
	n := 1
	for rec[1+n]&0x80 != 0 {
		n++
	}
	return n
}

// TestSealedRefusals checks the frame rules, each frame with a good CRC,
// and those behind the tag with frames sealed under the right key, so
// that each check is reached on its own.
func TestSealedRefusals(t *testing.T) {
	s := mustSealer(t, testKey)
	p := mustPayload(t, smallEvent)
	plainPack, _ := codec.AppendPack(nil, nil, [][]byte{p})
	block := func(size uint64, body ...byte) []byte { return append(appendUvarint(nil, size), body...) }
	tests := []struct {
		name string
		rec  []byte
		pack bool // OpenPack, else OpenRecord
		want string
	}{
		{name: "good record", rec: codec.SealRecord(nil, p, s), want: "ok"},
		{name: "good pack", rec: s.SealBody(nil, codec.RecordVersionPack, 1, s2Block(t, []byte{1, 0xc0})), pack: true, want: "ok"},
		{name: "plain record", rec: codec.EncodeRecord(nil, p), want: "corrupt"},
		{name: "compressed record", rec: codec.EncodeEventRecord(nil, p), want: "corrupt"},
		{name: "plain pack", rec: plainPack, pack: true, want: "corrupt"},
		{name: "empty", rec: nil, want: "corrupt"},
		{name: "header only", rec: frame(codec.RecordVersionSealed, []byte{1}), want: "corrupt"},
		{name: "no room for a tag", rec: frame(codec.RecordVersionSealed, append([]byte{1}, make([]byte, 28)...)), want: "corrupt"},
		{name: "form 0", rec: s.SealBody(nil, 0, 0, p), want: "corrupt"},
		{name: "form 4", rec: s.SealBody(nil, codec.RecordVersionSealed, 0, p), want: "corrupt"},
		{name: "form 9", rec: s.SealBody(nil, 9, 0, p), want: "corrupt"},
		{name: "pack count 0", rec: s.SealBody(nil, codec.RecordVersionPack, 0, s2Block(t, []byte{1, 0xc0})), pack: true, want: "corrupt"},
		{name: "pack count over the cap", rec: s.SealBody(nil, codec.RecordVersionPack, 1<<40, s2Block(t, []byte{1, 0xc0})), pack: true, want: "corrupt"},
		{name: "pack count over its events", rec: s.SealBody(nil, codec.RecordVersionPack, 2, s2Block(t, []byte{1, 0xc0})), pack: true, want: "corrupt"},
		{name: "pack with an empty event", rec: s.SealBody(nil, codec.RecordVersionPack, 2, s2Block(t, []byte{1, 0xc0, 0})), pack: true, want: "corrupt"},
		{name: "pack count, no body", rec: frame(codec.RecordVersionSealed, []byte{codec.RecordVersionPack, 1}), pack: true, want: "corrupt"},
		{name: "pack count unterminated", rec: frame(codec.RecordVersionSealed, append([]byte{codec.RecordVersionPack}, bytes.Repeat([]byte{0xff}, 40)...)), pack: true, want: "corrupt"},
		{name: "sealed block not s2", rec: s.SealBody(nil, codec.RecordVersionS2, 0, []byte("hello, world")), want: "corrupt"},
		{name: "sealed block declares 1 TiB", rec: s.SealBody(nil, codec.RecordVersionS2, 0, block(1<<40, 0, 0xc0)), want: "corrupt"},
		{name: "sealed block declares MaxRecord", rec: s.SealBody(nil, codec.RecordVersionS2, 0, block(codec.MaxRecord, 0, 0xc0)), want: "corrupt"},
		{name: "sealed pack block declares 4 GiB", rec: s.SealBody(nil, codec.RecordVersionPack, 1, block(1<<32, 0, 0xc0)), pack: true, want: "corrupt"},
		{name: "sealed under another key", rec: codec.SealRecord(nil, p, mustSealer(t, otherKey)), want: "keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var err error
			if tt.pack {
				_, err = codec.OpenPack(tt.rec, s)
			} else {
				_, err = codec.OpenRecord(tt.rec, s, codec.MaxRecord)
			}
			runtime.ReadMemStats(&after)
			if got := class(err); got != tt.want {
				t.Fatalf("open(%.40x) = %v (class %s), want %s", tt.rec, err, got, tt.want)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20+uint64(len(tt.rec)) {
				t.Errorf("open allocated %d bytes for a %d-byte frame", n, len(tt.rec))
			}
		})
	}
	// The cap is checked first, before the CRC is computed.
	rec := codec.SealRecord(nil, p, s)
	if _, err := codec.OpenRecord(rec, s, len(rec)-1); class(err) != "corrupt" || !strings.Contains(err.Error(), "cap") {
		t.Errorf("OpenRecord over its cap = %v, want corrupt naming the cap", err)
	}
}

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// s2Block is an S2 block of raw, a few bytes: literals only, which
// decode with codec's dictionary as without one.
func s2Block(t testing.TB, raw []byte) []byte {
	t.Helper()
	z := s2.Encode(nil, raw)
	if got, err := s2.Decode(nil, z); err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("s2 block of %x: %x, %v", raw, got, err)
	}
	return z
}

func TestNewSealerKeySize(t *testing.T) {
	for _, n := range []int{0, 16, 24, 31, 33, 64} {
		s, err := codec.NewSealer(make([]byte, n))
		if s != nil || !stderrors.Is(err, codec.ErrKeys) {
			t.Errorf("NewSealer(%d bytes) = %v, %v; want class keys", n, s, err)
		}
	}
}

// TestSealerRedacted: no fmt verb prints a Sealer's key, or anything of
// its state, alone or inside another value.
func TestSealerRedacted(t *testing.T) {
	key := bytes.Repeat([]byte{0x3c}, codec.DataKeySize)
	s := mustSealer(t, key)
	type holder struct {
		Exported *codec.Sealer
		value    codec.Sealer
	}
	h := holder{Exported: s, value: *s}
	for _, v := range []any{s, *s, h, &h, []*codec.Sealer{s}} {
		for _, f := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
			out := fmt.Sprintf(f, v)
			// The key's bytes in hex, as %v lists them, as text, and as
			// the first word of AES's key schedule (which is the key's).
			if strings.Contains(out, "3c3c") || strings.Contains(out, "3C3C") || strings.Contains(out, "60 60") ||
				strings.Contains(out, "<<<<") || strings.Contains(out, "1010580540") {
				t.Errorf("Sprintf(%s, %T) shows the key: %s", f, v, out)
			}
			if _, direct := v.(*codec.Sealer); direct && out != "codec.Sealer(redacted)" {
				t.Errorf("Sprintf(%s, *Sealer) = %q, want codec.Sealer(redacted)", f, out)
			}
		}
	}
}

// TestMarkKeys: the class is recognised by both errors.Is, through
// cockroachdb wraps, fmt's %w and marks, and keeps the cause's message.
func TestMarkKeys(t *testing.T) {
	cause := errors.Newf("codec: key %s is not held", errors.Safe("kek-1"))
	k := codec.MarkKeys(cause)
	tests := []struct {
		name string
		err  error
	}{
		{"marked", k},
		{"wrapped", errors.Wrap(k, "eventlog: session \"s\"")},
		{"wrapped with %w", fmt.Errorf("open: %w", k)},
		{"marked again", errors.Mark(k, codec.ErrCorrupt)},
		{"with a hint", errors.WithHint(k, "give --key-file")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !stderrors.Is(tt.err, codec.ErrKeys) || !errors.Is(tt.err, codec.ErrKeys) {
				t.Errorf("errors.Is(%v, ErrKeys): stdlib %v, cockroachdb %v; want both", tt.err, stderrors.Is(tt.err, codec.ErrKeys), errors.Is(tt.err, codec.ErrKeys))
			}
			if !strings.Contains(tt.err.Error(), "codec: key kek-1 is not held") {
				t.Errorf("message %q lost the cause's", tt.err.Error())
			}
		})
	}
	if codec.MarkKeys(nil) != nil {
		t.Errorf("MarkKeys(nil) != nil")
	}
	if got := fmt.Sprintf("%+v", k); !strings.Contains(got, "codec: key kek-1 is not held") || !strings.Contains(got, "sealed_test.go") {
		t.Errorf("%%+v = %q, want the message and the cause's stack", got)
	}
	if stderrors.Is(cause, codec.ErrKeys) || errors.Is(cause, codec.ErrKeys) {
		t.Errorf("the unmarked cause is in class keys")
	}
}

func TestCheckFrame(t *testing.T) {
	s := mustSealer(t, testKey)
	p := mustPayload(t, smallEvent)
	pack, _ := codec.AppendPack(nil, nil, [][]byte{p, p, p})
	tests := []struct {
		name string
		rec  []byte
		want codec.Frame
		err  string
	}{
		{"version 1", codec.EncodeRecord(nil, p), codec.Frame{Version: 1, Form: 1, Events: 1}, "ok"},
		{"version 2", codec.EncodeEventRecord(nil, p), codec.Frame{Version: 2, Form: 2, Events: 1}, "ok"},
		{"pack", pack, codec.Frame{Version: 3, Form: 3, Events: 3}, "ok"},
		{"sealed record", codec.SealRecord(nil, p, s), codec.Frame{Version: 4, Form: 2, Events: 1}, "ok"},
		{"sealed under another key: the frame is whole", codec.SealRecord(nil, p, mustSealer(t, otherKey)), codec.Frame{Version: 4, Form: 2, Events: 1}, "ok"},
		{"crc", append(codec.EncodeRecord(nil, p)[:len(p)+4:len(p)+4], 0), codec.Frame{}, "corrupt"},
		{"version 0", frame(0, p), codec.Frame{}, "corrupt"},
		{"version 5", frame(5, p), codec.Frame{}, "unsupported"},
		{"pack of no event", frame(3, []byte{0, 1}), codec.Frame{}, "corrupt"},
		{"too short", []byte{1, 2, 3}, codec.Frame{}, "corrupt"},
		{"sealed, unknown form", s.SealBody(nil, 7, 0, p), codec.Frame{}, "corrupt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := codec.CheckFrame(tt.rec, codec.MaxPack)
			if class(err) != tt.err || got != tt.want {
				t.Errorf("CheckFrame = %+v, %v; want %+v, %s", got, err, tt.want, tt.err)
			}
		})
	}
	if _, err := codec.CheckFrame(codec.SealRecord(nil, p, s), 20); class(err) != "corrupt" {
		t.Errorf("CheckFrame over the cap = %v, want corrupt", err)
	}
}

// TestSealedAllocs: sealing into a buffer with room allocates nothing
// but a pack's additional data; opening a record allocates its payload
// alone, as decoding a plain one does.
func TestSealedAllocs(t *testing.T) {
	s := mustSealer(t, testKey)
	p := mustPayload(t, largeEvent)
	small := p[:20]
	rec1, rec2 := codec.SealRecord(nil, small, s), codec.SealRecord(nil, p, s)
	pack, raw := codec.SealPack(nil, nil, [][]byte{p, p}, s)
	dst := make([]byte, 0, 2*len(p))
	tests := []struct {
		name   string
		fn     func()
		max    float64
		noRace bool
	}{
		{"seal form 1", func() { dst = codec.SealRecord(dst[:0], small, s) }, 0, false},
		{"seal form 2", func() { dst = codec.SealRecord(dst[:0], p, s) }, 0, false},
		{"seal a pack", func() { dst, raw = codec.SealPack(dst[:0], raw, [][]byte{p, p}, s) }, 1, false},
		{"open form 1", func() { _, _ = codec.OpenRecord(rec1, s, codec.MaxRecord) }, 1, false},
		{"open form 2", func() { _, _ = codec.OpenRecord(rec2, s, codec.MaxRecord) }, 1, true},
		{"open a pack", func() { _, _ = codec.OpenPack(pack, s) }, 3, true},
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

// TestSealerConcurrent: one Sealer seals and opens from many goroutines
// (run with -race).
func TestSealerConcurrent(t *testing.T) {
	s := mustSealer(t, testKey)
	p := mustPayload(t, smallEvent)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				got, err := codec.OpenRecord(codec.SealRecord(nil, p, s), s, codec.MaxRecord)
				if err != nil || !bytes.Equal(got, p) {
					errs <- fmt.Errorf("round trip: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// FuzzSealed checks the sealed frame's readers on arbitrary bytes, each
// input also with its CRC recomputed (so that mutations reach the checks
// behind it): CheckFrame, OpenRecord and OpenPack never panic and refuse
// with class corrupt (or unsupported, CheckFrame, for a newer version) or
// keys; what opens under testKey seals again and opens to the same
// payloads. The input is also sealed as a payload, alone and in a pack,
// and must open to itself. The seeds in testdata/fuzz/FuzzSealed are
// frames sealed under testKey, so that mutations start from frames that
// open.
func FuzzSealed(f *testing.F) {
	s := mustSealer(f, testKey)
	p := mustPayload(f, smallEvent)
	f.Add(codec.SealRecord(nil, p, s))
	f.Add(codec.SealRecord(nil, p[:20], s))
	pack, _ := codec.SealPack(nil, nil, [][]byte{p, mustPayload(f, largeEvent)}, s)
	f.Add(pack)
	f.Add([]byte{codec.RecordVersionSealed, codec.RecordVersionPack})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		checkSealed(t, s, in)
		if len(in) >= 5 {
			checkSealed(t, s, frame(in[0], in[1:len(in)-4]))
		}
		if len(in) > 0 {
			rec := codec.SealRecord(nil, in, s)
			if got, err := codec.OpenRecord(rec, s, codec.MaxRecord); err != nil || !bytes.Equal(got, in) {
				t.Fatalf("OpenRecord(SealRecord(%x)) = %x, %v", in, got, err)
			}
			pk, _ := codec.SealPack(nil, nil, [][]byte{in, in}, s)
			if got, err := codec.OpenPack(pk, s); err != nil || len(got) != 2 || !bytes.Equal(got[0], in) || !bytes.Equal(got[1], in) {
				t.Fatalf("OpenPack(SealPack(%x twice)) = %d payloads, %v", in, len(got), err)
			}
		}
	})
}

// checkSealed checks the properties of FuzzSealed for one frame.
func checkSealed(t *testing.T, s *codec.Sealer, rec []byte) {
	t.Helper()
	f, ferr := codec.CheckFrame(rec, codec.MaxPack)
	if c := class(ferr); c != "ok" && c != "corrupt" && c != "unsupported" {
		t.Fatalf("CheckFrame(%x) = %v, class %s", rec, ferr, c)
	}
	payload, err := codec.OpenRecord(rec, s, codec.MaxRecord)
	if c := class(err); c != "ok" && c != "corrupt" && c != "keys" {
		t.Fatalf("OpenRecord(%x) = %v, class %s", rec, err, c)
	}
	if err == nil {
		if ferr != nil || f.Version != codec.RecordVersionSealed || f.Events != 1 {
			t.Fatalf("OpenRecord opened %x, which CheckFrame reads as %+v, %v", rec, f, ferr)
		}
		again, err := codec.OpenRecord(codec.SealRecord(nil, payload, s), s, codec.MaxRecord)
		if err != nil || !bytes.Equal(again, payload) {
			t.Fatalf("reseal of the payload of %x: %x, %v", rec, again, err)
		}
	}
	payloads, err := codec.OpenPack(rec, s)
	if c := class(err); c != "ok" && c != "corrupt" && c != "keys" {
		t.Fatalf("OpenPack(%x) = %v, class %s", rec, err, c)
	}
	if err == nil {
		if ferr != nil || f.Form != codec.RecordVersionPack || f.Events != len(payloads) {
			t.Fatalf("OpenPack opened %d events of %x, which CheckFrame reads as %+v, %v", len(payloads), rec, f, ferr)
		}
		pk, _ := codec.SealPack(nil, nil, payloads, s)
		back, err := codec.OpenPack(pk, s)
		if err != nil || len(back) != len(payloads) {
			t.Fatalf("reseal of the pack %x: %d events, %v", rec, len(back), err)
		}
		for i := range back {
			if !bytes.Equal(back[i], payloads[i]) {
				t.Fatalf("reseal of the pack %x changed event %d", rec, i)
			}
		}
	}
}

// TestSealedSeedsOpen opens the checked-in seeds of FuzzSealed, frames
// sealed under testKey by an earlier build: the sealed format is frozen,
// so they must open, and their payloads be stored values, for as long as
// the format lives (and they keep the fuzzer's start inside the seal).
func TestSealedSeedsOpen(t *testing.T) {
	s := mustSealer(t, testKey)
	files, err := filepath.Glob("testdata/fuzz/FuzzSealed/sealed-*")
	if err != nil || len(files) < 4 {
		t.Fatalf("found %d sealed seeds, %v; want at least 4", len(files), err)
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			text := strings.Split(strings.TrimSpace(string(readFile(t, name))), "\n")
			lit, ok := strings.CutPrefix(text[len(text)-1], "[]byte(")
			q, ok2 := strings.CutSuffix(lit, ")")
			unq, err := strconv.Unquote(q)
			if len(text) != 2 || text[0] != "go test fuzz v1" || !ok || !ok2 || err != nil {
				t.Fatalf("not a fuzz seed of one []byte: %v", err)
			}
			rec := []byte(unq)
			var payloads [][]byte
			if codec.IsSealed(rec) && len(rec) > 1 && rec[1] == codec.RecordVersionPack {
				payloads, err = codec.OpenPack(rec, s)
			} else {
				var p []byte
				p, err = codec.OpenRecord(rec, s, codec.MaxRecord)
				payloads = [][]byte{p}
			}
			if err != nil {
				t.Fatalf("the seed does not open: %v", err)
			}
			for i, p := range payloads {
				if err := codec.ValidateValue(p); err != nil {
					t.Errorf("payload %d: %v", i, err)
				}
			}
		})
	}
}
