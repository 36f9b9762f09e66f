package boltlog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
	"github.com/sessionlog/sessionlog/eventlog/wal"
	"github.com/sessionlog/sessionlog/internal/atomicfile"
	"github.com/sessionlog/sessionlog/internal/boltfmt"
	"github.com/sessionlog/sessionlog/internal/errclass"
)

// Log is the bbolt Store: one bbolt file holding any number of sessions,
// in the layout of the package doc. It is safe for concurrent use. Open
// it with Open and release it with Close.
//
// Its Store methods (Create, Append, Head, Sessions, SessionPage, Scan,
// Fork, Import, Close) and CommitStats are the shared engine's, which Log
// embeds (see eventlog's package doc); the rest are its own.
//
// Goroutines: a read-write Log runs the engine's committer and an applier
// (apply.go), started by Open and ended by Close once every in-flight
// write has been answered and applied. A read-only Log runs none. No
// method leaves a goroutine behind.
type Log struct {
	*core
	db       *bolt.DB
	path     string
	opts     Options          // defaults applied
	eopts    eventlog.Options // defaults applied
	readOnly bool
	obs      *observer

	// The write-ahead log (apply.go, tail.go): wal is nil for a read-only
	// Log; tails holds the writes the tree lacks; applied is the last lsn
	// the tree holds. walBuf is the committer's encoding buffer.
	wal         *wal.WAL
	walBuf      []byte
	walReport   wal.Report
	walReplayed int // records past meta/wal that Open found
	tails       *tails
	applied     atomic.Uint64
	applyKick   chan struct{}
	applyStop   chan struct{}
	applierDone chan struct{}
	roundMu     sync.Mutex // one apply round at a time
	applyMu     sync.Mutex // guards applyErr
	applyErr    error      // sticky: a failed apply round

	// damage is what CheckPages found inside sessions when the store was
	// opened (damage above them refuses the store): the readers stop
	// before it. Nil when nothing is damaged.
	damage *boltfmt.PageDamage

	// Test hooks, set only by tests before the Log is used: hookWrite
	// runs in each append's write; hookNoFinalApply makes the applier
	// stop without a last round, as a killed process would.
	hookWrite        func(session string) error
	hookNoFinalApply bool
}

// core is the engine a Log embeds, whose exported methods are the
// Store's: an alias, so that the embedded field is unexported.
type core = engine.Engine

var _ eventlog.Store = (*Log)(nil)

// noFreelistSync is passed to bbolt as NoFreelistSync. Writing the
// freelist costs a page per commit; without it, a read-write Open scans
// the whole file to rebuild the freelist. BenchmarkFreelistSync measured
// (2026-11-30, this project's VM): a read-write Open of a 100k-event store
// takes 0.9 ms with the freelist synced and 228 ms without, while group
// commit throughput differed by less than the disk's noise. So it stays
// synced. A variable only so that the benchmark can flip it.
var noFreelistSync = false

// Open opens the store at path, creating it unless opts.ReadOnly (see
// eventlog.Options and Options; either may be nil). It waits up to
// LockTimeout for a store held by another Log (in this or another
// process), then fails with ErrLocked. A read-only Open of a missing or
// empty file fails with ErrNotFound and creates nothing. A store of a
// newer format is ErrUnsupported; a file that is not a store, or is
// damaged, is ErrCorrupt. A read-write Open removes the unpublished
// sessions left by an import that crashed, and, unless NoSync, fsyncs the
// directory holding the store (atomicfile.SyncDir). A writable Open given
// neither opts.NewValidator nor opts.Unvalidated is ErrNoValidation;
// sessionlog.Open wires the default validation.
func Open(path string, opts *eventlog.Options, bopts *Options) (*Log, error) {
	var eo eventlog.Options
	if opts != nil {
		eo = *opts
	}
	eo = engine.WithDefaults(eo)
	var o Options
	if bopts != nil {
		o = *bopts
	}
	o = o.withDefaults()
	if eo.ReadOnly {
		fi, err := os.Stat(path)
		switch {
		case os.IsNotExist(err):
			return nil, errors.WithHint(engine.NotFoundf("eventlog: no store at %s", errors.Safe(path)),
				"a read-only open never creates a store: check the path")
		case err != nil:
			return nil, errors.Wrapf(err, "eventlog: open %s", errors.Safe(path))
		case fi.IsDir():
			return nil, engine.NotFoundf("eventlog: no store at %s (it is a directory)", errors.Safe(path))
		case fi.Size() == 0:
			return nil, engine.NotFoundf("eventlog: no store at %s (the file is empty)", errors.Safe(path))
		}
	}
	if err := engine.CheckWritable(&eo); err != nil {
		return nil, err
	}
	var damage *boltfmt.PageDamage
	if !eo.ReadOnly {
		var err error
		if damage, err = checkWritable(path, o, eo); err != nil {
			return nil, err
		}
	}
	db, err := openBolt(path, o, eo, 0)
	if err != nil {
		return nil, err
	}
	l := &Log{db: db, path: path, opts: o, eopts: eo, readOnly: eo.ReadOnly, damage: damage,
		obs: newObserver(eo.Logger, eo.Metrics), tails: newTails()}
	if err := l.checkSize(); err != nil {
		_ = l.db.Close() // no-op when checkSize closed it already
		return nil, err
	}
	if eo.ReadOnly {
		d, err := checkFile(path)
		if err == nil && d.Store != nil {
			err = errors.WithHint(errors.Wrapf(d.Store, "eventlog: open %s", errors.Safe(path)),
				"if it is a damaged store, 'logtool salvage' copies out what still verifies")
		}
		if err != nil {
			_ = l.db.Close()
			return nil, err
		}
		if d.Damaged() {
			l.damage = &d
		}
	}
	if err := l.prepare(); err != nil {
		return nil, errors.CombineErrors(err, l.db.Close())
	}
	if err := l.openWAL(); err != nil {
		if l.wal != nil {
			err = errors.CombineErrors(err, l.wal.Close())
		}
		return nil, errors.CombineErrors(errors.Wrapf(err, "open %s", errors.Safe(path)), l.db.Close())
	}
	if !l.readOnly && !eo.NoSync {
		// bbolt syncs the file it creates, not its name: sync the
		// directory, on every read-write Open, since the process that
		// created the file may have died before it synced the name.
		if err := atomicfile.SyncDir(filepath.Dir(path)); err != nil {
			return nil, errors.CombineErrors(errors.CombineErrors(errors.Wrap(err, "eventlog: open"), l.wal.Close()), l.db.Close())
		}
	}
	if !l.readOnly {
		l.applyKick = make(chan struct{}, 1)
		l.applyStop = make(chan struct{})
		l.applierDone = make(chan struct{})
		go l.applier()
	}
	l.core = engine.New(engine.Config{
		Name: path, Options: eo, Metrics: l.obs.Metrics, MaxBatchBytes: maxBatchBytes, Linger: linger,
		// bbolt reads pages through mmap; a fault on a damaged or
		// truncated file becomes a panic that the committer's guard
		// recovers.
		CommitterStarted: func() { debug.SetPanicOnFault(true) },
	}, backend{l})
	l.obs.Log.Info("eventlog: store opened", "path", path, "readOnly", eo.ReadOnly,
		"validated", eo.NewValidator != nil && !eo.Unvalidated)
	return l, nil
}

// checkFile runs CheckPages on the store file at path.
func checkFile(path string) (boltfmt.PageDamage, error) {
	f, err := os.Open(path)
	if err != nil {
		return boltfmt.PageDamage{}, errors.Wrapf(err, "eventlog: check the pages of %s", errors.Safe(path))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return boltfmt.PageDamage{}, errors.Wrapf(err, "eventlog: check the pages of %s", errors.Safe(path))
	}
	return boltfmt.CheckPages(f, fi.Size(), 0, 0, 0), nil
}

// checkWritable checks the pages of a store about to be opened for
// writing: damage above the sessions is refused (bbolt reads the freelist
// as it opens the file for writing, and rewrites the root on every
// commit); damage inside sessions is returned, and the readers stop
// before it, so that the damaged sessions refuse appends and the others
// go on. The pages are checked before bbolt opens the file, without its
// lock; when they look damaged, perhaps only because another process is
// committing, they are checked again under a read-only open's lock.
func checkWritable(path string, o Options, eo eventlog.Options) (*boltfmt.PageDamage, error) {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() == 0 {
		return nil, nil // a new store, or bbolt's Open says what is wrong
	}
	d, err := checkFile(path)
	if err != nil || !d.Damaged() {
		return nil, err
	}
	ro := eo
	ro.ReadOnly = true
	db, err := openBolt(path, o, ro, 0)
	if err != nil {
		return nil, err
	}
	d, err = checkFile(path)
	if err = errors.CombineErrors(err, db.Close()); err != nil {
		return nil, err
	}
	if d.Store != nil || d.Freelist != nil {
		if err := checkFileSize(path); err != nil {
			return nil, err // the likeliest cause of pages missing at the end
		}
		cause := d.Store
		if cause == nil {
			cause = d.Freelist
		}
		return nil, errors.WithHint(errors.Wrapf(cause, "eventlog: open %s for writing", errors.Safe(path)),
			"a store damaged above its sessions opens read-only only: 'logtool verify' names the damage, 'logtool salvage' copies out what still verifies")
	}
	if !d.Damaged() {
		return nil, nil
	}
	return &d, nil
}

// openBolt opens the bbolt file, classifying failures. mmapSize, when not
// 0, is the minimum size to map.
func openBolt(path string, o Options, eo eventlog.Options, mmapSize int) (*bolt.DB, error) {
	var file *os.File
	bo := &bolt.Options{
		Timeout:         o.LockTimeout,
		ReadOnly:        eo.ReadOnly,
		NoSync:          eo.NoSync,
		NoFreelistSync:  noFreelistSync,
		InitialMmapSize: mmapSize,
		PageSize:        boltfmt.PageSize, // for a new file only: bbolt reads an existing file's
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			f, err := os.OpenFile(name, flag, perm)
			file = f
			return f, err
		},
	}
	var db *bolt.DB
	err := guard(func() error {
		var err error
		db, err = bolt.Open(path, 0o600, bo)
		return err
	})
	if err == nil {
		db.AllocSize = allocSize
		return db, nil
	}
	if file != nil {
		// After a panic inside bolt.Open the file is still open and
		// locked; closing it releases the lock. (Closing a file that
		// bolt.Open closed already is harmless.)
		_ = file.Close()
	}
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, errors.WithHint(
			errclass.Mark(errors.Newf("eventlog: store %s is locked by another process (waited %s)",
				errors.Safe(path), errors.Safe(o.LockTimeout)), eventlog.ErrLocked),
			"another logtool or host holds it; retry when it is done")
	case errors.IsAny(err, berrors.ErrInvalid, berrors.ErrVersionMismatch, berrors.ErrChecksum):
		return nil, errors.WithHint(errclass.Mark(errors.Wrapf(err, "eventlog: %s is not a session store or is damaged",
			errors.Safe(path)), eventlog.ErrCorrupt), "if it is a damaged store, 'logtool salvage' copies out what still verifies")
	case errors.Is(err, eventlog.ErrCorrupt):
		return nil, errors.Wrapf(err, "eventlog: open %s", errors.Safe(path))
	}
	return nil, errors.Wrapf(err, "eventlog: open %s", errors.Safe(path))
}

// prepare checks the store's format and, read-write, initialises a new
// store and removes unpublished sessions.
func (l *Log) prepare() error {
	var init bool
	var format int64
	var stale [][]byte
	err := guard(func() error {
		return l.db.View(func(tx *bolt.Tx) error {
			var err error
			init, format, err = checkFormat(tx)
			if err != nil || init {
				return err
			}
			stale, err = unpublished(tx, l.damage)
			return err
		})
	})
	if err != nil {
		return errors.Wrapf(err, "open %s", errors.Safe(l.path)) // guard's and checkFormat's errors say "eventlog:"
	}
	upgrade := !init && format < boltfmt.FormatVersion
	if l.readOnly || (!init && !upgrade && len(stale) == 0) {
		return nil
	}
	err = guard(func() error {
		return l.db.Update(func(tx *bolt.Tx) error {
			if init {
				return initStore(tx)
			}
			if upgrade {
				if err := putFormat(tx); err != nil {
					return err
				}
			}
			b := tx.Bucket(boltfmt.BucketSessions)
			for _, id := range stale {
				if err := b.DeleteBucket(id); err != nil {
					return errors.Wrapf(err, "eventlog: remove unpublished session %q", errors.Safe(string(id)))
				}
			}
			return nil
		})
	})
	if err == nil && upgrade {
		l.obs.Log.Info("eventlog: store format upgraded", "path", l.path, "from", format, "to", boltfmt.FormatVersion)
	}
	if err == nil && len(stale) > 0 {
		l.obs.Log.Warn("eventlog: removed the unpublished sessions of imports or forks a crash interrupted",
			"path", l.path, "sessions", len(stale))
	}
	return errors.Wrapf(err, "open %s", errors.Safe(l.path)) // the causes say "eventlog:"
}

// checkFormat checks meta/format and returns the store's format. It
// reports init when the file holds no bucket at all (a new store).
func checkFormat(tx *bolt.Tx) (init bool, format int64, err error) {
	meta := tx.Bucket(boltfmt.BucketMeta)
	if meta == nil {
		k, _ := tx.Cursor().First()
		if k == nil {
			return true, 0, nil
		}
		return false, 0, engine.Corruptf("eventlog: the file is a bbolt database but not a session store (no %q bucket)",
			errors.Safe(string(boltfmt.BucketMeta)))
	}
	rec := meta.Get(boltfmt.KeyFormat)
	if rec == nil {
		return false, 0, engine.Corruptf("eventlog: meta/format is missing")
	}
	m, err := boltfmt.DecodeMeta(rec)
	if err != nil {
		return false, 0, errors.Wrap(err, "eventlog: meta/format")
	}
	switch {
	case m.Format > FormatVersion:
		return false, 0, errors.WithHint(engine.Unsupportedf("eventlog: store format %d is newer than this program's %d",
			errors.Safe(m.Format), errors.Safe(FormatVersion)), "use a newer logtool")
	case m.Format < 1:
		return false, 0, engine.Corruptf("eventlog: store format %d is unknown", errors.Safe(m.Format))
	}
	if tx.Bucket(boltfmt.BucketSessions) == nil {
		return false, 0, engine.Corruptf("eventlog: the %q bucket is missing", errors.Safe(string(boltfmt.BucketSessions)))
	}
	return false, m.Format, nil
}

// putFormat writes meta/format: this program's FormatVersion.
func putFormat(tx *bolt.Tx) error {
	rec, err := boltfmt.EncodeEngineRecord(&boltfmt.MetaRecord{Format: FormatVersion})
	if err != nil {
		return err
	}
	return errors.Wrap(tx.Bucket(boltfmt.BucketMeta).Put(boltfmt.KeyFormat, rec), "eventlog: write meta/format")
}

// initStore writes the buckets and meta/format of a new store.
func initStore(tx *bolt.Tx) error {
	if _, err := tx.CreateBucket(boltfmt.BucketMeta); err != nil {
		return errors.Wrap(err, "eventlog: create meta bucket")
	}
	if err := putFormat(tx); err != nil {
		return err
	}
	if _, err := tx.CreateBucket(boltfmt.BucketSessions); err != nil {
		return errors.Wrap(err, "eventlog: create sessions bucket")
	}
	return nil
}

// unpublished lists the session buckets an Import or Fork left staged: no
// head, and the staging mark. A bucket with neither is damaged, not
// unpublished, and is left for verify and salvage.
func unpublished(tx *bolt.Tx, damage *boltfmt.PageDamage) ([][]byte, error) {
	var ids [][]byte
	ss := tx.Bucket(boltfmt.BucketSessions)
	c := ss.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil || damage.Err(string(k), -1) != nil {
			continue // not a bucket, or a damaged one: reported by the readers
		}
		if b := ss.Bucket(k); b.Get(boltfmt.KeyHead) == nil && b.Get(boltfmt.KeyStaging) != nil {
			ids = append(ids, append([]byte(nil), k...))
		}
	}
	return ids, nil
}

// close is the driver's Close, after the engine has answered every
// write: it applies what is left, removes the log and closes the file.
func (l *Log) close() error {
	err := l.closeWAL()
	if err == nil {
		err = l.trim()
	}
	return errors.CombineErrors(err, errors.Wrapf(l.db.Close(), "eventlog: close %s", errors.Safe(l.path)))
}

// Path is the store's file.
func (l *Log) Path() string { return l.path }

// guard runs fn, which uses bbolt, so that damage on disk cannot crash the
// process: bbolt panics on some malformed pages, and a page that lies past
// the end of a truncated file faults when read through the mmap. Both
// become an ErrCorrupt error (the panic text is kept, unredacted: it
// holds page ids, never content).
func guard(fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			err = engine.Corruptf("eventlog: the store file is damaged: %s", errors.Safe(fmt.Sprint(r)))
		}
	}()
	return fn()
}

// view runs fn in a read transaction under guard.
func (l *Log) view(fn func(tx *bolt.Tx) error) error {
	return guard(func() error { return l.db.View(fn) })
}

// update runs fn in a write transaction under guard (outside the group
// commit: used by Import and Fork staging).
func (l *Log) update(fn func(tx *bolt.Tx) error) error {
	sync, err := l.writeTx(fn)
	if err == nil {
		l.obs.synced(sync)
	}
	return err
}

// writeTx runs fn in a write transaction under guard and returns, when
// metrics are on, the time the transaction spent writing and syncing the
// file (else 0).
func (l *Log) writeTx(fn func(tx *bolt.Tx) error) (time.Duration, error) {
	if !l.obs.On {
		return 0, guard(func() error { return l.db.Update(fn) })
	}
	// The committer and staging are the only writers and bbolt runs one
	// write transaction at a time, so the difference of the cumulative
	// write time is this transaction's.
	var before time.Duration
	err := guard(func() error {
		return l.db.Update(func(tx *bolt.Tx) error {
			st := l.db.Stats()
			before = st.TxStats.GetWriteTime()
			return fn(tx)
		})
	})
	st := l.db.Stats()
	return st.TxStats.GetWriteTime() - before, err
}

// sessionBucket returns the bucket of a session, published or not; nil
// when there is none.
func sessionBucket(tx *bolt.Tx, id string) *bolt.Bucket {
	ss := tx.Bucket(boltfmt.BucketSessions)
	if ss == nil {
		return nil // an empty store opened read-only
	}
	return ss.Bucket([]byte(id))
}

// published returns the bucket of a published session, and its stored head
// and header records (aliasing the transaction). A missing or unpublished
// session is ErrNotFound.
func published(tx *bolt.Tx, id string) (b *bolt.Bucket, headRec, headerRec []byte, err error) {
	b = sessionBucket(tx, id)
	if b == nil {
		if ss := tx.Bucket(boltfmt.BucketSessions); ss != nil && ss.Get([]byte(id)) != nil {
			return nil, nil, nil, engine.Corruptf("eventlog: sessions/%q is a value, not a session bucket", errors.Safe(id))
		}
		return nil, nil, nil, engine.NotFound(id)
	}
	headRec = b.Get(boltfmt.KeyHead)
	if headRec == nil {
		if b.Get(boltfmt.KeyStaging) != nil {
			return nil, nil, nil, engine.NotFound(id) // an import in progress
		}
		return nil, nil, nil, engine.Corruptf("eventlog: session %q has no head record", errors.Safe(id))
	}
	headerRec = b.Get(boltfmt.KeyHeader)
	if headerRec == nil {
		return nil, nil, nil, engine.Corruptf("eventlog: session %q has no header record", errors.Safe(id))
	}
	m := boltfmt.BoundsOf(tx)
	if err := m.Check(headRec, fmt.Sprintf("session %q: head record", id)); err != nil {
		return nil, nil, nil, err
	}
	if err := m.Check(headerRec, fmt.Sprintf("session %q: header record", id)); err != nil {
		return nil, nil, nil, err
	}
	return b, headRec, headerRec, nil
}

// eventsBucket returns the events bucket of a session bucket.
func eventsBucket(b *bolt.Bucket, id string) (*bolt.Bucket, error) {
	eb := b.Bucket(boltfmt.BucketEvents)
	if eb == nil {
		return nil, engine.Corruptf("eventlog: session %q has no events bucket", errors.Safe(id))
	}
	return eb, nil
}

// decodeStored decodes a session's head and header records (copies, not
// aliasing the transaction).
func decodeStored(id string, headRec, headerRec []byte) (eventlog.Head, error) {
	hr, err := boltfmt.DecodeHead(headRec)
	if err != nil {
		return eventlog.Head{}, errors.Wrapf(err, "eventlog: session %q: head record", errors.Safe(id))
	}
	payload, err := codec.DecodeRecord(headerRec)
	if err != nil {
		return eventlog.Head{}, errors.Wrapf(err, "eventlog: session %q: header record", errors.Safe(id))
	}
	hdr, err := codec.DecodeSessionHeader(payload)
	if err != nil {
		return eventlog.Head{}, errors.Wrapf(engine.AsCorrupt(err), "eventlog: session %q: header record", errors.Safe(id))
	}
	if hdr.ID != id {
		return eventlog.Head{}, engine.Corruptf("eventlog: session %q: header record names session %q", errors.Safe(id), errors.Safe(hdr.ID))
	}
	return boltfmt.ToHead(hr, hdr), nil
}

// head returns a published session's head and its stored head record;
// ErrNotFound if the session does not exist or is not published.
func (l *Log) head(session string) (eventlog.Head, []byte, error) {
	headRec, headerRec, err := l.publishedRecords(session)
	if err != nil {
		return eventlog.Head{}, nil, codec.At(err, session, -1)
	}
	h, err := decodeStored(session, headRec, headerRec)
	return h, headRec, err
}

// publishedRecords copies a published session's head and header records
// out of a read transaction; a session the damage register names fails
// without a read.
func (l *Log) publishedRecords(session string) (headRec, headerRec []byte, err error) {
	if err := l.damage.Err(session, -1); err != nil {
		return nil, nil, err
	}
	// The tail first, then the tree (see tail.go).
	v := l.tails.view(session)
	if v.ok && v.headerRec != nil {
		return v.headRec, v.headerRec, nil
	}
	err = l.view(func(tx *bolt.Tx) error {
		_, h, hd, err := published(tx, session)
		headRec, headerRec = clone(h), clone(hd)
		return err
	})
	if v.ok && err == nil {
		headRec = v.headRec
	}
	return headRec, headerRec, err
}

// SessionIDs returns the ids of all sessions but those an import is still
// staging, ordered by id, without decoding their records: for verify and
// salvage, which must list sessions whose records are damaged, including a
// session whose head record is gone (Head then reports it as corrupt).
func (l *Log) SessionIDs(ctx context.Context) ([]string, error) {
	done, err := l.begin()
	if err != nil {
		return nil, err
	}
	defer done()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var ids []string
	created := l.tails.created()
	err = l.view(func(tx *bolt.Tx) error {
		ss := tx.Bucket(boltfmt.BucketSessions)
		if ss == nil {
			return nil
		}
		c := ss.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			// Published sessions, and damaged ones (no head and no staging
			// mark, or a value where a session bucket belongs), which
			// readers then report as corrupt.
			if v != nil || l.damage.Err(string(k), -1) != nil || ss.Bucket(k).Get(boltfmt.KeyStaging) == nil {
				ids = append(ids, string(k))
			}
		}
		return nil
	})
	return mergeIDs(ids, created), errors.Wrap(err, "eventlog: list sessions")
}

// HeaderRecord returns a copy of the stored header record of a published
// session: the framed record, codec.EncodeRecord(header.Raw), as the chain
// hash starts from it (ChainStart). It is not decoded.
func (l *Log) HeaderRecord(ctx context.Context, session string) ([]byte, error) {
	done, err := l.begin()
	if err != nil {
		return nil, err
	}
	defer done()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	_, rec, err := l.publishedRecords(session)
	return clone(rec), errors.Wrapf(err, "eventlog: header of session %q", errors.Safe(session))
}

// clone copies b out of a transaction (bbolt values alias the mmap).
func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// begin registers a method of the Log's own in flight (engine.Begin):
// ErrClosed after Close. The caller defers done.
func (l *Log) begin() (done func(), err error) { return engine.Begin(l.core) }

// beginWrite is begin for a write method: ErrReadOnly on a read-only Log.
func (l *Log) beginWrite() (done func(), err error) { return engine.BeginWrite(l.core) }
