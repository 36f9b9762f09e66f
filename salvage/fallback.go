package salvage

import (
	"context"
	"fmt"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
)

// Fallback returns a Source that reads through primary and, where a read
// of primary fails, through secondary instead: the session list, a
// header or head record, and the records of a session from where primary
// stopped delivering them. Both must read the same store; the usual pair
// is an *boltlog.Log and a File on its path (boltlog.Log reads a chunk
// of records whole or not at all, and lists sessions only when every
// session's bucket reads, so damage costs more through it alone).
func Fallback(primary, secondary Source) Source {
	return &fallback{a: primary, b: secondary}
}

type fallback struct{ a, b Source }

// retry runs fn on the primary, then, when it failed for another reason
// than ctx, on the secondary, under protect. When both fail, the primary's
// error is kept, unless it did not find the session at all (eventlog does
// not see a session whose head it cannot find): the secondary's then says
// more.
func (f *fallback) retry(ctx context.Context, what string, fn func(s Source) error) error {
	err := protect(what, func() error { return fn(f.a) })
	if err == nil || ctx.Err() != nil {
		return err
	}
	err2 := protect(what, func() error { return fn(f.b) })
	switch {
	case err2 == nil:
		return nil
	case errors.Is(err, eventlog.ErrNotFound):
		return err2
	}
	return err
}

// SessionIDs lists the sessions both sources list, in order: the
// secondary can list sessions the primary skips (eventlog skips a session
// whose head record it cannot find, as if it were an import that never
// finished, which is also what a damaged head key looks like). When the
// primary fails, the secondary's list stands alone.
func (f *fallback) SessionIDs(ctx context.Context) ([]string, error) {
	ids, err := f.a.SessionIDs(ctx)
	if ctx.Err() != nil {
		return ids, err
	}
	ids2, err2 := f.b.SessionIDs(ctx)
	switch {
	case err != nil && (err2 == nil || len(ids2) > len(ids)):
		return ids2, err2
	case err != nil || err2 != nil:
		return ids, err
	}
	return union(ids, ids2), nil
}

// union merges two sorted lists of ids.
func union(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || len(a) > 0 && a[0] < b[0]:
			out, a = append(out, a[0]), a[1:]
		case len(a) == 0 || b[0] < a[0]:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, a[0]), a[1:], b[1:]
		}
	}
	return out
}

func (f *fallback) Head(ctx context.Context, id string) (eventlog.Head, error) {
	var h eventlog.Head
	err := f.retry(ctx, fmt.Sprintf("session %q: head record", id), func(s Source) error {
		var err error
		h, err = s.Head(ctx, id)
		return err
	})
	return h, err
}

func (f *fallback) HeaderRecord(ctx context.Context, id string) ([]byte, error) {
	var rec []byte
	err := f.retry(ctx, fmt.Sprintf("session %q: header record", id), func(s Source) error {
		var err error
		rec, err = s.HeaderRecord(ctx, id)
		return err
	})
	return rec, err
}

// fnError carries an error of the caller's fn through a Records walk, so
// that it is told apart from a failure of the source.
type fnError struct{ err error }

func (e *fnError) Error() string { return e.err.Error() }

// Records walks the primary; when it fails, the secondary goes on from the
// key after the last record delivered. An error of fn stops both and is
// returned as is.
func (f *fallback) Records(ctx context.Context, id string, from int64, fn func(seq int64, rec []byte) error) error {
	next := from
	wrapped := func(seq int64, rec []byte) error {
		if err := fn(seq, rec); err != nil {
			return &fnError{err}
		}
		next = seq + 1
		return nil
	}
	var fe *fnError
	err := protect(fmt.Sprintf("session %q: records from seq %d", id, from), func() error {
		return f.a.Records(ctx, id, from, wrapped)
	})
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		return fe.err
	case ctx.Err() != nil:
		return err
	}
	err2 := protect(fmt.Sprintf("session %q: records from seq %d", id, next), func() error {
		return f.b.Records(ctx, id, next, wrapped)
	})
	switch {
	case err2 == nil:
		return nil
	case errors.As(err2, &fe):
		return fe.err
	}
	return err2 // where the walk really stopped
}

// Store is a damaged store opened for Copy and Into by Open.
type Store struct {
	// Source reads the store: eventlog's reader with a File as its
	// Fallback, or the File alone when boltlog.Open refused the store.
	Source
	// Warnings say what Open had to work around: boltlog.Open's refusal,
	// a damaged format record.
	Warnings []error
	// Meta is boltlog's Log.CheckMeta error: a damaged bbolt meta page,
	// which makes bbolt read the store as it was one commit earlier (the
	// last commit may be lost; nothing in the data tells). nil when the
	// meta pages check out or boltlog.Open refused the store.
	Meta error
	// WAL is what Open read of the store's write-ahead log, laid over the
	// File (the eventlog reader replays the log itself); WAL.Damage is
	// set when the log is damaged, and the writes after the damage are
	// lost.
	WAL  *WAL
	log  *boltlog.Log
	file *File
}

// Open opens the store at path read-only for salvage, as the logtool
// salvage command does: with boltlog.Open, falling back to a File on the
// same path where eventlog's reads fail; when boltlog.Open refuses the
// store as damaged (ErrCorrupt), with the File alone. Errors are
// boltlog.Open's: ErrNotFound for a missing store, ErrLocked, and
// ErrCorrupt or ErrUnsupported when neither can open it.
func Open(path string, opts *FileOptions) (*Store, error) {
	var o FileOptions
	if opts != nil {
		o = *opts
	}
	log, lerr := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, &boltlog.Options{LockTimeout: o.LockTimeout})
	if lerr != nil && !errors.Is(lerr, eventlog.ErrCorrupt) {
		return nil, lerr
	}
	file, ferr := OpenFile(path, &o)
	w, werr := ReadWAL(path)
	s := &Store{log: log, file: file, WAL: w}
	if werr != nil {
		s.Warnings = append(s.Warnings, errors.Wrap(werr, "salvage: the write-ahead log cannot be read; its writes are lost"))
	}
	switch {
	case lerr == nil && ferr == nil:
		s.Source = Fallback(log, w.Over(file))
	case lerr == nil:
		s.Source = log
		s.Warnings = append(s.Warnings, errors.Wrap(ferr, "salvage: no second reader"))
	case ferr == nil:
		s.Source = w.Over(file)
		s.Warnings = append(s.Warnings, errors.Wrap(lerr, "salvage: the store does not open as a whole; reading it session by session"))
	default:
		return nil, lerr
	}
	if log != nil {
		s.Meta = log.CheckMeta()
	}
	if file != nil && file.FormatErr() != nil {
		s.Warnings = append(s.Warnings, file.FormatErr())
	}
	return s, nil
}

// Notes lists what the File found under damaged keys (see File.Notes),
// and what the write-ahead log's read noted (WAL.Notes).
func (s *Store) Notes() []string {
	var out []string
	if s.file != nil {
		out = s.file.Notes()
	}
	if s.WAL != nil {
		out = append(out, s.WAL.Notes()...)
	}
	return out
}

// Close closes what Open opened.
func (s *Store) Close() error {
	var err error
	if s.log != nil {
		err = s.log.Close()
	}
	if s.file != nil {
		err = errors.CombineErrors(err, s.file.Close())
	}
	return err
}
