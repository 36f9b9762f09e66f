package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
)

// walOpenResult is the time to open a store whose write-ahead log holds
// walTarget bytes not yet applied, as a crash leaves it.
type walOpenResult struct {
	walBytes int64 // bytes of the log's segments
	events   int64 // events in the log
	sessions int
	open     stat // seconds: Open, which replays and applies the log
	clean    stat // seconds: Open of the same store once applied
}

// walTarget is the size of the unapplied log of the measurement (issue 12).
const walTarget = 64 << 20

// measureWALOpen writes walTarget bytes of appends to a store whose
// applier never runs, copies its file and log directory while it is open
// (what a crash at that moment leaves: the log is written, the tree not
// yet), and times Opens of fresh copies of that crash image.
func measureWALOpen(ctx context.Context, c config, work string, pool []codec.Event, p progress) (walOpenResult, error) {
	target := int64(walTarget)
	if c.quick {
		target = 4 << 20
	}
	var res walOpenResult
	dir := filepath.Join(work, "walopen")
	src := filepath.Join(dir, "live.db")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, errors.Wrap(err, "wal open")
	}
	defer os.RemoveAll(dir)
	opts := &eventlog.Options{NewValidator: validator, NoSync: true}
	st, err := boltlog.Open(src, opts, &boltlog.Options{WAL: boltlog.WALOptions{
		ApplyInterval: 24 * time.Hour, ApplyBytes: 1 << 40, MaxUnapplied: 4 * target}})
	if err != nil {
		return res, err
	}
	d := &durableRun{ctx: ctx, st: st, mode: durableMode{sessions: 64, perCommit: 1}, pool: pool}
	if err := d.startRound(); err != nil {
		return res, errors.CombineErrors(err, st.Close())
	}
	res.sessions = len(d.ids)
	for res.walBytes < target {
		for i, id := range d.ids {
			if d.seqs[i] >= len(pool) {
				continue
			}
			if err := st.Append(ctx, id, pool[d.seqs[i]:d.seqs[i]+1]); err != nil {
				return res, errors.CombineErrors(err, st.Close())
			}
			d.seqs[i]++
			res.events++
		}
		if res.walBytes, err = dirSize(boltlog.WALDir(src)); err != nil {
			return res, errors.CombineErrors(err, st.Close())
		}
	}
	image := filepath.Join(dir, "image")
	if err := copyStore(src, image); err != nil {
		return res, errors.CombineErrors(err, st.Close())
	}
	if err := st.Close(); err != nil {
		return res, err
	}
	var opens, cleans []float64
	for r := range c.rounds {
		path := filepath.Join(dir, fmt.Sprintf("round-%d", r), "sessions.db")
		if err := copyStore(image, path); err != nil {
			return res, err
		}
		for _, applied := range []bool{false, true} {
			t0 := time.Now()
			st, err := boltlog.Open(path, &eventlog.Options{NewValidator: validator}, nil)
			if err != nil {
				return res, err
			}
			took := time.Since(t0).Seconds()
			if err := st.Close(); err != nil {
				return res, err
			}
			if applied {
				cleans = append(cleans, took)
			} else {
				opens = append(opens, took)
			}
		}
		p.printf("  open with a %s MiB write-ahead log, round %d/%d: %s (once applied: %s)", mib(float64(res.walBytes)), r+1, c.rounds,
			dur(time.Duration(opens[r]*float64(time.Second))), dur(time.Duration(cleans[r]*float64(time.Second))))
		if err := os.RemoveAll(filepath.Dir(path)); err != nil {
			return res, errors.Wrap(err, "wal open")
		}
	}
	res.open, res.clean = summarize(opens), summarize(cleans)
	return res, nil
}

// dirSize is the total size of the files in dir.
func dirSize(dir string) (int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, errors.Wrap(err, "wal size")
	}
	var n int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			return 0, errors.Wrap(err, "wal size")
		}
		n += fi.Size()
	}
	return n, nil
}

// copyStore copies a store's file and its write-ahead log directory to
// path (creating path's directory), with the permissions the store gives
// them (file and segments 0600, log directory 0700): the open measured
// has none to tighten.
func copyStore(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return errors.Wrap(err, "copy store")
	}
	if err := copyFile(from, to); err != nil {
		return err
	}
	ents, err := os.ReadDir(boltlog.WALDir(from))
	if err != nil {
		return errors.Wrap(err, "copy store")
	}
	if err := os.MkdirAll(boltlog.WALDir(to), 0o700); err != nil {
		return errors.Wrap(err, "copy store")
	}
	for _, e := range ents {
		if err := copyFile(filepath.Join(boltlog.WALDir(from), e.Name()), filepath.Join(boltlog.WALDir(to), e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return errors.Wrap(err, "copy store")
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return errors.Wrap(err, "copy store")
	}
	if _, err := io.Copy(out, in); err != nil {
		return errors.CombineErrors(errors.Wrap(err, "copy store"), out.Close())
	}
	return errors.Wrap(out.Close(), "copy store")
}
