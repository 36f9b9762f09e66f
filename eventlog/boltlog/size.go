package boltlog

import (
	"os"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
	"github.com/sessionlog/sessionlog/internal/boltfmt"
)

// The store file's size and pages: how bbolt grows it, what a new one
// is created with, how a truncated one is told, and the trim at Close.

// allocSize is how far ahead of its high-water mark bbolt grows the file
// (bolt.DB.AllocSize; bbolt's default is 16 MiB, and below that it grows
// the file to its whole memory map, the next power of two). Measured
// (2026-12-01): the 100,000-event generated session needs 8.9 MB of pages
// (0.52× its JSONL) but its file was 16.8 MB (0.98×) with the default, and
// is at most 1 MiB more than its pages with this. Each growth costs an
// ftruncate and an fsync, once per MiB written.
const allocSize = 1 << 20

// truncated is the error of a store file of size bytes whose last
// transaction needs need.
func truncated(path string, size, need int64) error {
	return errors.WithHint(engine.Corruptf("eventlog: store %s is truncated: %d bytes, its last transaction needs %d",
		errors.Safe(path), errors.Safe(size), errors.Safe(need)),
		"open it read-only ('logtool verify', 'logtool salvage') to see and copy out what remains")
}

// checkFileSize compares the file's size with the size its newest meta
// page says its last transaction needs, before bbolt opens it: a store
// closed by this code is exactly that long (Log.trim), so a cut takes
// pages bbolt reads first (the freelist).
func checkFileSize(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return errors.Wrapf(err, "eventlog: open %s", errors.Safe(path))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return errors.Wrapf(err, "eventlog: open %s", errors.Safe(path))
	}
	need, ok := boltfmt.Needs(f)
	if !ok {
		return nil // the page check reports it
	}
	if need > fi.Size() {
		return truncated(path, fi.Size(), need)
	}
	return nil
}

// checkSize compares the file's size with the size its last transaction
// needs. A shorter file was truncated: a read-write Open refuses it; a
// read-only one maps the whole needed size, so that reading a missing page
// faults (and is reported as corruption) instead of reading past the map.
func (l *Log) checkSize() error {
	var need int64
	if err := guard(func() error {
		return l.db.View(func(tx *bolt.Tx) error { need = tx.Size(); return nil })
	}); err != nil {
		return errors.Wrapf(err, "open %s", errors.Safe(l.path)) // guard's errors say "eventlog:"
	}
	fi, err := os.Stat(l.path)
	if err != nil {
		return errors.Wrapf(err, "eventlog: open %s", errors.Safe(l.path))
	}
	if fi.Size() >= need {
		return nil
	}
	err = truncated(l.path, fi.Size(), need)
	if !l.readOnly {
		return err
	}
	if need > 1<<40 {
		return err
	}
	if cerr := l.db.Close(); cerr != nil {
		return errors.CombineErrors(err, cerr)
	}
	// Closed; Open's error path closes it again, which bbolt allows.
	db, oerr := openBolt(l.path, l.opts, l.eopts, int(need))
	if oerr != nil {
		return oerr
	}
	l.db = db
	return nil
}

// trim truncates the file of a read-write Log, at Close, to the pages its
// last transaction needs: bbolt grows the file up to allocSize ahead of
// them, and a closed store is then its pages only. The bytes cut are no
// page of the tree (bbolt allocates past its high-water mark only by
// growing it), and nothing reads or writes the file after the last
// transaction; bbolt's lock is still held, so no other process has it
// open. A crash before the new size is durable leaves the old size,
// which is as sound. A damaged store is left as it is.
func (l *Log) trim() error {
	if l.readOnly || (l.damage != nil && l.damage.Damaged()) {
		return nil
	}
	var need int64
	if err := l.view(func(tx *bolt.Tx) error { need = tx.Size(); return nil }); err != nil {
		return err
	}
	fi, err := os.Stat(l.path)
	if err != nil || fi.Size() <= need {
		return errors.Wrapf(err, "eventlog: trim %s", errors.Safe(l.path))
	}
	return errors.Wrapf(os.Truncate(l.path, need), "eventlog: trim %s", errors.Safe(l.path))
}
