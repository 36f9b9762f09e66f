package stress

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/cockroachdb/errors"

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
func (c *fleetChecker) check(t *testing.T, ctx context.Context, st store, ids []string) {
	t.Helper()
	for _, id := range ids {
		if err := c.advance(ctx, st, id); err != nil {
			t.Fatalf("session %s: %+v", id, err)
		}
	}
	for _, a := range c.unchecked {
		seen := c.sessions[a.session]
		if seen == nil {
			t.Fatalf("an append to %s was acknowledged, a session the check does not know", a.session)
		}
		b, ok := seen.batches[a.first]
		switch {
		case !ok && a.first+int64(a.n) > seen.next:
			t.Fatalf("session %s: the batch acknowledged at seq %d (%d events) is missing: the session has %d", a.session, a.first, a.n, seen.next)
		case !ok || b.n != a.n || b.hash != a.hash:
			t.Fatalf("session %s: the batch acknowledged at seq %d differs from what is stored", a.session, a.first)
		}
	}
	c.unchecked = c.unchecked[:0]
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
