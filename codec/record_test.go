package codec_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frame builds a record from a version byte and a payload with a correct
// CRC, so that tests reach the checks behind the CRC.
func frame(version byte, payload []byte) []byte {
	rec := append([]byte{version}, payload...)
	return binary.BigEndian.AppendUint32(rec, crc32.Checksum(rec, castagnoli))
}

const smallEvent = `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`

func mustPayload(t testing.TB, js string) []byte {
	t.Helper()
	mp, err := codec.FromJSON(nil, []byte(js), codec.Limits{})
	if err != nil {
		t.Fatalf("FromJSON(%s) = %v", js, err)
	}
	return mp
}

// TestRecordRoundTrip checks EncodeRecord/DecodeRecord on several values
// and that EncodeRecord appends to dst.
func TestRecordRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		js   string
	}{
		{name: "event", js: smallEvent},
		{name: "scalar", js: `7`},
		{name: "null", js: `null`},
		{name: "lone surrogate", js: `{"s":"\ud800x"}`},
		{name: "large", js: `{"text":"` + strings.Repeat("é", 40000) + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload := mustPayload(t, tt.js)
			rec := codec.EncodeRecord([]byte("keep"), payload)
			if string(rec[:4]) != "keep" {
				t.Fatalf("EncodeRecord overwrote dst")
			}
			rec = rec[4:]
			if len(rec) != len(payload)+5 || rec[0] != codec.RecordVersion {
				t.Fatalf("EncodeRecord = %d bytes, version %d; want %d bytes, version %d", len(rec), rec[0], len(payload)+5, codec.RecordVersion)
			}
			if want := frame(codec.RecordVersion, payload); !bytes.Equal(rec, want) {
				t.Fatalf("EncodeRecord = %x, want %x", rec, want)
			}
			got, err := codec.DecodeRecord(rec)
			if err != nil {
				t.Fatalf("DecodeRecord = %v", err)
			}
			if !bytes.Equal(got, payload) {
				t.Errorf("DecodeRecord = %x, want %x", got, payload)
			}
			js, _, err := codec.ToJSON(nil, got)
			if err != nil || string(js) != tt.js {
				t.Errorf("ToJSON(DecodeRecord) = %.80s, %v; want %.80s", js, err, tt.js)
			}
		})
	}
}

// TestRecordTruncations checks that every prefix of a record is refused
// as corrupt.
func TestRecordTruncations(t *testing.T) {
	rec := codec.EncodeRecord(nil, mustPayload(t, smallEvent))
	for n := 0; n < len(rec); n++ {
		_, err := codec.DecodeRecord(rec[:n])
		if class(err) != "corrupt" {
			t.Errorf("DecodeRecord(first %d of %d bytes) = %v, want corrupt", n, len(rec), err)
		}
	}
	// A record whose payload is truncated but whose CRC is right.
	payload := mustPayload(t, smallEvent)
	for n := 0; n < len(payload); n++ {
		_, err := codec.DecodeRecord(frame(codec.RecordVersion, payload[:n]))
		if class(err) != "corrupt" {
			t.Errorf("DecodeRecord(payload cut to %d of %d, CRC fixed) = %v, want corrupt", n, len(payload), err)
		}
	}
}

// TestRecordBitFlips flips every bit of a small record: CRC32C detects all
// of them, so each must be refused as corrupt, never accepted or panicking.
func TestRecordBitFlips(t *testing.T) {
	rec := codec.EncodeRecord(nil, mustPayload(t, smallEvent))
	for i := range rec {
		for bit := 0; bit < 8; bit++ {
			damaged := bytes.Clone(rec)
			damaged[i] ^= 1 << bit
			_, err := codec.DecodeRecord(damaged)
			if class(err) != "corrupt" {
				t.Errorf("DecodeRecord(bit %d of byte %d flipped) = %v, want corrupt", bit, i, err)
			}
		}
	}
}

// TestRecordRefusals checks the frame and payload rules with a correct
// CRC, so that each check is reached on its own.
func TestRecordRefusals(t *testing.T) {
	good := mustPayload(t, smallEvent)
	tests := []struct {
		name string
		rec  []byte
		want string
	}{
		{name: "good", rec: frame(1, good), want: "ok"},
		{name: "version 3, a pack", rec: frame(3, good), want: "corrupt"},
		{name: "version 4, sealed", rec: frame(4, good), want: "unsupported"},
		{name: "version 5", rec: frame(5, good), want: "unsupported"},
		{name: "version 2, not s2", rec: frame(2, good), want: "corrupt"},
		{name: "version 255", rec: frame(255, good), want: "unsupported"},
		{name: "version 0", rec: frame(0, good), want: "corrupt"},
		{name: "empty payload", rec: frame(1, nil), want: "corrupt"},
		{name: "trailing byte", rec: frame(1, append(bytes.Clone(good), 0x00)), want: "corrupt"},
		{name: "two values", rec: frame(1, append(bytes.Clone(good), good...)), want: "corrupt"},
		{name: "integer key", rec: frame(1, []byte{0x81, 0x01, 0x02}), want: "corrupt"},
		{name: "nil key", rec: frame(1, []byte{0x81, 0xc0, 0x02}), want: "corrupt"},
		{name: "array key", rec: frame(1, []byte{0x81, 0x90, 0x02}), want: "corrupt"},
		{name: "float32", rec: frame(1, []byte{0xca, 0x3f, 0x80, 0x00, 0x00}), want: "corrupt"},
		{name: "bin8", rec: frame(1, []byte{0xc4, 0x01, 0x41}), want: "corrupt"},
		{name: "bin16", rec: frame(1, []byte{0xc5, 0x00, 0x01, 0x41}), want: "corrupt"},
		{name: "fixext1", rec: frame(1, []byte{0xd4, 0x01, 0x00}), want: "corrupt"},
		{name: "ext8", rec: frame(1, []byte{0xc7, 0x01, 0x05, 0x00}), want: "corrupt"},
		{name: "timestamp ext", rec: frame(1, []byte{0xd6, 0xff, 0, 0, 0, 1}), want: "corrupt"},
		{name: "never used 0xc1", rec: frame(1, []byte{0xc1}), want: "corrupt"},
		{name: "nested ext", rec: frame(1, []byte{0x81, 0xa1, 'a', 0xd4, 0x01, 0x00}), want: "corrupt"},
		{name: "duplicate key", rec: frame(1, []byte{0x82, 0xa1, 'a', 0x01, 0xa1, 'a', 0x02}), want: "corrupt"},
		{name: "duplicate key different header width", rec: frame(1, []byte{0x82, 0xa1, 'a', 0x01, 0xd9, 0x01, 'a', 0x02}), want: "corrupt"},
		{name: "duplicate nested key", rec: frame(1, []byte{0x81, 0xa1, 'x', 0x82, 0xa1, 'b', 0xc0, 0xa1, 'b', 0xc0}), want: "corrupt"},
		{name: "invalid UTF-8 string", rec: frame(1, []byte{0xa2, 0xc3, 0x28}), want: "corrupt"},
		{name: "invalid UTF-8 key", rec: frame(1, []byte{0x81, 0xa1, 0xff, 0x01}), want: "corrupt"},
		{name: "surrogate pair as two WTF-8 units", rec: frame(1, []byte{0xa6, 0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80}), want: "corrupt"},
		{name: "lone surrogate", rec: frame(1, []byte{0xa3, 0xed, 0xa0, 0x80}), want: "ok"},
		{name: "NaN", rec: frame(1, []byte{0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1}), want: "corrupt"},
		{name: "infinity", rec: frame(1, []byte{0xcb, 0x7f, 0xf0, 0, 0, 0, 0, 0, 0}), want: "corrupt"},
		{name: "array count beyond bytes", rec: frame(1, []byte{0xdd, 0x7f, 0xff, 0xff, 0xff, 0x01}), want: "corrupt"},
		{name: "map count beyond bytes", rec: frame(1, []byte{0xdf, 0xff, 0xff, 0xff, 0xff}), want: "corrupt"},
		{name: "string length beyond bytes", rec: frame(1, []byte{0xdb, 0x7f, 0xff, 0xff, 0xff, 'a'}), want: "corrupt"},
		{name: "truncated int", rec: frame(1, []byte{0xcd, 0x01}), want: "corrupt"},
		{name: "fixed-width int", rec: frame(1, []byte{0xd3, 0, 0, 0, 0, 0, 0, 0, 5}), want: "ok"},
		{name: "uint64 beyond int64", rec: frame(1, []byte{0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), want: "ok"},
		{name: "deep nesting", rec: frame(1, append(bytes.Repeat([]byte{0x91}, 2000), 0x01)), want: "corrupt"},
		{name: "nesting at 1024", rec: frame(1, append(bytes.Repeat([]byte{0x91}, 1024), 0x01)), want: "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload, err := codec.DecodeRecord(tt.rec)
			if got := class(err); got != tt.want {
				t.Fatalf("DecodeRecord(%.40x) = %v (class %s), want %s", tt.rec, err, got, tt.want)
			}
			if err == nil {
				if _, _, err := codec.ToJSON(nil, payload); err != nil {
					t.Errorf("ToJSON(DecodeRecord(%.40x)) = %v, want success", tt.rec, err)
				}
			}
		})
	}
}

// TestRecordSizeCap checks that a record over MaxRecord is refused before
// its CRC is computed.
func TestRecordSizeCap(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates MaxRecord bytes")
	}
	rec := make([]byte, codec.MaxRecord+1)
	_, err := codec.DecodeRecord(rec)
	if class(err) != "corrupt" || !strings.Contains(err.Error(), "cap") {
		t.Errorf("DecodeRecord(%d bytes) = %v, want corrupt naming the cap", len(rec), err)
	}
}

// TestValidateValue checks ValidateValue on its own.
func TestValidateValue(t *testing.T) {
	tests := []struct {
		name string
		mp   []byte
		want string
	}{
		{name: "from JSON", mp: mustPayload(t, `{"a":[1,"b",null,true,0.5]}`), want: "ok"},
		{name: "empty", mp: nil, want: "corrupt"},
		{name: "trailing", mp: []byte{0x01, 0x01}, want: "corrupt"},
		{name: "bin", mp: []byte{0xc4, 0x00}, want: "corrupt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := class(codec.ValidateValue(tt.mp)); got != tt.want {
				t.Errorf("ValidateValue(%x) class = %s, want %s", tt.mp, got, tt.want)
			}
		})
	}
}

func TestChecksumMismatch(t *testing.T) {
	good := codec.EncodeRecord(nil, []byte{0xc0})
	flipped := bytes.Clone(good)
	flipped[1] ^= 0x01
	tests := []struct {
		name string
		rec  []byte
		want bool
	}{
		{"whole", good, false},
		{"a payload bit flipped", flipped, true},
		{"trailer cut", good[:len(good)-1], true},
		{"shorter than a frame", good[:4], false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := codec.ChecksumMismatch(tt.rec); got != tt.want {
				t.Errorf("ChecksumMismatch(%x) = %v, want %v", tt.rec, got, tt.want)
			}
		})
	}
}
