package codec_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/benchevents"
)

// BenchmarkSealed measures what sealing costs, against the same operation
// on plain frames, interleaved in batches within each run so that both
// sides see the same machine load:
//
//	go test ./codec -run '^$' -bench Sealed -benchtime 1s -count 5
//
// ns/op is the sealed side's time per call, plain-ns/op the plain side's,
// and x-plain their ratio plain ÷ sealed (issue 23's "encrypted ÷ plain"
// of a throughput: 0.8 means sealed runs at 80% of plain's speed). The
// cases are benchevents' chunk and message, a 16 KiB tool result, and a
// pack of copies of the message up to codec.PackTarget. encode is
// EncodeEventRecord (AppendPack) against SealRecord (SealPack); frame is
// Unframe (DecodePack) against OpenRecord (OpenPack); decode adds
// DecodeStoredEvent of every payload, what a reader of the store pays.
func BenchmarkSealed(b *testing.B) {
	s := mustSealer(b, testKey)
	type bcase struct {
		name     string
		payloads [][]byte // one: a record; more: a pack
	}
	message := mustPayload(b, benchevents.Message)
	var pack [][]byte
	for n := 0; n == 0 || n+codec.PackSize(message) <= codec.PackTarget; n += codec.PackSize(message) {
		pack = append(pack, message)
	}
	long := mustPayload(b, `{"type":"tool/result","seq":7,"time":1,"data":{"turn":1,"step":1,"callId":"c","content":[{"type":"text","text":"`+
		strings.Repeat("drwxr-xr-x  2 dev dev 4096 Dec  1 09:14 internal/\\n", 320)+`"}],"isError":false},"sourceEventSeqs":[6],"surfaceOp":"append"}`)
	cases := []bcase{
		{"chunk", [][]byte{mustPayload(b, benchevents.Chunk)}},
		{"message", [][]byte{message}},
		{"tool-result-16KiB", [][]byte{long}},
		{"pack-of-messages", pack},
	}
	for _, c := range cases {
		isPack := len(c.payloads) > 1
		var plainRec, sealedRec []byte
		if isPack {
			plainRec, _ = codec.AppendPack(nil, nil, c.payloads)
			sealedRec, _ = codec.SealPack(nil, nil, c.payloads, s)
		} else {
			plainRec = codec.EncodeEventRecord(nil, c.payloads[0])
			sealedRec = codec.SealRecord(nil, c.payloads[0], s)
		}
		var dst, raw []byte
		encode := func(sealed bool) func() error {
			return func() error {
				switch {
				case isPack && sealed:
					dst, raw = codec.SealPack(dst[:0], raw, c.payloads, s)
				case isPack:
					dst, raw = codec.AppendPack(dst[:0], raw, c.payloads)
				case sealed:
					dst = codec.SealRecord(dst[:0], c.payloads[0], s)
				default:
					dst = codec.EncodeEventRecord(dst[:0], c.payloads[0])
				}
				return nil
			}
		}
		frame := func(sealed, decode bool) func() error {
			return func() error {
				var ps [][]byte
				var err error
				switch {
				case isPack && sealed:
					ps, err = codec.OpenPack(sealedRec, s)
				case isPack:
					ps, err = codec.DecodePack(plainRec)
				case sealed:
					var p []byte
					p, err = codec.OpenRecord(sealedRec, s, codec.MaxRecord)
					ps = [][]byte{p}
				default:
					var p []byte
					p, err = codec.Unframe(plainRec, codec.MaxRecord)
					ps = [][]byte{p}
				}
				if err != nil || !decode {
					return err
				}
				for _, p := range ps {
					ev, err := codec.DecodeStoredEvent(p)
					if err != nil {
						return err
					}
					benchSink += int(ev.Seq)
				}
				return nil
			}
		}
		ops := []struct {
			name          string
			sealed, plain func() error
		}{
			{"encode", encode(true), encode(false)},
			{"frame", frame(true, false), frame(false, false)},
			{"decode", frame(true, true), frame(false, true)},
		}
		for _, op := range ops {
			b.Run(c.name+"/"+op.name, func(b *testing.B) {
				const batch = 16
				var sealed, plain time.Duration
				for done := 0; done < b.N; done += batch {
					n := min(batch, b.N-done)
					t0 := time.Now()
					for range n {
						if err := op.sealed(); err != nil {
							b.Fatal(err)
						}
					}
					t1 := time.Now()
					for range n {
						if err := op.plain(); err != nil {
							b.Fatal(err)
						}
					}
					sealed += t1.Sub(t0)
					plain += time.Since(t1)
				}
				per := float64(b.N)
				b.ReportMetric(float64(sealed.Nanoseconds())/per, "ns/op")
				b.ReportMetric(float64(plain.Nanoseconds())/per, "plain-ns/op")
				b.ReportMetric(float64(plain)/float64(sealed), "x-plain")
				b.ReportMetric(float64(len(sealedRec)-len(plainRec)), "sealed-extra-B")
				b.ReportMetric(float64(len(c.payloads)), "events")
			})
		}
	}
}
