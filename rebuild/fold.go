package rebuild

import (
	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/header"
)

// node is one surface node: the seq of a model-visible event and, when the
// fold derives history, the JSON of its projected message (nil when the
// event projects to nothing, or when messages are not derived).
type node struct {
	seq int64
	msg []byte
}

// Fold is the incremental fold of one session's events that every rule of
// docs/rules.md#surface and docs/rules.md#header is checked by: the surface and the header in force. The
// store's append validation, the incremental Builder and the from-scratch
// reference all fold through it, so a log the store accepts is a log that
// rebuilds.
//
// INVARIANTS: a failed Add leaves the Fold as it was. Surface slices are
// never written in place once built: a replace makes a new backing array,
// so a slice saved earlier keeps seeing the surface as it was.
type Fold struct {
	next    int64
	surface []node
	header  header.Fold
	derive  bool
	// headerSeq is the seq of the last header event folded (-1: none).
	headerSeq int64
	// gen counts surface rewrites (replaces).
	gen int
	// snapshots counts request/header events; reason is the latest one's.
	snapshots int
	reason    string
}

// NewFold returns an empty fold. With derive set, surface nodes carry the
// JSON of their derived message (docs/rules.md#derived-history).
func NewFold(derive bool) *Fold {
	return &Fold{derive: derive, headerSeq: -1}
}

// Next is the seq the next event must have.
func (f *Fold) Next() int64 { return f.next }

// Header returns the header in force (docs/rules.md#header-fold) and whether there is one.
func (f *Fold) Header() (header.Snapshot, bool) { return f.header.Current() }

// Surface returns the seqs on the surface, in surface order.
func (f *Fold) Surface() []int64 {
	out := make([]int64, len(f.surface))
	for i, n := range f.surface {
		out[i] = n.seq
	}
	return out
}

// Message returns the derived message of the surface node seq (nil when
// it projects to nothing, or when the fold does not derive messages) and
// whether seq is on the surface. The bytes are the fold's own: callers
// that keep a node's message share them instead of projecting it again,
// and never modify them. The newest nodes are found first.
func (f *Fold) Message(seq int64) ([]byte, bool) {
	for i := len(f.surface) - 1; i >= 0; i-- {
		if f.surface[i].seq == seq {
			return f.surface[i].msg, true
		}
	}
	return nil, false
}

// Validate checks ev and folds it; it is Add under the name the store's
// Validator interface uses.
func (f *Fold) Validate(ev *codec.Event) error { return f.Add(ev) }

// Add checks ev against every rule that needs the log so far and folds it.
// Errors are marked ErrInvalid and name the seq.
func (f *Fold) Add(ev *codec.Event) error {
	if ev.Seq != f.next {
		return codec.NamesSeq(invalidf("rebuild: seq %d where %d was expected", errors.Safe(ev.Seq), errors.Safe(f.next)))
	}
	var err error
	switch {
	case ev.Op.Kind != codec.OpNone:
		err = f.addSurface(ev)
	case ev.Type == codec.TypeRequestHeader || ev.Type == codec.TypeHeaderDelta:
		err = f.header.Add(ev)
		if err == nil {
			f.headerSeq = ev.Seq
			if rh, ok := ev.Data.(*codec.RequestHeader); ok {
				f.snapshots++
				f.reason = rh.Reason
			}
		}
	}
	if err != nil {
		return codec.AtSeq(err, ev.Seq)
	}
	f.next++
	return nil
}

func (f *Fold) addSurface(ev *codec.Event) error {
	n := node{seq: ev.Seq}
	if f.derive {
		n.msg = Project(ev)
	}
	if ev.Op.Kind == codec.OpAppend {
		f.surface = append(f.surface, n)
		return nil
	}
	ps, pe, err := f.replaceRange(ev)
	if err != nil {
		return err
	}
	s := make([]node, 0, len(f.surface)-(pe-ps))
	s = append(s, f.surface[:ps]...)
	s = append(s, n)
	s = append(s, f.surface[pe+1:]...)
	f.surface = s
	f.gen++
	return nil
}

// replaceRange checks a replace (docs/rules.md#surface) and returns the positions it
// replaces: start and end on the surface, in order, every replaced seq
// cited in sourceEventSeqs.
func (f *Fold) replaceRange(ev *codec.Event) (ps, pe int, err error) {
	ps, pe = -1, -1
	for i, n := range f.surface {
		if n.seq == ev.Op.Start {
			ps = i
		}
		if n.seq == ev.Op.End {
			pe = i
		}
	}
	switch {
	case ps < 0:
		return 0, 0, invalidf("rebuild: replace start %d is not on the surface", errors.Safe(ev.Op.Start))
	case pe < 0:
		return 0, 0, invalidf("rebuild: replace end %d is not on the surface", errors.Safe(ev.Op.End))
	case ps > pe:
		return 0, 0, invalidf("rebuild: replace start %d comes after end %d on the surface",
			errors.Safe(ev.Op.Start), errors.Safe(ev.Op.End))
	}
	cited := make(map[int64]struct{}, len(ev.Sources))
	for _, s := range ev.Sources {
		cited[s] = struct{}{}
	}
	for _, n := range f.surface[ps : pe+1] {
		if _, ok := cited[n.seq]; !ok {
			return 0, 0, invalidf("rebuild: replaced seq %d is not in sourceEventSeqs", errors.Safe(n.seq))
		}
	}
	return ps, pe, nil
}

// NewValidator returns the store's validation state for a new session
// (docs/rules.md#validation): a Fold without derived messages, which
// checks every rule that an append must pass. The session header plays no part in
// them. Its type makes it assignable to eventlog.Options.NewValidator
// without this package importing the store.
func NewValidator(codec.SessionHeader) interface{ Validate(*codec.Event) error } {
	return NewFold(false)
}
