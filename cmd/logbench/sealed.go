package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/benchevents"
)

// sealedResult compares one operation on sealed frames (issue 23) with
// the same on plain ones, and a decode also with encoding/json.
type sealedResult struct {
	event, op string
	// sealed, plain and json are ns per event, per round; ratio is
	// plain ÷ sealed per round (the sealed side's speed against the
	// plain one's: 0.8× is 80%), jsonRatio json ÷ sealed.
	sealed, plain, json, ratio, jsonRatio stat
	hasJSON                               bool
	// sealedAllocs are the sealed side's allocations per event (median).
	sealedAllocs stat
	// extra is what sealing adds to the frame, in bytes.
	extra int
}

// sealedKey is the data key of the measure: a fixed one, as good as any
// for timing.
var sealedKey = [codec.DataKeySize]byte{'l', 'o', 'g', 'b', 'e', 'n', 'c', 'h'}

// measureSealed times, for each event of benchevents, the decode of its
// record and of a pack of copies of it (as measureCodec does) and the
// encode of its record, each sealed against plain, interleaved (timePair),
// one ratio per round; the decodes also against encoding/json.
func measureSealed(ctx context.Context, c config, p progress) ([]sealedResult, error) {
	s, err := codec.NewSealer(sealedKey[:])
	if err != nil {
		return nil, err
	}
	type measure struct {
		res           sealedResult
		sealed, plain func() error
		json          func() error // nil for an encode
		per           int
	}
	var ms []*measure
	for _, cc := range benchevents.Cases {
		line := []byte(cc.Line)
		mp, err := codec.FromJSON(nil, line, codec.Limits{})
		if err != nil {
			return nil, errors.Wrapf(err, "%s", errors.Safe(cc.Name))
		}
		var same [][]byte
		for n := 0; n == 0 || n+codec.PackSize(mp) <= codec.PackTarget; n += codec.PackSize(mp) {
			same = append(same, mp)
		}
		rec, sealedRec := codec.EncodeEventRecord(nil, mp), codec.SealRecord(nil, mp, s)
		pack, _ := codec.AppendPack(nil, nil, same)
		sealedPack, _ := codec.SealPack(nil, nil, same, s)
		decodeAll := func(payloads [][]byte) error {
			for _, p := range payloads {
				ev, err := codec.DecodeStoredEvent(p)
				if err != nil {
					return err
				}
				codecSink += int(ev.Seq)
			}
			return nil
		}
		jsonN := func(n int) func() error {
			return func() error {
				for range n {
					if _, err := cc.Unmarshal(line); err != nil {
						return err
					}
				}
				return nil
			}
		}
		var buf []byte
		ms = append(ms,
			&measure{
				res: sealedResult{event: cc.Name, op: "decode a record", extra: len(sealedRec) - len(rec)},
				sealed: func() error {
					payload, err := codec.OpenRecord(sealedRec, s, codec.MaxRecord)
					if err != nil {
						return err
					}
					return decodeAll([][]byte{payload})
				},
				plain: func() error {
					payload, err := codec.Unframe(rec, codec.MaxRecord)
					if err != nil {
						return err
					}
					return decodeAll([][]byte{payload})
				},
				json: jsonN(1),
				per:  1,
			},
			&measure{
				res: sealedResult{event: cc.Name, op: "decode from a pack", extra: len(sealedPack) - len(pack)},
				sealed: func() error {
					payloads, err := codec.OpenPack(sealedPack, s)
					if err != nil {
						return err
					}
					return decodeAll(payloads)
				},
				plain: func() error {
					payloads, err := codec.DecodePack(pack)
					if err != nil {
						return err
					}
					return decodeAll(payloads)
				},
				json: jsonN(len(same)),
				per:  len(same),
			},
			&measure{
				res:    sealedResult{event: cc.Name, op: "encode a record", extra: len(sealedRec) - len(rec)},
				sealed: func() error { buf = codec.SealRecord(buf[:0], mp, s); codecSink += len(buf); return nil },
				plain:  func() error { buf = codec.EncodeEventRecord(buf[:0], mp); codecSink += len(buf); return nil },
				per:    1,
			})
	}
	samples := make([]struct{ sealed, plain, json, ratio, jsonRatio, allocs []float64 }, len(ms))
	for r := range c.rounds {
		for i, m := range ms {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			sd, pl, err := timePair(c.minTime, c.slice, m.sealed, m.plain)
			if err != nil {
				return nil, errors.Wrapf(err, "%s %s", errors.Safe(m.res.op), errors.Safe(m.res.event))
			}
			sm, per := &samples[i], float64(m.per)
			sm.sealed, sm.plain = append(sm.sealed, sd.NsPerOp/per), append(sm.plain, pl.NsPerOp/per)
			sm.ratio, sm.allocs = append(sm.ratio, pl.NsPerOp/sd.NsPerOp), append(sm.allocs, sd.AllocsPerOp/per)
			if m.json != nil {
				sd, js, err := timePair(c.minTime, c.slice, m.sealed, m.json)
				if err != nil {
					return nil, errors.Wrapf(err, "%s %s against encoding/json", errors.Safe(m.res.op), errors.Safe(m.res.event))
				}
				sm.json, sm.jsonRatio = append(sm.json, js.NsPerOp/per), append(sm.jsonRatio, js.NsPerOp/sd.NsPerOp)
			}
		}
		p.printf("  sealed round %d/%d done", r+1, c.rounds)
	}
	out := make([]sealedResult, len(ms))
	for i, m := range ms {
		sm := samples[i]
		out[i] = m.res
		out[i].sealed, out[i].plain, out[i].ratio = summarize(sm.sealed), summarize(sm.plain), summarize(sm.ratio)
		out[i].sealedAllocs = summarize(sm.allocs)
		if m.json != nil {
			out[i].hasJSON = true
			out[i].json, out[i].jsonRatio = summarize(sm.json), summarize(sm.jsonRatio)
		}
	}
	return out, nil
}

func (r *report) writeSealed(b *strings.Builder) {
	b.WriteString("## Sealed frames against plain\n\n")
	b.WriteString("Encryption at rest (issue 23), at the frame: what a reader and a writer pay for sealed frames\n" +
		"(`codec.OpenRecord`, `codec.OpenPack`, `codec.SealRecord`: AES-256-GCM under a session's data key, after S2)\n" +
		"against the plain ones of the codec section (`codec.Unframe`, `codec.DecodePack`, `codec.EncodeEventRecord`),\n" +
		"the decodes followed by `codec.DecodeStoredEvent` of each event, per event; the decodes also against\n" +
		"`json.Unmarshal` of the line. The store is not in these figures: a store that seals is issue 23's next step.\n" +
		"Speed is plain ns ÷ sealed ns per round (0.8× means the sealed side runs at 80% of the plain one's speed);\n" +
		"each pair timed interleaved, as in the codec section.\n\n")
	t := newTable("event", "operation", "sealed ns/op", "plain ns/op", "speed, sealed ÷ plain", "encoding/json ÷ sealed", "sealed allocs/op", "bytes sealing adds")
	t.align[1] = false
	for _, sr := range r.sealed {
		js := "–"
		if sr.hasJSON {
			js = ratioRange(sr.jsonRatio)
		}
		t.add(sr.event, sr.op, num(sr.sealed.Median), num(sr.plain.Median), ratioRange(sr.ratio), js, num(sr.sealedAllocs.Median), num(float64(sr.extra)))
	}
	t.write(b)
}

// sealedTargetRow adds issue 23's target of the frame to the targets'
// table: decode of an assistant/message from a sealed pack ≥ 0.8× the
// plain one's speed, and still ≥ 3× encoding/json's.
func (r *report) sealedTargetRow(t *table, verdict func(bool) string, missing func(measure, target string)) {
	const measure, target = "decode an assistant/message from a sealed pack: speed against a plain pack, and against encoding/json (issue 23)", "≥ 0.8×, ≥ 3×"
	for _, sr := range r.sealed {
		if sr.event == "assistant/message" && sr.op == "decode from a pack" {
			v, j := sr.ratio.Median, sr.jsonRatio.Median
			t.add(measure, target, fmt.Sprintf("%s, %s", ratio(v), ratio(j)), verdict(v >= 0.8 && j >= 3))
			return
		}
	}
	missing(measure, target)
}
