package verify

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// Store is what verify reads. *boltlog.Log implements it.
type Store interface {
	Head(ctx context.Context, session string) (eventlog.Head, error)
	HeaderRecord(ctx context.Context, session string) ([]byte, error)
	Records(ctx context.Context, session string, from int64, fn func(seq int64, rec []byte) error) error
}

// Kind classifies a finding.
type Kind uint8

const (
	// Corrupt: a record fails its frame, CRC or decode, its key is not its
	// seq, seqs have a gap, or the chain hash or count disagrees with the
	// head.
	Corrupt Kind = iota + 1
	// Invalid: an event breaks a rule of docs/rules.md#validation.
	Invalid
	// Digest: a recorded request/digest does not match the rebuild, sits
	// outside its step, or is on a step whose request is null.
	Digest
	// Structure: a break of the turn structure of docs/rules.md#turns-and-steps; a warning
	// unless Options.Strict.
	Structure
	// Torn: the store's Open dropped a torn tail of its write-ahead log,
	// a write a crash interrupted that was never acknowledged; always a
	// warning (CheckWAL).
	Torn
	// Wire: the recorded bytes of a gateway session (docs/gateway.md#what-is-recorded) do not
	// add up: a chunk whose digest is not its bytes, a body whose chunks
	// are missing or do not make its size and digest, a chunk no record
	// uses. An exchange without an answer (a crash, or a live stream) is
	// a warning.
	Wire
	// Mapping: a recorded session's mapped events are not the mapping of
	// its recorded bytes (docs/gateway.md#what-is-recorded: re-run with package transcript);
	// reported at the first differing seq, after which the mapping is
	// not checked. A lane whose mapped events are absent (the store
	// refused them, and the gateway recorded the bytes alone) is a
	// warning.
	Mapping
	// Redacted: content was redacted on purpose (docs/forgetting.md#redaction), so what
	// it covers cannot be checked: a gateway's wire/request recorded
	// with its redactor, whose digest (of the body sent) is "not
	// checkable (redacted content)" while its chunks are checked against
	// the redacted body's size and digest. Never a mismatch; a warning
	// unless Options.Strict.
	Redacted
)

func (k Kind) String() string {
	switch k {
	case Corrupt:
		return "corrupt"
	case Invalid:
		return "invalid"
	case Digest:
		return "digest"
	case Structure:
		return "structure"
	case Torn:
		return "torn"
	case Wire:
		return "wire"
	case Mapping:
		return "mapping"
	case Redacted:
		return "redacted"
	}
	return "unknown"
}

// Finding is one problem verify found. Messages name positions and
// numbers, never content.
type Finding struct {
	Session string
	// Seq is the event the finding is about, -1 for the session as a whole.
	Seq  int64
	Kind Kind
	// Warning is set for structure breaks when not Strict: reported, but
	// not a failure.
	Warning bool
	Message string
	// Err is the underlying classified error, when there is one.
	Err error
}

func (f Finding) String() string {
	level := "finding"
	if f.Warning {
		level = "warning"
	}
	if f.Session == "" {
		return fmt.Sprintf("store: %s %s: %s", level, f.Kind, f.Message)
	}
	if f.Seq < 0 {
		return fmt.Sprintf("%s: %s %s: %s", f.Session, level, f.Kind, f.Message)
	}
	return fmt.Sprintf("%s seq %d: %s %s: %s", f.Session, f.Seq, level, f.Kind, f.Message)
}

// Options configures Session.
type Options struct {
	// Strict makes structure breaks and redactions findings instead of
	// warnings.
	Strict bool
}

// Result is what verifying one session found.
type Result struct {
	Session string
	Events  int64
	Steps   int
	// Digests counts recorded digests checked; Inherited counts digests
	// inherited from an ancestor that is not in the store (unverifiable,
	// not a finding).
	Digests, Inherited int
	Findings           []Finding
}

// Failed reports whether the result has a finding that is not a warning.
func (r *Result) Failed() bool {
	for _, f := range r.Findings {
		if !f.Warning {
			return true
		}
	}
	return false
}

func (r *Result) add(seq int64, k Kind, warning bool, err error, format string, args ...interface{}) {
	r.Findings = append(r.Findings, Finding{Session: r.Session, Seq: seq, Kind: k, Warning: warning,
		Message: fmt.Sprintf(format, args...), Err: err})
}

// Session verifies one stored session (docs/rules.md#verify): every record's
// frame and CRC, key = seq, no gaps, the chain hash and event count of the
// head, every rule of the log through the same fold the store validates
// with, the turn structure (warnings unless Strict), that every step
// rebuilds, and every recorded request/digest, inherited ones resolved
// through the fork lineage. The error is non-nil only when the store
// cannot be read at all (no such session: eventlog.ErrNotFound).
func Session(ctx context.Context, s Store, id string, opts Options) (Result, error) {
	res := Result{Session: id}
	head, err := s.Head(ctx, id)
	if err != nil {
		if errors.Is(err, eventlog.ErrNotFound) {
			return res, err
		}
		res.add(-1, Corrupt, false, err, "head record: %v", err)
		return res, nil
	}
	hrec, err := s.HeaderRecord(ctx, id)
	if err != nil {
		res.add(-1, Corrupt, false, err, "header record: %v", err)
		return res, nil
	}
	w := newWalker(ctx, s, head.Header, &res, opts)
	chain := eventlog.ChainStart(hrec)
	next := int64(0)
	record := func(seq int64, rec []byte) error {
		if seq != next {
			res.add(next, Corrupt, false, nil, "record key %d where seq %d was expected", seq, next)
			w.stop()
			next = seq
		}
		next++
		payload, err := codec.DecodeRecord(rec)
		if err != nil {
			res.add(seq, Corrupt, false, err, "%v", err)
			w.stop()
			return nil
		}
		chain = eventlog.ChainNext(chain, payload)
		ev, err := codec.DecodeEvent(append([]byte(nil), payload...))
		switch {
		case err != nil:
			res.add(seq, Invalid, false, err, "%v", err)
			w.stop()
		case ev.Seq != seq:
			res.add(seq, Corrupt, false, nil, "record holds seq %d under key %d", ev.Seq, seq)
			w.stop()
		default:
			w.add(&ev)
		}
		return nil
	}
	err = s.Records(ctx, id, 0, record)
	// A store shared with live writers (PostgreSQL) may hold events
	// committed after the head was read: read the head again and take in
	// what was appended since, a bounded number of times. Appends commit
	// events and head together, so records past a head read after them
	// are damage, never a race.
	for round := 0; err == nil && next > head.Next && round < liveRounds; round++ {
		h2, herr := s.Head(ctx, id)
		if herr != nil || h2.Next <= head.Next {
			break
		}
		head = h2
		if next < head.Next {
			err = s.Records(ctx, id, next, record)
		}
	}
	if err != nil {
		res.add(next, Corrupt, false, err, "reading records: %v", err)
		w.stop()
	}
	res.Events = next
	if next != head.Next {
		res.add(-1, Corrupt, false, nil, "head says %d events, the store holds %d", head.Next, next)
	}
	if chain != head.Chain {
		res.add(-1, Corrupt, false, nil, "chain hash %x does not match the head's %x", chain[:8], head.Chain[:8])
	}
	w.end()
	return res, nil
}

// liveRounds bounds how often Session re-reads the head of a session that
// grows while it is verified.
const liveRounds = 16

// walker folds a session's events through one Builder per session id its
// digests were computed with (its own, and each ancestor's for inherited
// steps).
type walker struct {
	res       *Result
	opts      Options
	hdr       codec.SessionHeader
	own       *rebuild.Builder
	writers   map[string]*rebuild.Builder
	writerOf  func(seq int64) (string, bool)
	inherited map[int64]map[string][32]byte // step start → writer id → digest
	structure rebuild.Structure
	wire      recorded.Session
	mapping   *mapping
	stopped   bool
}

func newWalker(ctx context.Context, s Store, h codec.SessionHeader, res *Result, opts Options) *walker {
	w := &walker{res: res, opts: opts, hdr: h, writers: map[string]*rebuild.Builder{},
		inherited: map[int64]map[string][32]byte{}, mapping: newMapping(h)}
	w.own = rebuild.NewBuilder(h, rebuild.BuilderOptions{}, w.step)
	var ancestors []string
	w.writerOf, ancestors = lineage(ctx, s, h)
	for _, id := range ancestors {
		w.writers[id] = w.writerBuilder(id)
	}
	return w
}

// writerBuilder folds the session's inherited events as session id.
func (w *walker) writerBuilder(id string) *rebuild.Builder {
	h := w.hdr
	h.ID = id
	return rebuild.NewBuilder(h, rebuild.BuilderOptions{}, func(s rebuild.Step) error {
		if w.inherited[s.Start] == nil {
			w.inherited[s.Start] = map[string][32]byte{}
		}
		w.inherited[s.Start][id] = s.Digest
		return nil
	})
}

func (w *walker) stop() { w.stopped = true }

func (w *walker) add(ev *codec.Event) {
	if w.stopped {
		return
	}
	for _, b := range w.structure.Add(ev) {
		w.res.add(b.Seq, Structure, !w.opts.Strict, nil, "%s", b.What)
	}
	// Inherited events are folded for every ancestor first, so that an
	// ancestor's digest of a step is settled when the session's own is.
	if ev.Seq < w.hdr.SeedLength {
		for _, b := range w.writers {
			_ = b.Add(ev) // the session's own fold reports the error
		}
	}
	w.wireProblems(w.wire.Add(ev))
	w.mapping.add(ev, &w.wire, w.res)
	if err := w.own.Add(ev); err != nil {
		w.res.add(ev.Seq, Invalid, false, err, "%v", err)
		w.stop()
	}
}

// wireProblems reports the problems of the recorded bytes; a redacted
// request is of class Redacted.
func (w *walker) wireProblems(ps []recorded.Problem) {
	for _, p := range ps {
		if p.Redacted {
			w.res.add(p.Seq, Redacted, !w.opts.Strict, nil, "%s", p.Message)
			continue
		}
		w.res.add(p.Seq, Wire, p.Warning, nil, "%s", p.Message)
	}
}

// end settles the last steps and checks the misplaced digests.
func (w *walker) end() {
	if w.stopped {
		return
	}
	w.wireProblems(w.wire.End())
	w.mapping.end(w.res)
	for _, b := range w.writers {
		_ = b.End()
	}
	if err := w.own.End(); err != nil {
		w.res.add(-1, Invalid, false, err, "%v", err)
	}
	for _, seq := range w.own.Misplaced() {
		w.res.add(seq, Digest, false, nil, "request/digest outside the window of its step")
	}
}

// step checks a settled step's recorded digests.
func (w *walker) step(s rebuild.Step) error {
	w.res.Steps++
	for _, r := range s.Recorded {
		w.res.Digests++
		if s.Null {
			w.res.add(r.Seq, Digest, false, nil, "request/digest on step %d.%d, whose request is null", s.Turn, s.Step)
			continue
		}
		want := s.Digest
		if r.Seq < w.hdr.SeedLength {
			id, ok := w.writerOf(r.Seq)
			if !ok {
				w.res.Digests--
				w.res.Inherited++
				continue
			}
			if id != w.hdr.ID {
				d, ok := w.writerDigest(s.Start, id)
				if !ok {
					w.res.add(r.Seq, Digest, false, nil, "inherited step %d.%d did not rebuild for session %s", s.Turn, s.Step, id)
					continue
				}
				want = d
			}
		}
		if r.SHA256 != hex.EncodeToString(want[:]) {
			w.res.add(r.Seq, Digest, false, nil, "recorded digest of step %d.%d is %.12s…, the rebuild's is %x…", s.Turn, s.Step, r.SHA256, want[:6])
		}
	}
	return nil
}

// writerDigest returns the digest of the step starting at start computed
// with id; the writer's builder settles it no later than the session's
// own (same events), except at the end of the log.
func (w *walker) writerDigest(start int64, id string) ([32]byte, bool) {
	if d, ok := w.inherited[start][id]; ok {
		return d, true
	}
	if b, ok := w.writers[id]; ok {
		if s, ok := b.Peek(); ok && s.Start == start {
			return s.Digest, true
		}
	}
	return [32]byte{}, false
}

// lineage returns the function that names the session that wrote an
// inherited event (docs/rules.md#digest): walk parentSession while the seq is below
// the session's seedLength. false: an ancestor is not in the store.
func lineage(ctx context.Context, s Store, h codec.SessionHeader) (func(seq int64) (string, bool), []string) {
	type link struct {
		id, parent string
		seed       int64
		missing    bool
	}
	var chain []link
	cur := link{id: h.ID, parent: h.ParentSession, seed: h.SeedLength}
	for depth := 0; depth < 64; depth++ {
		chain = append(chain, cur)
		if cur.parent == "" || cur.seed == 0 {
			break
		}
		ph, err := s.Head(ctx, cur.parent)
		if err != nil {
			chain = append(chain, link{id: cur.parent, missing: true})
			break
		}
		cur = link{id: ph.Header.ID, parent: ph.Header.ParentSession, seed: ph.Header.SeedLength}
	}
	var ancestors []string
	for _, l := range chain[1:] {
		if !l.missing {
			ancestors = append(ancestors, l.id)
		}
	}
	return func(seq int64) (string, bool) {
		for _, l := range chain {
			if l.missing {
				return "", false
			}
			if seq >= l.seed || l.parent == "" {
				return l.id, true
			}
		}
		return "", false
	}, ancestors
}
