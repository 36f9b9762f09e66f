package eventlog

import (
	"bytes"
	"context"
	"io"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/boltfmt"
)

// maxPayload bounds an event payload so that its record stays readable
// (codec.DecodeRecord refuses records over codec.MaxRecord).
const maxPayload = codec.MaxRecord - 5

// checkHeader decodes h.Raw (the view fields are not trusted) and checks
// that it can name a session.
func checkHeader(h codec.SessionHeader) (codec.SessionHeader, error) {
	hdr, err := codec.DecodeSessionHeader(h.Raw)
	if err != nil {
		return codec.SessionHeader{}, errors.Wrap(asInvalid(err), "eventlog: session header")
	}
	if err := codec.ValidateValue(h.Raw); err != nil {
		return codec.SessionHeader{}, errors.Wrap(asInvalid(err), "eventlog: session header")
	}
	if err := checkSessionID(hdr.ID); err != nil {
		return codec.SessionHeader{}, err
	}
	if len(h.Raw) > maxPayload {
		return codec.SessionHeader{}, invalidf("eventlog: session header of %d bytes is too large", errors.Safe(len(h.Raw)))
	}
	return hdr, nil
}

// checkSessionID is the rule for the id of a new session, the same in
// every store since Create, Import and Fork of each apply it (through
// checkHeader): at most MaxSessionID bytes of UTF-8 (never empty: the
// codec refuses that), without control characters: no C0 (NUL included,
// which PostgreSQL's text cannot hold), DEL or C1. An id that breaks it
// is ErrInvalid, and the message quotes it escaped. Ids stored before the
// rule are not checked again: reads, appends and forks from them work.
func checkSessionID(id string) error {
	if len(id) > MaxSessionID {
		return invalidf("eventlog: session id of %d bytes is longer than %d",
			errors.Safe(len(id)), errors.Safe(MaxSessionID))
	}
	if !utf8.ValidString(id) {
		return invalidf("eventlog: session id %q is not valid UTF-8", errors.Safe(id))
	}
	for i, r := range id {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return invalidf("eventlog: session id %q holds the control character U+%04X at byte %d",
				errors.Safe(id), errors.Safe(r), errors.Safe(i))
		}
	}
	return nil
}

// checkEvent re-decodes ev.Raw (the payload is what gets stored, so its
// view is rebuilt from it) and checks that it is storable and has seq
// want. The returned Event aliases ev.Raw.
func checkEvent(session string, ev *codec.Event, want int64) (codec.Event, error) {
	if ev.Seq != want {
		return codec.Event{}, codec.At(codec.NamesSeq(invalidf("eventlog: event seq %d where %d was expected",
			errors.Safe(ev.Seq), errors.Safe(want))), session, -1)
	}
	if len(ev.Raw) > maxPayload {
		return codec.Event{}, codec.At(invalidf("eventlog: event of %d bytes is larger than %d",
			errors.Safe(len(ev.Raw)), errors.Safe(maxPayload)), session, want)
	}
	d, err := codec.DecodeStoredEvent(ev.Raw) // ValidateValue and DecodeEvent, in one pass
	if err != nil {
		return codec.Event{}, codec.At(asInvalid(err), session, want)
	}
	if d.Seq != want {
		return codec.Event{}, codec.At(codec.NamesSeq(invalidf("eventlog: event view says seq %d but its payload says %d",
			errors.Safe(want), errors.Safe(d.Seq))), session, -1)
	}
	return d, nil
}

// validate passes ev to v, classifying a refusal as ErrInvalid.
func validate(v Validator, session string, ev *codec.Event) error {
	if err := v.Validate(ev); err != nil {
		return codec.At(asInvalid(err), session, ev.Seq)
	}
	return nil
}

// newValidator returns the validation state of a new session:
// Options.NewValidator's, or acceptAll when the store was opened
// Unvalidated (or read-only, where nothing is appended). On a cache miss
// the state is rebuilt by replaying the stored events through it
// (l.replay). A NewValidator that returns nil is a bug of the caller's,
// never a silent accept-all.
func (l *Log) newValidator(h codec.SessionHeader) Validator { return l.opts.Validator(h) }

// Create stores a new, empty session with its header line (published at
// once: Head, Scan and Sessions see it). An id that exists, or is being
// imported, is ErrConflict. The header must decode (codec rules); a header
// that names a seedLength is refused with ErrInvalid, since only Fork and
// Import can store inherited events.
func (l *Log) Create(ctx context.Context, h codec.SessionHeader) error {
	if !l.obs.on {
		return l.create(ctx, h)
	}
	t := time.Now()
	err := l.create(ctx, h)
	l.obs.committed(ctx, t)
	return err
}

func (l *Log) create(ctx context.Context, h codec.SessionHeader) error {
	if err := l.beginWrite(); err != nil {
		return err
	}
	defer l.ops.Done()
	hdr, err := checkHeader(h)
	if err != nil {
		return err
	}
	return l.createChecked(ctx, hdr)
}

// createChecked is Create of a checked header; the caller holds an op.
func (l *Log) createChecked(ctx context.Context, hdr codec.SessionHeader) error {
	id := hdr.ID
	if hdr.SeedLength != 0 {
		return invalidf("eventlog: create session %q: a header with seedLength %d is a fork child (use Fork or Import)",
			errors.Safe(id), errors.Safe(hdr.SeedLength))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	unlock, err := l.locks.Lock(ctx, id)
	if err != nil {
		return errors.Wrapf(err, "eventlog: waiting for session %q", errors.Safe(id))
	}
	defer unlock()
	if l.staging.Has(id) {
		return conflictf("eventlog: create session %q: it is being imported or forked", errors.Safe(id))
	}
	headerRec := codec.EncodeRecord(nil, hdr.Raw)
	head := Head{Header: hdr, LastTime: hdr.CreatedAt, Chain: ChainStart(headerRec)}
	headRec, err := boltfmt.EncodeEngineRecord(fromHead(&head))
	if err != nil {
		return err
	}
	err = l.commit(&commitReq{
		size:  len(headerRec) + len(headRec),
		op:    walOp{ID: id, HeaderRec: headerRec, HeadRec: headRec},
		check: func() error { return l.checkNew(id) },
	})
	if err != nil {
		l.cache.Remove(id)
		return err
	}
	l.cache.Put(id, &sessionState{head: head, headRec: headRec, v: l.newValidator(hdr)})
	return nil
}

// Append stores events atomically at the end of the session (SPEC §8.2).
// The seqs must be contiguous (else ErrInvalid) and the first must be the
// session's next seq (else ErrConflict). Every event is re-decoded from
// its Raw and passed to the session's Validator before anything is
// written; a refusal is ErrInvalid and changes nothing, in the store or in
// memory. ctx is honoured until the events are queued for the commit; then
// Append waits for the commit's result. Validators may keep views of the
// events: do not modify their Raw afterwards.
func (l *Log) Append(ctx context.Context, session string, events []codec.Event) error {
	if !l.obs.on {
		return l.append(ctx, session, events)
	}
	t := time.Now()
	err := l.append(ctx, session, events)
	l.obs.committed(ctx, t)
	return err
}

func (l *Log) append(ctx context.Context, session string, events []codec.Event) error {
	if err := l.beginWrite(); err != nil {
		return err
	}
	defer l.ops.Done()
	if len(events) == 0 {
		return invalidf("eventlog: append to session %q: no events", errors.Safe(session))
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
		size += len(d.Raw) + 5
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	unlock, err := l.locks.Lock(ctx, session)
	if err != nil {
		return errors.Wrapf(err, "eventlog: waiting for session %q", errors.Safe(session))
	}
	defer unlock()
	st, err := l.state(ctx, session)
	if err != nil {
		return errors.Wrapf(err, "eventlog: append to session %q", errors.Safe(session))
	}
	if first != st.head.Next {
		return conflictf("eventlog: append to session %q: first seq %d, but the session's next seq is %d",
			errors.Safe(session), errors.Safe(first), errors.Safe(st.head.Next))
	}
	for i := range decoded {
		if err := validate(st.v, session, &decoded[i]); err != nil {
			l.cache.Remove(session)
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		l.cache.Remove(session)
		return err
	}

	// Records: one buffer for the small ones, sized for them
	// uncompressed, one slice per event; a large payload's record gets a
	// buffer of its own, of its compressed size, rather than room for the
	// whole payload beside the payload and its views. Then the new head.
	small := 0
	for i := range decoded {
		if n := len(decoded[i].Raw); n < ownRecord {
			small += n + 5
		}
	}
	buf := make([]byte, 0, small)
	recs := make([][]byte, len(decoded))
	head := st.head
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
		// them; the unapplied tail holds them until the applier has run,
		// and counts their length, not this room: keep only the bytes.
		shrinkRecords(buf, recs, func(i int) bool { return len(decoded[i].Raw) < ownRecord })
	}
	head.Next += int64(len(decoded))
	head.LastTime = decoded[len(decoded)-1].Time
	head.Chain = ch.c
	headRec, err := boltfmt.EncodeEngineRecord(fromHead(&head))
	if err != nil {
		l.cache.Remove(session)
		return err
	}
	oldHead := st.headRec
	err = l.commit(&commitReq{
		size:   size,
		events: len(decoded),
		op:     walOp{ID: session, First: first, Recs: recs, HeadRec: headRec},
		check: func() error {
			cur, err := l.headRecord(session)
			if err != nil {
				return err
			}
			if !bytes.Equal(cur, oldHead) {
				return conflictf("eventlog: append to session %q: the session changed under this writer", errors.Safe(session))
			}
			return nil
		},
	})
	if err != nil {
		l.cache.Remove(session)
		return errors.Wrapf(err, "eventlog: append to session %q seqs %d..%d",
			errors.Safe(session), errors.Safe(first), errors.Safe(head.Next-1))
	}
	st.head, st.headRec = head, headRec
	l.cache.Put(session, st)
	return nil
}

// checkNew refuses an id that a new session cannot take: one that exists,
// unapplied or in the tree, or that an Import or Fork is staging.
func (l *Log) checkNew(id string) error {
	if l.staging.Has(id) {
		return conflictf("eventlog: create session %q: it is being imported or forked", errors.Safe(id))
	}
	exists := l.tails.has(id)
	if !exists {
		if err := l.view(func(tx *bolt.Tx) error {
			exists = sessionBucket(tx, id) != nil
			return nil
		}); err != nil {
			return err
		}
	}
	if exists {
		return conflictf("eventlog: create session %q: it exists already", errors.Safe(id))
	}
	return nil
}

// headRecord returns the session's newest head record: the unapplied
// tail's, else the tree's (a copy). A session without one is ErrNotFound.
func (l *Log) headRecord(id string) ([]byte, error) {
	if v := l.tails.view(id); v.ok {
		return v.headRec, nil
	}
	var rec []byte
	err := l.view(func(tx *bolt.Tx) error {
		b := sessionBucket(tx, id)
		if b == nil {
			return noSession(id)
		}
		rec = clone(b.Get(boltfmt.KeyHead))
		return nil
	})
	return rec, err
}

// state returns the session's state from the cache, or rebuilds it from
// the store: the head, and a fresh Validator fed every stored event. The
// caller holds the session's lock and puts the state back (or not).
func (l *Log) state(ctx context.Context, session string) (*sessionState, error) {
	if st, ok := l.cache.Lookup(ctx, session); ok {
		return st, nil
	}
	headRec, headerRec, err := l.publishedRecords(session)
	if err != nil {
		return nil, err
	}
	head, err := decodeStored(session, headRec, headerRec)
	if err != nil {
		return nil, err
	}
	st := &sessionState{head: head, headRec: headRec, v: l.newValidator(head.Header)}
	if !l.replay || head.Next == 0 {
		return st, nil
	}
	it := &iterator{l: l, ctx: ctx, session: session, next: 0, end: head.Next}
	defer it.Close()
	for {
		ev, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := st.v.Validate(&ev); err != nil {
			l.obs.log.Error("eventlog: a stored event fails validation on replay", "session", session, "seq", ev.Seq)
			return nil, errors.Wrapf(err, "eventlog: session %q: replaying stored seq %d through the validator",
				errors.Safe(session), errors.Safe(ev.Seq))
		}
	}
	l.cache.Replayed(ctx, head.Next)
	return st, nil
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
