package salvage

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/wal"
	"github.com/sessionlog/sessionlog/internal/boltfmt"
	"github.com/sessionlog/sessionlog/internal/errclass"
)

// The write-ahead log.
//
// A store a crash left behind may hold acknowledged writes in its
// write-ahead log only (boltlog.WALDir): creations of sessions, and
// appends that continue sessions of the tree. eventlog's reader replays
// them itself; File reads the tree only, so Open lays the log's writes
// over it (WAL): a session the log creates is read from the log alone,
// one it appends to reads the tree below the log's first seq and the log
// from there, with the log's newest head. The copy then checks them like
// any records: an append that does not continue what the tree holds is a
// gap, a chain hash that does not continue is a Chain cause.
//
// The log is read from its first segment on, not from meta/wal: records
// the tree holds already are read again, and give the same bytes at the
// same seqs, so a damaged meta bucket costs nothing. A damaged log is read
// up to the damage (Store.WAL says where); the writes after it are lost.

// WAL is what Open read of the store's write-ahead log: the writes of its
// records, by session.
type WAL struct {
	// Report is what the read found: segments, records, a torn tail.
	Report wal.Report
	// Damage is why the read stopped before the end of the log (marked
	// eventlog.ErrCorrupt, naming the segment and offset); nil when the
	// log was read whole.
	Damage error
	// Writes counts the creations and appends read.
	Writes   int
	sessions map[string]*walSession
	created  []string // ids the log creates, sorted
}

// walSession is one session's writes in the log.
type walSession struct {
	headerRec []byte   // the header record, when the log creates it
	first     int64    // seq of recs[0]
	recs      [][]byte // the appended records, contiguous
	headRec   []byte   // the newest head record
	// broken is set when an append did not continue the ones before it:
	// later appends are dropped (a prefix, as everywhere).
	broken error
}

// ReadWAL reads the write-ahead log of the store at path for salvage,
// writing nothing. A missing log is an empty WAL. Damage is not an error:
// it ends the read, and WAL.Damage says where; the error is for a log
// that cannot be listed or read at all.
func ReadWAL(path string) (*WAL, error) {
	w := &WAL{sessions: map[string]*walSession{}}
	segs, err := wal.Segments(boltlog.WALDir(path))
	if err != nil || len(segs) == 0 {
		return w, err
	}
	first, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(segs[0]), ".wal"), 16, 64)
	if err != nil || first == 0 {
		return w, errors.Wrapf(err, "salvage: write-ahead log segment %s", errors.Safe(filepath.Base(segs[0])))
	}
	w.Report, err = boltfmt.ReadWAL(path, first-1, func(ww boltfmt.WALWrite) error {
		w.add(ww)
		return nil
	})
	if err != nil {
		if !errors.Is(err, eventlog.ErrCorrupt) {
			return w, err
		}
		w.Damage = errclass.Mark(errors.Wrap(err, "salvage: the write-ahead log is damaged; its writes after the damage are lost"), ErrDamaged)
	}
	for id, s := range w.sessions {
		if s.headerRec != nil {
			w.created = append(w.created, id)
		}
	}
	sort.Strings(w.created)
	return w, nil
}

// add takes one write; its slices are copied.
func (w *WAL) add(ww boltfmt.WALWrite) {
	s := w.sessions[ww.Session]
	if s == nil {
		s = &walSession{first: -1}
		w.sessions[ww.Session] = s
	}
	if s.broken != nil {
		return
	}
	w.Writes++
	if ww.HeaderRecord != nil {
		s.headerRec = clone(ww.HeaderRecord)
		s.first = 0
	} else if len(ww.Records) > 0 {
		switch next := s.first + int64(len(s.recs)); {
		case s.first < 0:
			s.first = ww.First
		case ww.First != next:
			s.broken = damagedf("salvage: session %q: the write-ahead log record %d appends at seq %d, after seq %d",
				errors.Safe(ww.Session), errors.Safe(ww.LSN), errors.Safe(ww.First), errors.Safe(next-1))
			return
		}
		for _, r := range ww.Records {
			s.recs = append(s.recs, clone(r))
		}
	}
	s.headRec = clone(ww.HeadRecord)
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// Over returns src with the log's writes laid over it (see above); src
// itself when the log holds none.
func (w *WAL) Over(src Source) Source {
	if w == nil || len(w.sessions) == 0 {
		return src
	}
	return &walOverlay{src: src, w: w}
}

// Notes says what a reader of the salvage should know of the log: a torn
// tail dropped, an append that did not continue a session.
func (w *WAL) Notes() []string {
	var out []string
	if w.Report.TornBytes > 0 {
		out = append(out, fmt.Sprintf("salvage: dropped a torn tail of the write-ahead log, %d bytes at %s (a write a crash interrupted, never acknowledged)",
			w.Report.TornBytes, w.Report.TornAt))
	}
	ids := make([]string, 0, len(w.sessions))
	for id := range w.sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := w.sessions[id].broken; err != nil {
			out = append(out, err.Error())
		}
	}
	return out
}

type walOverlay struct {
	src Source
	w   *WAL
}

func (o *walOverlay) SessionIDs(ctx context.Context) ([]string, error) {
	ids, err := o.src.SessionIDs(ctx)
	return union(ids, o.w.created), err
}

func (o *walOverlay) HeaderRecord(ctx context.Context, id string) ([]byte, error) {
	if s := o.w.sessions[id]; s != nil && s.headerRec != nil {
		return s.headerRec, nil
	}
	return o.src.HeaderRecord(ctx, id)
}

func (o *walOverlay) Head(ctx context.Context, id string) (eventlog.Head, error) {
	s := o.w.sessions[id]
	if s == nil || s.headRec == nil {
		return o.src.Head(ctx, id)
	}
	hrec, err := o.HeaderRecord(ctx, id)
	if err != nil {
		return eventlog.Head{}, err
	}
	hdr, err := decodeHeader(id, hrec)
	if err != nil {
		return eventlog.Head{}, err
	}
	h, err := boltfmt.DecodeHead(s.headRec)
	if err != nil {
		return eventlog.Head{}, errclass.Mark(errors.Wrapf(err, "salvage: session %q: head record in the write-ahead log", errors.Safe(id)), ErrDamaged)
	}
	out := eventlog.Head{Header: hdr, Next: h.Next, Turns: h.Turns, LastTime: h.LastTime, StoredBytes: h.Stored}
	copy(out.Chain[:], h.Chain)
	return out, nil
}

// errBelow stops the tree's walk at the log's first seq.
var errBelow = errors.New("salvage: the write-ahead log holds the rest")

func (o *walOverlay) Records(ctx context.Context, id string, from int64, fn func(seq int64, rec []byte) error) error {
	s := o.w.sessions[id]
	if s == nil || (s.headerRec == nil && len(s.recs) == 0) {
		return o.src.Records(ctx, id, from, fn)
	}
	if s.headerRec == nil && from < s.first {
		err := o.src.Records(ctx, id, from, func(seq int64, rec []byte) error {
			if seq >= s.first {
				return errBelow
			}
			return fn(seq, rec)
		})
		if err != nil && !errors.Is(err, errBelow) {
			return err // the tree's damage, or fn's error: the walk stops there
		}
	}
	for i := max(from-s.first, 0); i < int64(len(s.recs)); i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(s.first+i, s.recs[i]); err != nil {
			return err
		}
	}
	return nil
}
