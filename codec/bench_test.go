package codec_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/benchevents"
)

// Benchmarks of the codec's hot paths against encoding/json on structs
// that mirror the typed views, in the same run:
//
//	go test ./codec -run '^$' -bench . -benchtime 1s -count 5
//
// decode: DecodeRecord + DecodeEvent of a stored record, against
// json.Unmarshal of the line. encode: FromJSON + EncodeRecord of the line,
// against json.Marshal of the decoded struct. export: ToJSON of the stored
// payload, against json.Marshal.

var benchSink int

// benchCase is one measured event: benchevents' case under a name that
// makes one benchmark level.
type benchCase struct {
	name string
	line string
	json func([]byte) (interface{}, error)
}

func benchCases() []benchCase {
	var out []benchCase
	for _, c := range benchevents.Cases {
		out = append(out, benchCase{name: strings.ReplaceAll(c.Name, "/", "-"), line: c.Line, json: c.Unmarshal})
	}
	return out
}

func BenchmarkDecode(b *testing.B) {
	for _, c := range benchCases() {
		line := []byte(c.line)
		rec := codec.EncodeEventRecord(nil, mustPayload(b, c.line))
		b.Run(c.name+"/codec", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(rec)))
			for i := 0; i < b.N; i++ {
				payload, err := codec.DecodeRecord(rec)
				if err != nil {
					b.Fatal(err)
				}
				ev, err := codec.DecodeEvent(payload)
				if err != nil {
					b.Fatal(err)
				}
				benchSink += int(ev.Seq)
			}
		})
		b.Run(c.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for i := 0; i < b.N; i++ {
				if _, err := c.json(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	for _, c := range benchCases() {
		line := []byte(c.line)
		b.Run(c.name+"/codec", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			var mp, rec []byte
			for i := 0; i < b.N; i++ {
				var err error
				mp, err = codec.FromJSON(mp[:0], line, codec.Limits{})
				if err != nil {
					b.Fatal(err)
				}
				rec = codec.EncodeEventRecord(rec[:0], mp)
			}
			benchSink += len(rec)
		})
		v, err := c.json(line)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for i := 0; i < b.N; i++ {
				out, err := json.Marshal(v)
				if err != nil {
					b.Fatal(err)
				}
				benchSink += len(out)
			}
		})
	}
}

func BenchmarkExport(b *testing.B) {
	for _, c := range benchCases() {
		line := []byte(c.line)
		payload := mustPayload(b, c.line)
		b.Run(c.name+"/codec", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			var out []byte
			for i := 0; i < b.N; i++ {
				var err error
				out, _, err = codec.ToJSON(out[:0], payload)
				if err != nil {
					b.Fatal(err)
				}
			}
			if string(out) != c.line {
				b.Fatalf("ToJSON = %s, want %s", out, c.line)
			}
		})
		v, err := c.json(line)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for i := 0; i < b.N; i++ {
				out, err := json.Marshal(v)
				if err != nil {
					b.Fatal(err)
				}
				benchSink += len(out)
			}
		})
	}
}

// TestBenchInputs checks that the benchmark inputs are what they claim:
// canonical, ~1 KB for the message, decodable by both sides.
func TestBenchInputs(t *testing.T) {
	if n := len(benchevents.Message); n < 900 || n > 1400 {
		t.Errorf("benchevents.Message is %d bytes, want about 1 KB", n)
	}
	for _, c := range benchCases() {
		ev, err := codec.ParseEvent([]byte(c.line), codec.Limits{})
		if err != nil {
			t.Fatalf("%s: ParseEvent = %v", c.name, err)
		}
		out, err := ev.AppendJSON(nil)
		if err != nil || string(out) != c.line {
			t.Errorf("%s: not canonical: %s, %v", c.name, out, err)
		}
		v, err := c.json([]byte(c.line))
		if err != nil {
			t.Fatalf("%s: json.Unmarshal = %v", c.name, err)
		}
		if js, err := json.Marshal(v); err != nil || len(js) < len(c.line)*9/10 {
			t.Errorf("%s: json.Marshal of the mirror = %d bytes, %v; want about %d", c.name, len(js), err, len(c.line))
		}
	}
}
