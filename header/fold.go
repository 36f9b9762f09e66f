package header

import (
	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
)

// Fold is the header fold of docs/rules.md#header-fold: the latest request/header snapshot
// with every later request/header-delta applied in order. The zero value
// has no header. A Fold is a small value: copying it (or calling Clone)
// gives an independent fold, since the snapshots it holds are never
// modified.
type Fold struct {
	cur Snapshot
	has bool
}

// Add folds one event: a request/header replaces the header in force with
// its decoded snapshot, a request/header-delta is applied to it, and every
// other event type is ignored. A delta with no earlier snapshot, or a
// header or delta that fails to decode, is an error naming the seq (marked
// ErrInvalid, or ErrCorrupt), and leaves the fold as it was.
//
// ev.Data must be the view codec.DecodeEvent gives the event's type.
func (f *Fold) Add(ev *codec.Event) error {
	switch ev.Type {
	case codec.TypeRequestHeader:
		rh, ok := ev.Data.(*codec.RequestHeader)
		if !ok {
			return codec.NamesSeq(invalidf("header: request/header at seq %d has no header view", errors.Safe(ev.Seq)))
		}
		s, err := Decode(rh.Header)
		if err != nil {
			return codec.NamesSeq(errors.Wrapf(err, "request/header at seq %d", errors.Safe(ev.Seq)))
		}
		f.cur, f.has = s, true
	case codec.TypeHeaderDelta:
		if !f.has {
			return codec.NamesSeq(invalidf("header: request/header-delta at seq %d before any request/header snapshot",
				errors.Safe(ev.Seq)))
		}
		hd, ok := ev.Data.(*codec.HeaderDelta)
		if !ok {
			return codec.NamesSeq(invalidf("header: request/header-delta at seq %d has no delta view", errors.Safe(ev.Seq)))
		}
		d, err := DecodeDelta(hd.Raw)
		if err != nil {
			return codec.NamesSeq(errors.Wrapf(err, "request/header-delta at seq %d", errors.Safe(ev.Seq)))
		}
		f.cur = Apply(f.cur, d)
	}
	return nil
}

// Current returns the header in force and whether there is one (there is
// none before the first snapshot).
func (f Fold) Current() (Snapshot, bool) {
	return f.cur, f.has
}

// Clone returns an independent copy of the fold.
func (f Fold) Clone() Fold { return f }
