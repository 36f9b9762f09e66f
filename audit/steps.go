package audit

import (
	"context"
	"io"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/rebuild"
)

// Store is what this package reads; every eventlog.Store is one.
type Store interface {
	Head(ctx context.Context, session string) (eventlog.Head, error)
	Scan(ctx context.Context, session string, from int64) (eventlog.Iterator, error)
}

// ErrStop, returned by a callback, ends a walk early; the walk then
// returns nil.
var ErrStop = errors.New("audit: stop")

// ErrNullRequest marks a step asked for its request that has none: no
// header was in force (docs/rules.md#the-request-of-a-step).
var ErrNullRequest = errors.New("audit: step has no request")

// Ref names a step: T.S.
type Ref struct{ Turn, Step int64 }

func (r Ref) String() string { return StepName(r.Turn, r.Step) }

// Scan calls fn for the events of session id with seqs from..to, in seq
// order, holding a bounded number in memory.
func Scan(ctx context.Context, st Store, id string, from, to int64, fn func(*codec.Event) error) (err error) {
	it, err := st.Scan(ctx, id, from)
	if err != nil {
		return errors.Wrapf(err, "session %s", errors.Safe(id))
	}
	defer func() { err = errors.CombineErrors(err, it.Close()) }()
	for {
		ev, err := it.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return errors.Wrapf(err, "session %s", errors.Safe(id))
		}
		if ev.Seq > to {
			return nil
		}
		if err := fn(&ev); err != nil {
			return err
		}
	}
}

// Steps folds the session of head through a rebuild.Builder with opts and
// calls emit for every step, in log order of its step/start. visit, when
// not nil, sees every event before the Builder folds it. A callback's
// ErrStop ends the walk early with no error.
func Steps(ctx context.Context, st Store, head eventlog.Head, opts rebuild.BuilderOptions,
	visit func(*codec.Event) error, emit func(rebuild.Step) error) error {
	id := head.Header.ID
	b := rebuild.NewBuilder(head.Header, opts, emit)
	err := Scan(ctx, st, id, 0, head.Next-1, func(ev *codec.Event) error {
		if visit != nil {
			if err := visit(ev); err != nil {
				return err
			}
		}
		return b.Add(ev)
	})
	if err == nil {
		err = b.End()
	}
	if errors.Is(err, ErrStop) {
		return nil
	}
	return errors.Wrapf(err, "rebuild %s", errors.Safe(id))
}

// StepInfo is one step of a session's index: what a digest-only fold
// knows about it.
type StepInfo struct {
	Ref
	Start int64
	Null  bool
	// Digest is the rebuilt request's SHA-256 (zero when Null).
	Digest [32]byte
	// Recorded lists the step's request/digest events.
	Recorded []rebuild.Recorded
	// HeaderSeq is the seq of the last header event in force, -1 for none.
	HeaderSeq int64
	// Gen is the surface generation at the boundary: it grows with every
	// replace (compaction).
	Gen int
}

// Marker is an event an overview points at: a header event (Kind its
// type, Reason the snapshot's reason) or a compaction summary (Start and
// End the seqs of the surface range it replaced).
type Marker struct {
	Seq        int64
	Kind       string
	Reason     string
	Start, End int64
}

// Overview is what one digest-only fold learns about a session: its
// steps, its header events and its compactions.
type Overview struct {
	Steps       []StepInfo
	Headers     []Marker
	Compactions []Marker
}

// Step returns the index in Steps of step r, or -1.
func (o *Overview) Step(r Ref) int {
	for i := range o.Steps {
		if o.Steps[i].Ref == r {
			return i
		}
	}
	return -1
}

// Index folds the session of head once, computing digests only (linear in
// the log, no request kept), and returns its overview.
func Index(ctx context.Context, st Store, head eventlog.Head) (*Overview, error) {
	o := &Overview{}
	visit := func(ev *codec.Event) error {
		switch d := ev.Data.(type) {
		case *codec.RequestHeader:
			o.Headers = append(o.Headers, Marker{Seq: ev.Seq, Kind: ev.Type, Reason: d.Reason})
		case *codec.HeaderDelta:
			o.Headers = append(o.Headers, Marker{Seq: ev.Seq, Kind: ev.Type, Reason: "delta"})
		}
		if ev.Op.Kind == codec.OpReplace {
			o.Compactions = append(o.Compactions, Marker{Seq: ev.Seq, Kind: ev.Type, Start: ev.Op.Start, End: ev.Op.End})
		}
		return nil
	}
	err := Steps(ctx, st, head, rebuild.BuilderOptions{}, visit, func(s rebuild.Step) error {
		o.Steps = append(o.Steps, StepInfo{Ref: Ref{s.Turn, s.Step}, Start: s.Start, Null: s.Null, Digest: s.Digest,
			Recorded: s.Recorded, HeaderSeq: s.HeaderSeq, Gen: s.Gen})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// Requests rebuilds the full requests of the steps whose step/start seqs
// are in starts, and calls fn for each, in log order; the walk ends after
// the last of them. Every other step costs its digest only.
func Requests(ctx context.Context, st Store, head eventlog.Head, starts []int64, fn func(rebuild.Step) error) error {
	want := make(map[int64]bool, len(starts))
	for _, s := range starts {
		want[s] = true
	}
	left := len(want)
	if left == 0 {
		return nil
	}
	opts := rebuild.BuilderOptions{Requests: true, Keep: func(start int64) bool { return want[start] }}
	return Steps(ctx, st, head, opts, nil, func(s rebuild.Step) error {
		if !want[s.Start] {
			return nil
		}
		if err := fn(s); err != nil {
			return err
		}
		if left--; left == 0 {
			return ErrStop
		}
		return nil
	})
}
