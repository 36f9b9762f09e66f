package main

import (
	"context"
	"encoding/json"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/benchevents"
)

// codecResult compares one operation on one event.
type codecResult struct {
	event, op string
	// ours and json are ns per call, per round; ratio is json ÷ ours,
	// per round.
	ours, json, ratio stat
	// Allocations per call (median over rounds).
	oursAllocs, jsonAllocs stat
	// recordBytes is the stored record's size; lineBytes the JSON line's.
	recordBytes, lineBytes int
}

// codecSink keeps results alive so that no call is optimised away.
var codecSink int

// measureCodec times decode and encode of each case against
// encoding/json, interleaved (timePair), one ratio per round.
func measureCodec(ctx context.Context, c config, p progress) ([]codecResult, error) {
	type pair struct {
		res       codecResult
		ours, std func() error
		per       int // events per call of ours and std: ns and allocs are per event
	}
	var pairs []*pair
	for _, cc := range benchevents.Cases {
		line := []byte(cc.Line)
		mp, err := codec.FromJSON(nil, line, codec.Limits{})
		if err != nil {
			return nil, errors.Wrapf(err, "%s", errors.Safe(cc.Name))
		}
		rec := codec.EncodeEventRecord(nil, mp)
		mirror, err := cc.Unmarshal(line)
		if err != nil {
			return nil, errors.Wrapf(err, "%s: encoding/json", errors.Safe(cc.Name))
		}
		var mpBuf, recBuf []byte
		// A pack as the tree holds them: copies of the event up to
		// codec.PackTarget bytes (a pack of one session's events holds
		// different ones; the cost per byte decompressed is the same).
		var same [][]byte
		for n := 0; n == 0 || n+codec.PackSize(mp) <= codec.PackTarget; n += codec.PackSize(mp) {
			same = append(same, mp)
		}
		pack, _ := codec.AppendPack(nil, nil, same)
		pairs = append(pairs,
			&pair{
				res: codecResult{event: cc.Name, op: "decode a record", recordBytes: len(rec), lineBytes: len(line)},
				ours: func() error {
					payload, err := codec.Unframe(rec, codec.MaxRecord)
					if err != nil {
						return err
					}
					ev, err := codec.DecodeStoredEvent(payload)
					codecSink += int(ev.Seq)
					return err
				},
				std: func() error {
					_, err := cc.Unmarshal(line)
					return err
				},
				per: 1,
			},
			&pair{
				res: codecResult{event: cc.Name, op: "decode from a pack", recordBytes: len(rec), lineBytes: len(line)},
				ours: func() error {
					payloads, err := codec.DecodePack(pack)
					if err != nil {
						return err
					}
					for _, p := range payloads {
						ev, err := codec.DecodeStoredEvent(p)
						if err != nil {
							return err
						}
						codecSink += int(ev.Seq)
					}
					return nil
				},
				std: func() error {
					for range same {
						if _, err := cc.Unmarshal(line); err != nil {
							return err
						}
					}
					return nil
				},
				per: len(same),
			},
			&pair{
				res: codecResult{event: cc.Name, op: "encode", recordBytes: len(rec), lineBytes: len(line)},
				ours: func() error {
					var err error
					mpBuf, err = codec.FromJSON(mpBuf[:0], line, codec.Limits{})
					recBuf = codec.EncodeEventRecord(recBuf[:0], mpBuf)
					codecSink += len(recBuf)
					return err
				},
				std: func() error {
					out, err := json.Marshal(mirror)
					codecSink += len(out)
					return err
				},
				per: 1,
			})
	}
	samples := make([]struct{ ours, std, ratio, oursAllocs, stdAllocs []float64 }, len(pairs))
	for r := range c.rounds {
		for i, pr := range pairs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			o, s, err := timePair(c.minTime, c.slice, pr.ours, pr.std)
			if err != nil {
				return nil, errors.Wrapf(err, "%s %s", errors.Safe(pr.res.op), errors.Safe(pr.res.event))
			}
			sm, per := &samples[i], float64(pr.per)
			sm.ours, sm.std, sm.ratio = append(sm.ours, o.NsPerOp/per), append(sm.std, s.NsPerOp/per), append(sm.ratio, s.NsPerOp/o.NsPerOp)
			sm.oursAllocs, sm.stdAllocs = append(sm.oursAllocs, o.AllocsPerOp/per), append(sm.stdAllocs, s.AllocsPerOp/per)
		}
		p.printf("  codec round %d/%d done", r+1, c.rounds)
	}
	out := make([]codecResult, len(pairs))
	for i, pr := range pairs {
		sm := samples[i]
		out[i] = pr.res
		out[i].ours, out[i].json, out[i].ratio = summarize(sm.ours), summarize(sm.std), summarize(sm.ratio)
		out[i].oursAllocs, out[i].jsonAllocs = summarize(sm.oursAllocs), summarize(sm.stdAllocs)
	}
	return out, nil
}
