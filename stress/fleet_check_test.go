package stress

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/rebuild"
)

// fleetChecker is TestFleetPostgres's check after a kill, incremental: it
// reads only what was appended since its last look at a session and
// carries forward what it proved of the prefix before it, so a run's
// checks cost the events stored, not the kills times the events stored.
// A full read and verify of every session from seq 0 (fleetFullCheck)
// still ends the run.
type fleetChecker struct {
	sessions map[string]*fleetSeen
	// unchecked are the acknowledgements read since the last check.
	unchecked []fleetAck
}

// fleetSeen is what the checks proved of a session's prefix up to next:
// each record's frame and CRC, key = seq with no gap, the chain hash
// (chain, over the header record and every payload), every event accepted
// by the fold the store validates with (v) and breaking no turn structure
// (structure), the events whole turns numbered 1..turns, and the batches
// they form, by first seq.
type fleetSeen struct {
	next      int64
	chain     [32]byte
	turns     int64
	v         eventlog.Validator
	structure rebuild.Structure
	batches   map[int64]fleetAck
}

func newFleetChecker() *fleetChecker {
	return &fleetChecker{sessions: map[string]*fleetSeen{}}
}

// acked queues an acknowledgement for the next check.
func (c *fleetChecker) acked(a fleetAck) { c.unchecked = append(c.unchecked, a) }

// check proves what fleetFullCheck proves, with writers still running,
// for what was appended since the last check: the new events of every
// session, then every acknowledgement read since (each at a batch of the
// session, the same events byte for byte; its commit came before its
// line, so before the head this check read).
func (c *fleetChecker) check(ctx context.Context, st store, ids []string) error {
	for _, id := range ids {
		if err := c.advance(ctx, st, id); err != nil {
			return errors.Wrapf(err, "session %s", id)
		}
	}
	for _, a := range c.unchecked {
		seen := c.sessions[a.session]
		if seen == nil {
			return errors.Newf("an append to %s was acknowledged, a session the check does not know", a.session)
		}
		b, ok := seen.batches[a.first]
		switch {
		case !ok && a.first+int64(a.n) > seen.next:
			return errors.Newf("session %s: the batch acknowledged at seq %d (%d events) is missing: the session has %d", a.session, a.first, a.n, seen.next)
		case !ok || b.n != a.n || b.hash != a.hash:
			return errors.Newf("session %s: the batch acknowledged at seq %d differs from what is stored", a.session, a.first)
		}
	}
	c.unchecked = c.unchecked[:0]
	return nil
}

// errEnough stops a read of records at the head the check read.
var errEnough = errors.New("stress: enough records")

// advance reads session id from where the last check of it ended up to
// its head now, and proves the new events.
func (c *fleetChecker) advance(ctx context.Context, st store, id string) error {
	head, err := st.Head(ctx, id)
	if err != nil {
		return err
	}
	seen := c.sessions[id]
	if seen == nil {
		hrec, err := st.HeaderRecord(ctx, id)
		if err != nil {
			return err
		}
		seen = &fleetSeen{chain: eventlog.ChainStart(hrec), v: rebuild.NewValidator(head.Header), batches: map[int64]fleetAck{}}
		c.sessions[id] = seen
	}
	if head.Next < seen.next {
		return errors.Newf("the head says %d events, fewer than the %d checked before", head.Next, seen.next)
	}
	if head.Next == seen.next {
		if head.Chain != seen.chain {
			return errors.Newf("the head's chain hash changed at %d events", head.Next)
		}
		return nil
	}
	var evs []codec.Event
	next, chain := seen.next, seen.chain
	err = st.Records(ctx, id, seen.next, func(seq int64, rec []byte) error {
		if seq >= head.Next {
			return errEnough
		}
		if seq != next {
			return errors.Newf("record key %d where seq %d was expected", seq, next)
		}
		payload, err := codec.DecodeRecord(rec)
		if err != nil {
			return errors.Wrapf(err, "seq %d", seq)
		}
		chain = eventlog.ChainNext(chain, payload)
		ev, err := codec.DecodeEvent(append([]byte(nil), payload...))
		if err != nil {
			return errors.Wrapf(err, "seq %d", seq)
		}
		if ev.Seq != seq {
			return errors.Newf("the record under key %d holds seq %d", seq, ev.Seq)
		}
		if err := seen.v.Validate(&ev); err != nil {
			return errors.Wrapf(err, "seq %d fails validation", seq)
		}
		if breaks := seen.structure.Add(&ev); len(breaks) > 0 {
			return errors.Newf("seq %d: %s", breaks[0].Seq, breaks[0].What)
		}
		evs = append(evs, ev)
		next++
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return err
	}
	if next != head.Next {
		return errors.Newf("the head says %d events, the store holds %d", head.Next, next)
	}
	if chain != head.Chain {
		return errors.Newf("chain hash %x does not match the head's %x", chain[:8], head.Chain[:8])
	}
	batches, err := splitBatchesFrom(evs, seen.turns+1)
	if err != nil {
		return err
	}
	for _, b := range batches {
		h := sha256.New()
		for _, ev := range evs[b.first-seen.next : b.first-seen.next+int64(b.n)] {
			h.Write(ev.Raw)
		}
		seen.batches[b.first] = fleetAck{session: id, first: b.first, n: b.n, hash: fmt.Sprintf("%x", h.Sum(nil))}
	}
	seen.next, seen.chain = next, chain
	seen.turns += int64(len(batches))
	return nil
}

// TestFleetCheckerFires: the incremental check passes a session checked
// in several steps, and fails on each thing it is there to catch: an
// acknowledged batch stored with other bytes, one missing, one that is
// not a batch of the session, and events that are not whole turns.
func TestFleetCheckerFires(t *testing.T) {
	hash := func(evs []codec.Event) string {
		h := sha256.New()
		for _, ev := range evs {
			h.Write(ev.Raw)
		}
		return fmt.Sprintf("%x", h.Sum(nil))
	}
	// notTurns is a turn whose message is not one turnBatch writes.
	notTurns := func(t *testing.T, first, turn int64) []codec.Event {
		var evs []codec.Event
		for i, l := range []string{
			fmt.Sprintf(`{"type":"turn/start","seq":%d,"time":1,"data":{"turn":%d}}`, first, turn),
			fmt.Sprintf(`{"type":"user/message","seq":%d,"time":2,"data":{"content":[{"type":"text","text":"hello"}],"source":{"kind":"user"}},"surfaceOp":"append"}`, first+1),
			fmt.Sprintf(`{"type":"turn/end","seq":%d,"time":3,"data":{"turn":%d,"reason":{"kind":"completed"}}}`, first+2, turn),
		} {
			ev, err := codec.ParseEvent([]byte(l), codec.Limits{})
			if err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
			evs = append(evs, ev)
		}
		return evs
	}
	for _, tc := range []struct {
		name string
		// last appends the last turn (at seq next, turn number turn) and
		// returns the acknowledgement to check, if any.
		last func(t *testing.T, st store, next, turn int64) *fleetAck
		want string // in the error; "" for none
	}{
		{"clean", func(t *testing.T, st store, next, turn int64) *fleetAck {
			evs := turnBatch(t, "c", next, turn, 2)
			appendTo(t, st, evs)
			return &fleetAck{session: "s", first: next, n: len(evs), hash: hash(evs)}
		}, ""},
		{"other bytes", func(t *testing.T, st store, next, turn int64) *fleetAck {
			evs := turnBatch(t, "c", next, turn, 2)
			appendTo(t, st, evs)
			return &fleetAck{session: "s", first: next, n: len(evs), hash: hash(turnBatch(t, "d", next, turn, 2))}
		}, "differs"},
		{"missing", func(t *testing.T, st store, next, turn int64) *fleetAck {
			return &fleetAck{session: "s", first: next, n: 4, hash: hash(turnBatch(t, "c", next, turn, 2))}
		}, "is missing"},
		{"not a batch", func(t *testing.T, st store, next, turn int64) *fleetAck {
			evs := turnBatch(t, "c", next, turn, 2)
			appendTo(t, st, evs)
			return &fleetAck{session: "s", first: next + 1, n: len(evs) - 1, hash: hash(evs[1:])}
		}, "differs"},
		{"not whole turns", func(t *testing.T, st store, next, turn int64) *fleetAck {
			appendTo(t, st, notTurns(t, next, turn))
			return nil
		}, `text "hello"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, err := sessionlog.Open(ctx, filepath.Join(t.TempDir(), "s.db"), storeOptions(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			st := s.(store)
			if err := st.Create(ctx, codec.NewSessionHeader("s", 1.7e12, "/work", "", 0)); err != nil {
				t.Fatal(err)
			}
			c := newFleetChecker()
			// Two turns checked in two steps: the state carries over.
			next := int64(0)
			for turn := int64(1); turn <= 2; turn++ {
				evs := turnBatch(t, fmt.Sprintf("t%d", turn), next, turn, int(turn))
				appendTo(t, st, evs)
				c.acked(fleetAck{session: "s", first: next, n: len(evs), hash: hash(evs)})
				if err := c.check(ctx, st, []string{"s"}); err != nil {
					t.Fatalf("turn %d: %+v", turn, err)
				}
				next += int64(len(evs))
			}
			if a := tc.last(t, st, next, 3); a != nil {
				c.acked(*a)
			}
			err = c.check(ctx, st, []string{"s"})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("check: %+v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("check = %v, want an error saying %q", err, tc.want)
			}
			if tc.want == "" && c.sessions["s"].turns != 3 {
				t.Fatalf("the checker counted %d turns, want 3", c.sessions["s"].turns)
			}
		})
	}
}

func appendTo(t *testing.T, st store, evs []codec.Event) {
	t.Helper()
	if err := st.Append(context.Background(), "s", evs); err != nil {
		t.Fatalf("append: %+v", err)
	}
}
