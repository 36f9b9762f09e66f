package stress

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/pglog"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/verify"
)

// checkStaged checks the sessions the child forked or imported: each one
// reported is published, and each one published is whole: a fork holds
// exactly its source's events up to the fork point, an import exactly the
// generated session (same chain hash); both verify clean.
func (r *crashRun) checkStaged(ctx context.Context, st store, n int, log *roundLog) {
	t := r.t
	ids, err := st.SessionIDs(ctx)
	if err != nil {
		t.Fatalf("round %d: %+v", n, err)
	}
	published := map[string]bool{}
	for _, id := range ids {
		published[id] = true
		if r.known[id] || contains(r.ids, id) {
			r.known[id] = true
			continue
		}
		r.known[id] = true
		c := &sessionCheck{t: t, st: st, round: n, id: id, tot: crashTotals{types: map[string]int64{}}}
		switch {
		case strings.Contains(id, forkMark):
			c.err = c.fork(ctx)
			c.tot.forks++
		case strings.HasPrefix(id, importPrefix):
			c.err = c.imported(ctx)
			c.tot.imports++
		default:
			c.errorf("the store holds a session nobody created")
		}
		if c.err != nil {
			t.Fatalf("round %d: session %s: %+v", n, id, c.err)
		}
		if !log.staged[id] {
			c.tot.unreportedStaged++
		}
		r.tot.add(&c.tot)
	}
	for id := range log.staged {
		if !published[id] {
			t.Errorf("round %d: session %s was reported forked or imported, but the store does not hold it", n, id)
		}
	}
}

// fork checks a fork child: its events are its source's up to the fork
// point (seedLength), byte for byte, and nothing more; it verifies clean.
func (c *sessionCheck) fork(ctx context.Context) error {
	head, err := c.st.Head(ctx, c.id)
	if err != nil {
		return err
	}
	h := head.Header
	if head.Next != h.SeedLength {
		c.errorf("a fork of %s with seedLength %d holds %d events", h.ParentSession, h.SeedLength, head.Next)
	}
	mine, err := payloadHashes(ctx, c.st, c.id)
	if err != nil {
		return err
	}
	theirs, err := payloadHashes(ctx, c.st, h.ParentSession)
	if err != nil {
		return err
	}
	for i := range mine {
		if i >= len(theirs) || mine[i] != theirs[i] {
			c.errorf("seq %d differs from the same seq of its source %s", i, h.ParentSession)
			break
		}
	}
	return c.verify(ctx, "a fork after the kill")
}

// imported checks an imported session: its head's event count and chain
// hash are those of the session loggen generates from the seed in its id,
// and it verifies clean.
func (c *sessionCheck) imported(ctx context.Context) error {
	seed, err := strconv.ParseInt(strings.TrimPrefix(c.id, importPrefix), 10, 64)
	if err != nil {
		return err
	}
	h, src, err := generated(c.id, seed)
	if err != nil {
		return err
	}
	chain := eventlog.ChainStart(codec.EncodeRecord(nil, h.Raw))
	var events int64
	for {
		ev, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		chain = eventlog.ChainNext(chain, ev.Raw)
		events++
	}
	head, err := c.st.Head(ctx, c.id)
	if err != nil {
		return err
	}
	if head.Next != events || head.Chain != chain {
		c.errorf("holds %d events with chain %x; the imported session has %d with chain %x", head.Next, head.Chain, events, chain)
	}
	return c.verify(ctx, "an import after the kill")
}

// payloadHashes returns the SHA-256 of every stored event payload of a
// session, in seq order.
func payloadHashes(ctx context.Context, st store, id string) ([][32]byte, error) {
	var out [][32]byte
	err := st.Records(ctx, id, 0, func(seq int64, rec []byte) error {
		payload, err := codec.DecodeRecord(rec)
		if err != nil {
			return err
		}
		out = append(out, sha256.Sum256(payload))
		return nil
	})
	return out, err
}

// unpublished lists the sessions of the store at target that were staged
// (by an import or a fork) and never published. On PostgreSQL, that is a
// session row not marked published (pglog's package doc).
func unpublished(target string) ([]string, error) {
	if pglog.IsURL(target) {
		return pgUnpublished(target)
	}
	return boltUnpublished(target)
}

// boltUnpublished lists the session buckets without a head record, per
// the layout in eventlog's package doc. It reads the file with bbolt
// directly, read-only.
func boltUnpublished(path string) ([]string, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 30 * time.Second})
	if err != nil {
		return nil, errors.Wrapf(err, "open %s with bbolt", errors.Safe(path))
	}
	var out []string
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("sessions"))
		if b == nil {
			return nil
		}
		return b.ForEachBucket(func(k []byte) error {
			if b.Bucket(k).Get([]byte("head")) == nil {
				out = append(out, string(k))
			}
			return nil
		})
	})
	return out, errors.CombineErrors(err, db.Close())
}

// sessionCheck checks one session after a kill: it verifies, holds every
// event reported durable, gets the right crash closers from loop.Open,
// takes one more turn and verifies again. Failures of the claims are
// t.Errorf; err is for the checks that could not run.
type sessionCheck struct {
	t     *testing.T
	st    store
	round int
	id    string
	from  int64            // the session's length before the child's round
	want  map[int64]string // the events reported durable: seq → payload hash
	seed  int64
	// repair is what the last crash left open, when the parent left it for
	// this round's child to close; leaveOpen asks to leave this crash's
	// open turn the same way, and left is then what it left open.
	repair    *openState
	leaveOpen bool
	left      *openState
	tot       crashTotals
	next      int64 // the session's length after the check
	err       error
}

func (c *sessionCheck) errorf(format string, args ...any) {
	c.t.Errorf("round %d: session %s: %s", c.round, c.id, fmt.Sprintf(format, args...))
}

func (c *sessionCheck) run(ctx context.Context) error {
	head, err := c.st.Head(ctx, c.id)
	if errors.Is(err, eventlog.ErrNotFound) {
		// Killed before the loop created it.
		for _, seq := range sortedKeys(c.want) {
			c.errorf("seq %d was reported durable, but the session does not exist", seq)
			c.tot.lost++
		}
		return nil
	}
	if err != nil {
		return err
	}
	if err := c.verify(ctx, "after the kill"); err != nil {
		return err
	}

	// Every durable event is there, with its payload.
	c.tot.durable += int64(len(c.want))
	left := make(map[int64]string, len(c.want))
	for seq, h := range c.want {
		left[seq] = h
	}
	err = c.st.Records(ctx, c.id, 0, func(seq int64, rec []byte) error {
		h, ok := left[seq]
		if !ok {
			return nil
		}
		delete(left, seq)
		payload, err := codec.DecodeRecord(rec)
		if err != nil {
			return err
		}
		if got := sha256.Sum256(payload); hex.EncodeToString(got[:]) != h {
			c.errorf("seq %d: stored payload hash %x, the child reported %s durable", seq, got, h)
			c.tot.lost++
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, seq := range sortedKeys(left) {
		c.errorf("seq %d was reported durable but is not stored (the session has %d events)", seq, head.Next)
		c.tot.lost++
	}

	// What the kill left: counted, and the closers it calls for.
	evs, err := readSession(ctx, c.st, c.id, 0)
	if err != nil {
		return err
	}
	for i := c.from; i < int64(len(evs)); i++ {
		c.count(&evs[i])
		if _, ok := c.want[i]; !ok {
			c.tot.unreported++
		}
	}
	if c.repair != nil && int64(len(evs)) > c.from {
		// The child's loop.Open closed the turn the parent left open:
		// its first events are the closers.
		want := int64(len(c.repair.pending) + 1)
		if c.repair.inStep {
			want++
		}
		end := min(c.from+want, int64(len(evs)))
		before := c.tot.closers
		if err := c.checkClosers(*c.repair, evs[c.from:end]); err != nil {
			return err
		}
		c.tot.childClosers += c.tot.closers - before
	}
	o := openAt(evs)
	if o.inTurn {
		c.tot.interrupted++
	}
	if o.inStep {
		c.tot.openSteps++
	}
	c.tot.pending += int64(len(o.pending))
	if len(evs) > 0 && evs[len(evs)-1].Type == codec.TypeCompactStart {
		c.tot.inert++
	}
	if o.inTurn && c.leaveOpen {
		c.tot.leftOpen++
		c.left = &o
		c.next = int64(len(evs))
		return nil
	}

	w := newWorkload(c.id, c.seed, true /* calm */)
	if err := w.open(ctx, c.st); err != nil {
		return err
	}
	closers, err := readSession(ctx, c.st, c.id, int64(len(evs)))
	if err != nil {
		return err
	}
	if err := c.checkClosers(o, closers); err != nil {
		return err
	}

	out, err := w.turn(ctx)
	if err != nil {
		return err
	}
	if out.Reason != "completed" {
		c.errorf("the turn after the crash ended %s (%s %s)", out.Reason, out.Code, out.Message)
	}
	c.tot.turns++
	if err := c.verify(ctx, "after the crash closers and one more turn"); err != nil {
		return err
	}
	head, err = c.st.Head(ctx, c.id)
	c.next = head.Next
	return err
}

// checkClosers checks the events loop.Open appended after a kill left o:
// none when no turn was open; else, per docs/loop.md, a tool/result for each
// pending call (isError, InterruptedError, citing its tool/call when one
// was logged), step/end if a step was open, then turn/end interrupted, all
// with the time of the last event before them.
func (c *sessionCheck) checkClosers(o openState, got []codec.Event) error {
	if !o.inTurn {
		if len(got) != 0 {
			c.errorf("no turn was open, but loop.Open appended %d events %v", len(got), types(got))
		}
		return nil
	}
	want := len(o.pending) + 1
	if o.inStep {
		want++
	}
	if len(got) != want {
		c.errorf("loop.Open appended %d closers %v, want %d (pending calls %d, open step %v)",
			len(got), types(got), want, len(o.pending), o.inStep)
		return nil
	}
	c.tot.closerBatches++
	c.tot.closers += int64(len(got))
	for i := range got {
		ev := &got[i]
		if ev.Time != o.lastTime {
			c.errorf("seq %d: closer time %v, want the last event's %v", ev.Seq, ev.Time, o.lastTime)
		}
		js, err := ev.AppendJSON(nil)
		if err != nil {
			return err
		}
		switch {
		case i < len(o.pending):
			p := o.pending[i]
			tr, ok := ev.Data.(*codec.ToolResult)
			var wantSources []int64
			if p.callSeq >= 0 {
				wantSources = []int64{p.callSeq}
			}
			switch {
			case !ok:
				c.errorf("seq %d: closer %d is %s, want the tool/result of call %s", ev.Seq, i, ev.Type, p.id)
			case tr.CallID != p.id || tr.Turn != o.turn || tr.Step != o.step || !tr.IsError:
				c.errorf("seq %d: closer %s, want an error result of %d.%d for call %s", ev.Seq, js, o.turn, o.step, p.id)
			case !strings.Contains(string(js), `"error":{"name":"InterruptedError","code":"interrupted"}`) ||
				!strings.Contains(string(js), loop.InterruptedNotice):
				c.errorf("seq %d: closer %s lacks the interrupted error or notice", ev.Seq, js)
			case ev.HasSources != (wantSources != nil) || fmt.Sprint(ev.Sources) != fmt.Sprint(wantSources):
				c.errorf("seq %d: closer cites %v (present %v), want %v", ev.Seq, ev.Sources, ev.HasSources, wantSources)
			}
		case i == len(got)-1:
			if te, ok := ev.Data.(*codec.TurnEnd); !ok || te.Turn != o.turn || te.Reason != "interrupted" {
				c.errorf("seq %d: last closer %s, want turn/end %d interrupted", ev.Seq, js, o.turn)
			}
		default:
			if se, ok := ev.Data.(*codec.StepEnd); !ok || se.Turn != o.turn || se.Step != o.step {
				c.errorf("seq %d: closer %s, want step/end %d.%d", ev.Seq, js, o.turn, o.step)
			}
		}
	}
	return nil
}

// verify runs verify on the session: structure warnings are counted (a
// crash leaves an open turn), any other finding fails the test.
func (c *sessionCheck) verify(ctx context.Context, when string) error {
	res, err := verify.Session(ctx, c.st, c.id, verify.Options{})
	if err != nil {
		return errors.Wrapf(err, "verify %s", errors.Safe(when))
	}
	c.tot.verifyRuns++
	for _, f := range res.Findings {
		if f.Warning {
			c.tot.warnings++
			c.t.Logf("round %d: %s: warning %s", c.round, when, f)
			continue
		}
		c.errorf("%s: %s", when, f)
	}
	return nil
}

// count adds a child-written event to the totals.
func (c *sessionCheck) count(ev *codec.Event) {
	c.tot.types[ev.Type]++
	switch d := ev.Data.(type) {
	case *codec.CompactEnd:
		if d.HasError {
			c.tot.failedCompactions++
		}
	case *codec.TurnEnd:
		if d.Reason == "aborted" {
			c.tot.aborted++
		}
	}
}

// openState is what a crash leaves open at the end of a log, computed
// here from docs/loop.md's words, independently of the loop: the open turn and
// step, and the pending calls (the tool-call blocks of the open step's
// assistant/message that have no tool/result; reset at step/end,
// turn/start and turn/end).
type openState struct {
	inTurn, inStep bool
	turn, step     int64
	pending        []pendingCall
	lastTime       float64
}

type pendingCall struct {
	id      string
	callSeq int64 // -1: no tool/call logged
}

func openAt(evs []codec.Event) openState {
	var o openState
	for i := range evs {
		o.lastTime = evs[i].Time
		switch d := evs[i].Data.(type) {
		case *codec.TurnStart:
			o = openState{inTurn: true, turn: d.Turn, lastTime: evs[i].Time}
		case *codec.TurnEnd:
			o = openState{lastTime: evs[i].Time}
		case *codec.StepStart:
			o.inStep, o.step, o.pending = true, d.Step, nil
		case *codec.StepEnd:
			o.inStep, o.pending = false, nil
		case *codec.AssistantMessage:
			for _, b := range d.Content.Blocks {
				if b.Type == codec.BlockToolCall {
					o.pending = append(o.pending, pendingCall{id: b.ID, callSeq: -1})
				}
			}
		case *codec.ToolCall:
			for j := range o.pending {
				if o.pending[j].id == d.CallID && o.pending[j].callSeq < 0 {
					o.pending[j].callSeq = evs[i].Seq
					break
				}
			}
		case *codec.ToolResult:
			for j := range o.pending {
				if o.pending[j].id == d.CallID {
					o.pending = append(o.pending[:j:j], o.pending[j+1:]...)
					break
				}
			}
		}
	}
	return o
}
