package engine

import (
	"context"
	"crypto/sha256"
	"hash"
	"io"
	"runtime"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
)

// Create stores a new, empty session with its header line (published at
// once: Head, Scan and Sessions see it). An id that exists, or is being
// imported, is ErrConflict. The header must decode (codec rules); a header
// that names a seedLength is refused with ErrInvalid, since only Fork and
// Import can store inherited events.
func (e *Engine) Create(ctx context.Context, h codec.SessionHeader) error {
	if !e.m.On {
		return e.create(ctx, h)
	}
	t := time.Now()
	err := e.create(ctx, h)
	e.m.committed(ctx, t)
	return err
}

func (e *Engine) create(ctx context.Context, h codec.SessionHeader) error {
	if err := e.beginWrite(); err != nil {
		return err
	}
	defer e.ops.Done()
	hdr, err := CheckHeader(h)
	if err != nil {
		return err
	}
	return e.createChecked(ctx, hdr)
}

// CreateUnchecked creates a session as Create does, but without the id
// rule of CheckHeader: a session that a store written before the rule may
// hold. For tests.
func CreateUnchecked(e *Engine, ctx context.Context, h codec.SessionHeader) error {
	if err := e.beginWrite(); err != nil {
		return err
	}
	defer e.ops.Done()
	hdr, err := codec.DecodeSessionHeader(h.Raw)
	if err != nil {
		return err
	}
	return e.createChecked(ctx, hdr)
}

// createChecked is Create of a checked header; the caller holds an op.
func (e *Engine) createChecked(ctx context.Context, hdr codec.SessionHeader) error {
	id := hdr.ID
	if hdr.SeedLength != 0 {
		return Invalidf("eventlog: create session %q: a header with seedLength %d is a fork child (use Fork or Import)",
			errors.Safe(id), errors.Safe(hdr.SeedLength))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	unlock, err := e.locks.Lock(ctx, id)
	if err != nil {
		return errors.Wrapf(err, "eventlog: waiting for session %q", errors.Safe(id))
	}
	defer unlock()
	if e.staging.Has(id) {
		return Conflictf("eventlog: create session %q: it is being imported or forked", errors.Safe(id))
	}
	headerRec := codec.EncodeRecord(nil, hdr.Raw)
	w := &Write{Session: id, Create: true, HeaderRec: headerRec, Size: len(headerRec),
		New: eventlog.Head{Header: hdr, LastTime: hdr.CreatedAt, Chain: eventlog.ChainStart(headerRec)}}
	if err := e.b.Prepare(w); err != nil {
		return err
	}
	if err := e.commit(w); err != nil {
		e.cache.Remove(id)
		return errors.Wrapf(err, "eventlog: create session %q", errors.Safe(id))
	}
	e.cache.Put(id, &state{head: w.New, token: w.NewToken, v: e.newValidator(hdr)})
	return nil
}

// Append stores events atomically at the end of the session (docs/rules.md#appends).
// The seqs must be contiguous (else ErrInvalid) and the first must be the
// session's next seq (else ErrConflict). Every event is re-decoded from
// its Raw and passed to the session's Validator before anything is
// written; a refusal is ErrInvalid and changes nothing, in the store or in
// memory. ctx is honoured until the events are queued for the commit; then
// Append waits for the commit's result. Validators may keep views of the
// events: do not modify their Raw afterwards.
func (e *Engine) Append(ctx context.Context, session string, events []codec.Event) error {
	if !e.m.On {
		return e.append(ctx, session, events)
	}
	t := time.Now()
	err := e.append(ctx, session, events)
	e.m.committed(ctx, t)
	return err
}

func (e *Engine) append(ctx context.Context, session string, events []codec.Event) error {
	if err := e.beginWrite(); err != nil {
		return err
	}
	defer e.ops.Done()
	if len(events) == 0 {
		return Invalidf("eventlog: append to session %q: no events", errors.Safe(session))
	}
	first := events[0].Seq
	decoded := make([]codec.Event, len(events))
	size := 0
	for i := range events {
		d, err := checkEvent(session, &events[i], first+int64(i))
		if err != nil {
			return errors.Wrap(err, "eventlog: append")
		}
		decoded[i] = d
		size += len(d.Raw) + codec.RecordOverhead
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	unlock, err := e.locks.Lock(ctx, session)
	if err != nil {
		return errors.Wrapf(err, "eventlog: waiting for session %q", errors.Safe(session))
	}
	defer unlock()
	st, cached, err := e.state(ctx, session)
	if err == nil && cached && first != st.head.Next && e.cfg.SharedWriters {
		// Another process may have appended since this one cached the
		// session: ask the store.
		e.cache.Remove(session)
		st, _, err = e.state(ctx, session)
	}
	if err != nil {
		return errors.Wrapf(err, "eventlog: append to session %q", errors.Safe(session))
	}
	if first != st.head.Next {
		e.cache.Put(session, st)
		return Conflictf("eventlog: append to session %q: first seq %d, but the session's next seq is %d",
			errors.Safe(session), errors.Safe(first), errors.Safe(st.head.Next))
	}
	for i := range decoded {
		if err := validate(st.v, session, &decoded[i]); err != nil {
			e.cache.Remove(session)
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		e.cache.Remove(session)
		return err
	}
	w := &Write{Session: session, Old: st.head, OldToken: st.token, Size: size}
	w.Recs, w.New = encodeRecords(st.head, decoded)
	if err := e.b.Prepare(w); err != nil {
		e.cache.Remove(session)
		return err
	}
	if err := e.commit(w); err != nil {
		e.cache.Remove(session)
		return errors.Wrapf(err, "eventlog: append to session %q seqs %d..%d",
			errors.Safe(session), errors.Safe(first), errors.Safe(w.New.Next-1))
	}
	st.head, st.token = w.New, w.NewToken
	e.cache.Put(session, st)
	return nil
}

// encodeRecords returns the records of the checked events decoded,
// appended to a session whose head is head, and the head after them.
//
// Records: one buffer for the small ones, sized for them uncompressed,
// one slice per event; a large payload's record gets a buffer of its own,
// of its compressed size, rather than room for the whole payload beside
// the payload and its views.
func encodeRecords(head eventlog.Head, decoded []codec.Event) ([][]byte, eventlog.Head) {
	small := 0
	for i := range decoded {
		if n := len(decoded[i].Raw); n < ownRecord {
			small += n + codec.RecordOverhead
		}
	}
	buf := make([]byte, 0, small)
	recs := make([][]byte, len(decoded))
	ch := newChainer(head.Chain)
	for i := range decoded {
		if raw := decoded[i].Raw; len(raw) >= ownRecord {
			recs[i] = codec.EncodeEventRecord(nil, raw)
		} else {
			start := len(buf)
			buf = codec.EncodeEventRecord(buf, raw)
			recs[i] = buf[start:len(buf):len(buf)]
		}
		head.StoredBytes += int64(len(recs[i]))
		ch.add(decoded[i].Raw)
		if decoded[i].Type == codec.TypeTurnStart {
			head.Turns++
		}
	}
	if cap(buf) > 2*len(buf)+4096 {
		// Compressed records took far less than the room sized for
		// them; a store may hold them until it has applied them, and
		// counts their length, not this room: keep only the bytes.
		shrinkRecords(buf, recs, func(i int) bool { return len(decoded[i].Raw) < ownRecord })
	}
	head.Next += int64(len(decoded))
	head.LastTime = decoded[len(decoded)-1].Time
	head.Chain = ch.c
	return recs, head
}

// shrinkRecords copies the records in buf (those recs[i] for which
// inBuf(i)) into a buffer of their exact size, and points recs at the
// copy.
func shrinkRecords(buf []byte, recs [][]byte, inBuf func(i int) bool) {
	exact := make([]byte, 0, len(buf))
	for i, r := range recs {
		if !inBuf(i) {
			continue
		}
		start := len(exact)
		exact = append(exact, r...)
		recs[i] = exact[start:len(exact):len(exact)]
	}
}

// ownRecord is the payload size from which an appended event's record
// gets a buffer of its own.
const ownRecord = 64 << 10

// state returns the session's state from the cache (cached true), or
// rebuilds it from the store: the head, and a fresh Validator fed every
// stored event. The caller holds the session's lock and puts the state
// back (or not).
func (e *Engine) state(ctx context.Context, session string) (st *state, cached bool, err error) {
	if st, ok := e.cache.Lookup(ctx, session); ok {
		return st, true, nil
	}
	head, token, err := e.b.Head(ctx, session)
	if err != nil {
		return nil, false, err
	}
	st = &state{head: head, token: token, v: e.newValidator(head.Header)}
	if !e.replay || head.Next == 0 {
		return st, false, nil
	}
	it := &iterator{e: e, ctx: ctx, session: session, next: 0, end: head.Next}
	defer it.Close()
	for {
		ev, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, err
		}
		if err := st.v.Validate(&ev); err != nil {
			e.m.Log.Error("eventlog: a stored event fails validation on replay", "session", session, "seq", ev.Seq)
			return nil, false, errors.Wrapf(err, "eventlog: session %q: replaying stored seq %d through the validator",
				errors.Safe(session), errors.Safe(ev.Seq))
		}
	}
	e.cache.Replayed(ctx, head.Next)
	return st, false, nil
}

// chainer folds payloads into a chain hash (eventlog.ChainNext), reusing
// one hash state.
type chainer struct {
	h hash.Hash
	c [32]byte
}

func newChainer(c [32]byte) *chainer { return &chainer{h: sha256.New(), c: c} }

func (ch *chainer) add(payload []byte) {
	ch.h.Reset()
	ch.h.Write(ch.c[:])
	ch.h.Write(payload)
	ch.h.Sum(ch.c[:0])
}

// Group commit.
//
// Appends and creates do their CPU work (decoding, validation, encoding,
// chain hashing, the driver's Prepare) in the caller's goroutine, then
// queue a Write for the committer: one goroutine per read-write store,
// started by New and stopped by Close after every queued write has been
// answered. The committer takes the first write queued, drains whatever
// else is queued (up to maxBatch writes or Config.MaxBatchBytes), hands
// them to the driver's Commit as one batch (bbolt: one write-ahead log
// record and one fdatasync; PostgreSQL: one pipelined transaction) and
// answers each caller with its own result. A lone writer is committed at
// once; writes that arrive during a commit form the next batch. When the
// previous batch had several writers, the committer waits up to
// Config.Linger for as many to come back before committing.

// maxBatch bounds the writes of one batch.
const maxBatch = 1024

// commit queues w and waits for its result. The caller holds an op, so
// the queue is open.
func (e *Engine) commit(w *Write) error {
	w.done = make(chan error, 1)
	e.queue <- w
	return <-w.done
}

// SetBatchHook installs a function the committer runs before each batch
// with its size; for tests, right after Open.
func SetBatchHook(e *Engine, fn func(n int)) { e.hookBatch = fn }

// QueueLen is the number of writes waiting for the committer (tests).
func QueueLen(e *Engine) int { return len(e.queue) }

// CachedStates is the number of session states in the validator cache
// (tests).
func CachedStates(e *Engine) int { return e.cache.Len() }

// committer runs group commits until the queue is closed. See above.
func (e *Engine) committer() {
	defer close(e.committerDone)
	if e.cfg.CommitterStarted != nil {
		e.cfg.CommitterStarted()
	}
	batch := make([]*Write, 0, 64)
	errs := make([]error, 0, 64)
	last := 1 // writes in the previous batch
	for {
		w, ok := <-e.queue
		if !ok {
			return
		}
		batch = append(batch[:0], w)
		size := w.Size
		open := true
	drain:
		for len(batch) < maxBatch && size < e.cfg.MaxBatchBytes {
			select {
			case w, ok := <-e.queue:
				if !ok {
					open = false
					break drain
				}
				batch = append(batch, w)
				size += w.Size
			default:
				break drain
			}
		}
		if open && len(batch) < last && e.cfg.Linger > 0 {
			// Writers were many a moment ago: give the ones still on
			// their way (answered by the last commit, now preparing their
			// next append) a moment to join, instead of committing them
			// in a trailing batch of their own. A lone writer (last == 1)
			// never waits.
			batch, open = e.linger(batch, size, last)
		}
		last = len(batch)
		if e.hookBatch != nil {
			e.hookBatch(len(batch))
		}
		var txns int
		errs, txns = e.b.Commit(batch, errs[:0])
		e.commits.Add(int64(txns))
		for i, w := range batch {
			if errs[i] == nil {
				e.committed.Add(1)
			}
			w.done <- errs[i]
			batch[i] = nil
		}
		if !open {
			return
		}
		if len(batch) > 1 {
			// The callers just answered are about to queue their next
			// writes; let them run before draining, so they join the
			// next batch instead of trailing behind it. This is a yield,
			// not a timer: with nobody runnable it returns at once.
			runtime.Gosched()
		}
	}
}

// linger waits up to Config.Linger for the batch to reach want writes.
func (e *Engine) linger(batch []*Write, size, want int) ([]*Write, bool) {
	t := time.NewTimer(e.cfg.Linger)
	defer t.Stop()
	for len(batch) < want && len(batch) < maxBatch && size < e.cfg.MaxBatchBytes {
		select {
		case w, ok := <-e.queue:
			if !ok {
				return batch, false
			}
			batch = append(batch, w)
			size += w.Size
		case <-t.C:
			return batch, true
		}
	}
	return batch, true
}
