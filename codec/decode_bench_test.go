package codec_test

import (
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/codec"
)

// BenchmarkDecodeVsJSON measures what a reader of a stored (uncompressed)
// event payload pays, validation included, against encoding/json on the
// same event, interleaved in batches within each run so that both sides
// see the same machine load:
//
//	go test ./codec -run '^$' -bench DecodeVsJSON -benchtime 2s -count 5
//
// ns/op is the codec's time per event, json-ns/op encoding/json's, and
// x-json their ratio (how many times faster the codec is). twostep is
// ValidateValue then DecodeEvent; stored is DecodeStoredEvent, which
// does both in one pass.
func BenchmarkDecodeVsJSON(b *testing.B) {
	for _, c := range benchCases() {
		line := []byte(c.line)
		payload := mustPayload(b, c.line)
		paths := []struct {
			name string
			fn   func([]byte) (codec.Event, error)
		}{
			{"twostep", func(p []byte) (codec.Event, error) {
				if err := codec.ValidateValue(p); err != nil {
					return codec.Event{}, err
				}
				return codec.DecodeEvent(p)
			}},
			{"stored", codec.DecodeStoredEvent},
		}
		for _, path := range paths {
			b.Run(c.name+"/"+path.name, func(b *testing.B) {
				const batch = 32
				var ours, std time.Duration
				for done := 0; done < b.N; done += batch {
					n := min(batch, b.N-done)
					t0 := time.Now()
					for range n {
						ev, err := path.fn(payload)
						if err != nil {
							b.Fatal(err)
						}
						benchSink += int(ev.Seq)
					}
					t1 := time.Now()
					for range n {
						if _, err := c.json(line); err != nil {
							b.Fatal(err)
						}
					}
					ours += t1.Sub(t0)
					std += time.Since(t1)
				}
				b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "ns/op")
				b.ReportMetric(float64(std.Nanoseconds())/float64(b.N), "json-ns/op")
				b.ReportMetric(float64(std)/float64(ours), "x-json")
				b.ReportMetric(testing.AllocsPerRun(100, func() { _, _ = path.fn(payload) }), "codec-allocs/op")
			})
		}
	}
}
