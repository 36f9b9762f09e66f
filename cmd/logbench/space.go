package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/corpus"
)

// spaceResult is the bytes on disk per event of one store.
type spaceResult struct {
	data   string
	events int64
	// Per event: the JSONL line with its newline; the stored record
	// (payload and frame); the bbolt pages the store needs (its
	// high-water mark: pages in use or free); the file (which bbolt grows
	// ahead in preallocated steps).
	jsonl, record, inUse, file float64
}

// measureSpace reports the generated sessions' stores, closing them, and
// the durable modes' stores as they were after their last round.
func measureSpace(ctx context.Context, sessions []*benchSession, durable []durableResult) ([]spaceResult, error) {
	var out []spaceResult
	for _, s := range sessions {
		head, err := s.st.Head(ctx, s.header.ID)
		if err != nil {
			return nil, err
		}
		s.close()
		hwm, err := highWater(s.path)
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(s.path)
		if err != nil {
			return nil, errors.Wrap(err, "store size")
		}
		n := float64(s.events)
		out = append(out, spaceResult{
			data:   "generated session, " + group(s.events) + " events",
			events: s.events,
			jsonl:  float64(s.jsonl) / n,
			record: float64(head.StoredBytes) / n,
			inUse:  float64(hwm) / n,
			file:   float64(fi.Size()) / n,
		})
	}
	for _, d := range durable {
		n := float64(d.events)
		out = append(out, spaceResult{
			data:   "1 KB assistant/message, " + d.mode.name,
			events: d.events,
			jsonl:  float64(d.lineBytes) / float64(d.lines),
			record: float64(d.records) / n,
			inUse:  float64(d.highWater) / n,
			file:   float64(d.fileSize) / n,
		})
	}
	return out, nil
}

// highWater opens the closed store at path read-only with bbolt and
// returns the size its last transaction needs: pages in use or free,
// without the preallocated tail of the file.
func highWater(path string) (int64, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return 0, errors.Wrapf(err, "bbolt open %s", errors.Safe(path))
	}
	var n int64
	err = db.View(func(tx *bolt.Tx) error { n = tx.Size(); return nil })
	return n, errors.CombineErrors(err, db.Close())
}

// measureCorpusSpace imports every session file of the DSH corpus that
// DSH accepts (no error.expected.txt beside it, a header with a version)
// into one store, closes it, and compares the file with the JSONL files
// imported. Sessions that share an id (cases recorded from one session)
// get "#n" appended to it in their header line. It returns nil when the
// corpus is absent.
func measureCorpusSpace(ctx context.Context, work string, p progress) (*spaceResult, error) {
	files, ok, err := corpus.SessionFiles()
	if err != nil {
		return nil, errors.Wrap(err, "DSH corpus")
	}
	if !ok {
		p.printf("  the DSH corpus (../shared) is absent: its store is not measured")
		return nil, nil
	}
	path := filepath.Join(work, "corpus.db")
	st, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: validator}, nil)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var jsonl, stored, events int64
	sessions := 0
	seen := map[string]int{}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(filepath.Dir(f), "error.expected.txt")); err == nil {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, errors.Wrap(err, "DSH corpus")
		}
		h, err := codec.NewScanner(bytes.NewReader(data), codec.Limits{}).Header()
		if errors.Is(err, codec.ErrUnsupported) {
			continue // a header without a version: DSH refuses it too
		}
		if err != nil {
			return nil, errors.Wrapf(err, "%s", errors.Safe(f))
		}
		size := int64(len(data))
		if seen[h.ID]++; seen[h.ID] > 1 {
			line, rest, _ := bytes.Cut(data, []byte("\n"))
			id := codec.AppendJSONString(nil, []byte(h.ID))
			newID := codec.AppendJSONString(nil, []byte(fmt.Sprintf("%s#%d", h.ID, seen[h.ID])))
			line = bytes.Replace(line, append([]byte(`"id":`), id...), append([]byte(`"id":`), newID...), 1)
			data = append(append(line, '\n'), rest...)
		}
		sc := codec.NewScanner(bytes.NewReader(data), codec.Limits{})
		if h, err = sc.Header(); err != nil {
			return nil, errors.Wrapf(err, "%s", errors.Safe(f))
		}
		n, err := st.Import(ctx, h, sc)
		if err != nil {
			return nil, errors.Wrapf(err, "import %s", errors.Safe(f))
		}
		head, err := st.Head(ctx, h.ID)
		if err != nil {
			return nil, err
		}
		sessions++
		events += n
		stored += head.StoredBytes
		jsonl += size
	}
	if err := st.Close(); err != nil {
		return nil, err
	}
	hwm, err := highWater(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, errors.Wrap(err, "store size")
	}
	p.printf("  imported %d DSH corpus sessions, %s events, into one store", sessions, group(events))
	n := float64(events)
	return &spaceResult{
		data:   fmt.Sprintf("DSH corpus, %d sessions in one store", sessions),
		events: events,
		jsonl:  float64(jsonl) / n,
		record: float64(stored) / n,
		inUse:  float64(hwm) / n,
		file:   float64(fi.Size()) / n,
	}, nil
}
