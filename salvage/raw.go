package salvage

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/boltfmt"
	"github.com/sessionlog/sessionlog/internal/errclass"
)

// File is a store file opened directly with bbolt, read-only, as a Source
// for a store that boltlog.Open refuses: Open reads every session's
// bucket to find unpublished ones, so one damaged page of one session
// makes the whole store unopenable. File reads the layout that package
// eventlog documents as frozen (FormatVersion 1: the sessions bucket, one
// bucket per session with its header and head records and its events
// bucket, 8-byte big-endian seq keys, records framed by codec, version 1 or 2)
// one session at a time, so that damage stays with the session it is in.
//
// The keys of a session bucket are "events" (a bucket), "head" and
// "header" (records). When one is not found (its key, or the page's order,
// is damaged), File looks for what it names under the bucket's other keys:
// the events bucket is the session bucket's only sub-bucket, the header
// record the value that decodes as a session header naming the session,
// the head record the value that decodes as a head record. Notes lists
// what was found that way.
//
// A session bucket that an Import or Fork was still filling (its
// "staging" mark, no head) is listed, and its Head fails with
// ErrUnpublished: Copy skips it. One with neither head nor mark is
// damaged: Copy copies its events and reports its head as unreadable.
type File struct {
	db   *bolt.DB
	path string
	// copy is the temporary copy db reads when the store's meta pages
	// were both damaged (openFound); "" otherwise.
	copy string
	// format is the store's format version; formatErr why it could not be
	// read.
	format    int64
	formatErr error
	// damage is what boltfmt.CheckPages found: the reads stop before
	// it, so that bbolt never reads a damaged page.
	damage boltfmt.PageDamage

	mu    sync.Mutex
	notes []string // records found under a damaged key, in order
	noted map[string]bool
}

var _ Source = (*File)(nil)

// FileOptions configures OpenFile. The zero value (or nil) means the
// defaults.
type FileOptions struct {
	// LockTimeout bounds the wait for a store another process holds for
	// writing; then OpenFile fails with eventlog.ErrLocked. 0 means 1 s.
	LockTimeout time.Duration
}

// OpenFile opens the store file at path read-only, directly with bbolt. A
// missing file is eventlog.ErrNotFound; a file bbolt cannot open (both meta
// pages damaged, not a bbolt file) is eventlog.ErrCorrupt; a store whose
// format record says a newer format is eventlog.ErrUnsupported. A damaged
// format record is not an error: FormatErr reports it, and the records,
// which carry their own version byte and CRC, are read as format 1.
func OpenFile(path string, opts *FileOptions) (*File, error) {
	var o FileOptions
	if opts != nil {
		o = *opts
	}
	if o.LockTimeout == 0 {
		o.LockTimeout = boltlog.DefaultLockTimeout
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errclass.Mark(errors.Newf("salvage: no store at %s", errors.Safe(path)), eventlog.ErrNotFound)
	case err != nil:
		return nil, errors.Wrapf(err, "salvage: open %s", errors.Safe(path))
	}
	db, err := openRaw(path, o, 0)
	if errors.Is(err, eventlog.ErrCorrupt) {
		// Both meta pages damaged: find the tree from the pages.
		return openFound(path, o, err)
	}
	if err != nil {
		return nil, err
	}
	f := &File{db: db, path: path}
	// A truncated file: map the size its last transaction needs, so that a
	// missing page faults (and is reported) instead of being read past the
	// end of the map.
	var need int64
	if err := protect("store size", func() error {
		return db.View(func(tx *bolt.Tx) error { need = tx.Size(); return nil })
	}); err != nil {
		return nil, errors.CombineErrors(errclass.Mark(err, eventlog.ErrCorrupt), db.Close())
	}
	if need > fi.Size() && need <= 1<<40 {
		if err := db.Close(); err != nil {
			return nil, errors.Wrapf(err, "salvage: open %s", errors.Safe(path))
		}
		if f.db, err = openRaw(path, o, int(need)); err != nil {
			return nil, err
		}
	}
	if err := f.checkPages(); err != nil {
		return nil, errors.CombineErrors(err, f.db.Close())
	}
	if err := f.readFormat(); err != nil {
		return nil, errors.CombineErrors(err, f.db.Close())
	}
	return f, nil
}

// checkPages runs boltfmt.CheckPages on the file.
func (f *File) checkPages() error {
	fh, err := os.Open(f.path)
	if err != nil {
		return errors.Wrapf(err, "salvage: open %s", errors.Safe(f.path))
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return errors.Wrapf(err, "salvage: open %s", errors.Safe(f.path))
	}
	f.damage = boltfmt.CheckPages(fh, fi.Size(), 0, 0, 0)
	return nil
}

// damaged returns the damage that makes reading session id from seq from
// on (-1: its bucket) unsafe, nil when there is none.
func (f *File) damaged(id string, from int64) error {
	if err := f.damage.Err(id, from); err != nil {
		if f.damage.Store == nil {
			err = errors.Wrapf(err, "salvage: session %q", errors.Safe(id))
		}
		return errclass.Mark(err, ErrDamaged)
	}
	return nil
}

// openRaw opens the bbolt file read-only under protect.
func openRaw(path string, o FileOptions, mmapSize int) (*bolt.DB, error) {
	var db *bolt.DB
	err := protect("open", func() error {
		var err error
		db, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: o.LockTimeout, InitialMmapSize: mmapSize})
		return err
	})
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, berrors.ErrTimeout):
		return nil, errclass.Mark(errors.Newf("salvage: store %s is locked by another process (waited %s)",
			errors.Safe(path), errors.Safe(o.LockTimeout)), eventlog.ErrLocked)
	}
	return nil, errclass.Mark(errors.Wrapf(err, "salvage: %s is not a session store or is damaged beyond bbolt's meta pages",
		errors.Safe(path)), eventlog.ErrCorrupt)
}

// readFormat reads meta/format: a newer format is refused; an unreadable
// one is remembered.
func (f *File) readFormat() error {
	var rec []byte
	err := f.damaged("", -1)
	if err != nil {
		f.formatErr = errors.Wrapf(err, "salvage: %s: the format record is unreadable; reading it as format %d",
			errors.Safe(f.path), errors.Safe(boltlog.FormatVersion))
		return nil
	}
	err = protect("meta/format", func() error {
		return f.db.View(func(tx *bolt.Tx) error {
			meta := tx.Bucket(boltfmt.BucketMeta)
			if meta == nil {
				return damagedf("salvage: the store has no %q bucket", errors.Safe(string(boltfmt.BucketMeta)))
			}
			rec = bytes.Clone(meta.Get(boltfmt.KeyFormat))
			if rec == nil {
				return damagedf("salvage: meta/format is missing")
			}
			return nil
		})
	})
	if err == nil {
		var m boltfmt.MetaRecord
		if m, err = boltfmt.DecodeMeta(rec); err == nil {
			f.format = m.Format
		} else {
			err = errclass.Mark(err, ErrDamaged)
		}
	}
	switch {
	case err != nil:
		f.formatErr = errors.Wrapf(err, "salvage: %s: the format record is unreadable; reading it as format %d",
			errors.Safe(f.path), errors.Safe(boltlog.FormatVersion))
	case f.format > boltlog.FormatVersion:
		return errclass.Mark(errors.Newf("salvage: store format %d is newer than this program's %d",
			errors.Safe(f.format), errors.Safe(boltlog.FormatVersion)), eventlog.ErrUnsupported)
	}
	return nil
}

// FormatErr is why the store's format record could not be read (nil when
// it was).
func (f *File) FormatErr() error { return f.formatErr }

// Close closes the file.
func (f *File) Close() error {
	err := f.db.Close()
	if f.copy != "" {
		err = errors.CombineErrors(err, os.Remove(f.copy))
	}
	return errors.Wrapf(err, "salvage: close %s", errors.Safe(f.path))
}

// openFound opens a store whose meta pages bbolt refuses (openErr): it
// finds the tree from the pages themselves (boltfmt.FindTree), and opens
// a temporary copy of the file whose meta pages name that tree; the store
// itself is never written. Notes says which tree was taken.
func openFound(path string, o FileOptions, openErr error) (*File, error) {
	src, err := os.Open(path)
	if err != nil {
		return nil, errors.Wrapf(err, "salvage: open %s", errors.Safe(path))
	}
	defer src.Close()
	if err := lockShared(src, o.LockTimeout); err != nil {
		return nil, errclass.Mark(errors.Newf("salvage: store %s is locked by another process (waited %s)",
			errors.Safe(path), errors.Safe(o.LockTimeout)), eventlog.ErrLocked)
	}
	fi, err := src.Stat()
	if err != nil {
		return nil, errors.Wrapf(err, "salvage: open %s", errors.Safe(path))
	}
	tree, err := boltfmt.FindTree(src, fi.Size())
	if err != nil {
		return nil, errors.WithDetail(errors.CombineErrors(openErr, err), "no tree found from the pages either")
	}
	tmp, err := os.CreateTemp("", "salvage-tree-*.db")
	if err != nil {
		return nil, errors.Wrap(err, "salvage: a temporary copy of the store")
	}
	f := &File{path: path, copy: tmp.Name(), damage: tree.Damage}
	_, err = io.Copy(tmp, io.NewSectionReader(src, 0, fi.Size()))
	if err == nil {
		_, err = tmp.WriteAt(tree.MetaPages(1), 0)
	}
	err = errors.CombineErrors(err, tmp.Close())
	if err == nil {
		f.db, err = openRaw(f.copy, o, 0)
	}
	if err != nil {
		return nil, errors.CombineErrors(errors.Wrap(err, "salvage: a temporary copy of the store"), os.Remove(f.copy))
	}
	f.note("both bbolt meta pages are damaged: the store was read from the tree found at page %d (of %d pages that look like the root of a tree, the one whose tree holds the most events, %d); what commits after it wrote, if any, cannot be found",
		tree.Root, tree.Candidates, tree.Damage.Events)
	if err := f.readFormat(); err != nil {
		return nil, errors.CombineErrors(err, f.Close())
	}
	return f, nil
}

// lockShared takes a shared flock on f (as bbolt's read-only open does),
// waiting up to timeout; the lock goes with f's Close.
func lockShared(f *os.File, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// view runs fn in a read transaction under protect.
func (f *File) view(what string, fn func(tx *bolt.Tx) error) error {
	return protect(what, func() error { return f.db.View(fn) })
}

// SessionIDs lists the keys of the sessions bucket, in key order, without
// reading the session buckets: every key names a session, and one whose
// value is not a bucket (a damaged page) is listed too, so that it is
// reported rather than skipped. When the walk breaks on damage, the ids
// listed before it are returned with the error.
func (f *File) SessionIDs(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := f.damage.Store; err != nil {
		return nil, errors.Wrap(errclass.Mark(err, ErrDamaged), "salvage: list sessions")
	}
	var ids []string
	err := f.view("list sessions", func(tx *bolt.Tx) error {
		ss := tx.Bucket(boltfmt.BucketSessions)
		if ss == nil {
			return damagedf("salvage: the store has no %q bucket", errors.Safe(string(boltfmt.BucketSessions)))
		}
		c := ss.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			ids = append(ids, string(k))
		}
		return nil
	})
	return ids, errors.Wrap(err, "salvage: list sessions")
}

// session returns the bucket of session id.
func session(tx *bolt.Tx, id string) (*bolt.Bucket, error) {
	ss := tx.Bucket(boltfmt.BucketSessions)
	if ss == nil {
		return nil, damagedf("salvage: the store has no %q bucket", errors.Safe(string(boltfmt.BucketSessions)))
	}
	b := ss.Bucket([]byte(id))
	if b == nil {
		if ss.Get([]byte(id)) != nil {
			return nil, damagedf("salvage: sessions/%q is a value, not a session bucket", errors.Safe(id))
		}
		return nil, errclass.Mark(errors.Newf("salvage: no session %q", errors.Safe(id)), eventlog.ErrNotFound)
	}
	return b, nil
}

// value copies a stored value out of the transaction, refusing a length
// no record can have (a damaged page can claim up to 4 GiB).
func value(v []byte, what string) ([]byte, error) {
	if len(v) > codec.MaxPack {
		return nil, damagedf("salvage: %s of %d bytes is longer than any record or pack", errors.Safe(what), errors.Safe(len(v)))
	}
	return bytes.Clone(v), nil
}

// HeaderRecord returns a copy of the session's stored header record.
func (f *File) HeaderRecord(ctx context.Context, id string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := f.damaged(id, -1); err != nil {
		return nil, err
	}
	var rec []byte
	err := f.view(fmt.Sprintf("session %q: header record", id), func(tx *bolt.Tx) error {
		b, err := session(tx, id)
		if err != nil {
			return err
		}
		v := f.headerValue(b, id)
		if v == nil {
			return damagedf("salvage: session %q has no header record", errors.Safe(id))
		}
		rec, err = value(v, "header record")
		return err
	})
	return rec, err
}

// Head returns the session's head, decoded. A session without a head
// record (never published, or its head key is damaged) is an error.
func (f *File) Head(ctx context.Context, id string) (eventlog.Head, error) {
	if err := ctx.Err(); err != nil {
		return eventlog.Head{}, err
	}
	if err := f.damaged(id, -1); err != nil {
		return eventlog.Head{}, err
	}
	var headRec, headerRec []byte
	err := f.view(fmt.Sprintf("session %q: head record", id), func(tx *bolt.Tx) error {
		b, err := session(tx, id)
		if err != nil {
			return err
		}
		v := f.headValue(b, id)
		switch {
		case v == nil && b.Get(boltfmt.KeyStaging) != nil:
			return errclass.Mark(errors.Newf("salvage: session %q was never published: an import or fork did not finish",
				errors.Safe(id)), ErrUnpublished)
		case v == nil:
			return damagedf("salvage: session %q has no head record", errors.Safe(id))
		}
		if headRec, err = value(v, "head record"); err != nil {
			return err
		}
		headerRec, err = value(f.headerValue(b, id), "header record")
		return err
	})
	if err != nil {
		return eventlog.Head{}, err
	}
	hdr, err := decodeHeader(id, headerRec)
	if err != nil {
		return eventlog.Head{}, err
	}
	h, err := boltfmt.DecodeHead(headRec)
	if err != nil {
		return eventlog.Head{}, errclass.Mark(errors.Wrapf(err, "salvage: session %q: head record", errors.Safe(id)), ErrDamaged)
	}
	return boltfmt.ToHead(h, hdr), nil
}

// Records calls fn with every record of the session's events bucket from
// key seq from on, in key order (from 0: every key), reading in chunks,
// one transaction each; fn runs outside the transaction. A key that is
// not 8 bytes, or a value that is a bucket or longer than any record,
// stops the walk with an error.
func (f *File) Records(ctx context.Context, id string, from int64, fn func(seq int64, rec []byte) error) error {
	if from < 0 {
		return errclass.Mark(errors.Newf("salvage: records of session %q from seq %d", errors.Safe(id), errors.Safe(from)), eventlog.ErrInvalid)
	}
	w := boltfmt.EventWalk{Session: id, Next: from, Damage: &f.damage, MaxRecords: chunkRecords, MaxBytes: chunkBytes}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var recs []record
		var more bool
		var damage error
		err := f.view(fmt.Sprintf("session %q: records from seq %d", id, w.Next), func(tx *bolt.Tx) error {
			if damage = f.damage.Err(id, w.Next); damage != nil {
				return nil // nothing of the session is read past its damage
			}
			b, err := session(tx, id)
			if err != nil {
				return err
			}
			eb := f.eventsBucket(b, id)
			if eb == nil {
				return damagedf("salvage: session %q has no events bucket", errors.Safe(id))
			}
			more, damage, err = w.Walk(eb, boltfmt.BoundsOf(tx), func(seq int64, rec []byte) bool {
				recs = append(recs, record{seq: seq, b: bytes.Clone(rec)})
				return true
			})
			return errclass.Mark(err, ErrDamaged)
		})
		for _, r := range recs {
			if ferr := fn(r.seq, r.b); ferr != nil {
				return ferr
			}
		}
		if err == nil && damage != nil {
			err = f.damaged(id, w.Next)
		}
		if err != nil {
			return errors.Wrapf(err, "salvage: records of session %q", errors.Safe(id))
		}
		if !more {
			return nil
		}
	}
}

// note records that a record or bucket was found under a damaged key.
func (f *File) note(format string, args ...interface{}) {
	n := fmt.Sprintf(format, args...)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noted == nil {
		f.noted = map[string]bool{}
	}
	if !f.noted[n] {
		f.noted[n] = true
		f.notes = append(f.notes, n)
	}
}

// Notes lists the records and buckets found under a damaged key so far,
// one sentence each, naming the session.
func (f *File) Notes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.notes...)
}

// eventsBucket returns the events bucket of session bucket b: the bucket
// under "events", else the session bucket's only sub-bucket.
func (f *File) eventsBucket(b *bolt.Bucket, id string) *bolt.Bucket {
	if eb := b.Bucket(boltfmt.BucketEvents); eb != nil {
		return eb
	}
	var key []byte
	n := 0
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v == nil {
			key, n = k, n+1
		}
	}
	if n != 1 {
		return nil
	}
	f.note("session %q: its events bucket was found under the key %q by a walk of the session's bucket, where a lookup missed it (a damaged key, or key order)", id, key)
	return b.Bucket(key)
}

// headerValue returns the header record of session bucket b: the value
// under "header", else the value that decodes as a header naming id.
func (f *File) headerValue(b *bolt.Bucket, id string) []byte {
	if v := b.Get(boltfmt.KeyHeader); v != nil {
		return v
	}
	return f.search(b, id, "header record", boltfmt.KeyHead, func(v []byte) bool {
		_, err := decodeHeader(id, v)
		return err == nil
	})
}

// headValue returns the head record of session bucket b: the value under
// "head", else the value that decodes as a head record.
func (f *File) headValue(b *bolt.Bucket, id string) []byte {
	if v := b.Get(boltfmt.KeyHead); v != nil {
		return v
	}
	return f.search(b, id, "head record", boltfmt.KeyHeader, func(v []byte) bool {
		_, err := boltfmt.DecodeHead(v)
		return err == nil
	})
}

// search returns the one value of b, not under key other, that ok
// accepts; nil when there is none or more than one.
func (f *File) search(b *bolt.Bucket, id, what string, other []byte, ok func(v []byte) bool) []byte {
	var found, key []byte
	n := 0
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil && !bytes.Equal(k, other) && len(v) <= codec.MaxRecord && ok(v) {
			found, key, n = v, k, n+1
		}
	}
	if n != 1 {
		return nil
	}
	f.note("session %q: its %s was found under the key %q by a walk of the session's bucket, where a lookup missed it (a damaged key, or key order)", id, what, key)
	return found
}
