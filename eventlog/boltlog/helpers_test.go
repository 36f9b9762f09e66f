package boltlog_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/eventlogtest"
	"github.com/sessionlog/sessionlog/rebuild"
)

// openLog opens a new store in t.TempDir() and registers its Close and an
// integrity audit of the file (bbolt's own check, then every record and
// chain hash) with t.Cleanup. Without a validator in opts, it validates
// with the rebuild fold, as sessionlog.Open does.
func openLog(t testing.TB, opts *eventlog.Options) (*boltlog.Log, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sessions.db")
	var o eventlog.Options
	if opts != nil {
		o = *opts
	}
	if o.NewValidator == nil && !o.Unvalidated {
		o.NewValidator = rebuild.NewValidator
	}
	l, err := boltlog.Open(path, &o, nil)
	if err != nil {
		t.Fatalf("Open(%s) = %v", path, err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		audit(t, path)
	})
	return l, path
}

// testOptions are the options of the suite's stores.
func testOptions() *eventlog.Options {
	return &eventlog.Options{NewValidator: eventlogtest.NewValidator}
}

// audit checks a closed store: bbolt's consistency check, then for every
// session every record (frame, decode, seq = key, no gap, none past the
// head) and the chain hash, stored bytes and turn count of its head.
func audit(t testing.TB, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Errorf("audit: bolt.Open = %v", err)
		return
	}
	err = db.View(func(tx *bolt.Tx) error {
		var first error
		for err := range tx.Check() {
			if first == nil {
				first = err
			}
		}
		return first
	})
	if cerr := db.Close(); cerr != nil {
		t.Errorf("audit: bolt Close = %v", cerr)
	}
	if err != nil {
		t.Errorf("audit: bbolt check: %v", err)
		return
	}
	l, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Errorf("audit: Open = %v", err)
		return
	}
	defer l.Close()
	if err := verifyAll(l); err != nil {
		t.Errorf("audit: %v", err)
	}
}

// verifyAll recomputes every published session from its records.
func verifyAll(l *boltlog.Log) error {
	ctx := context.Background()
	ids, err := l.SessionIDs(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := verifySession(l, id); err != nil {
			return err
		}
	}
	return nil
}

func verifySession(l *boltlog.Log, id string) error {
	ctx := context.Background()
	head, err := l.Head(ctx, id)
	if err != nil {
		return err
	}
	hrec, err := l.HeaderRecord(ctx, id)
	if err != nil {
		return err
	}
	if !bytes.Equal(hrec, codec.EncodeRecord(nil, head.Header.Raw)) {
		return errors.Newf("session %s: header record is not the frame of the header", id)
	}
	c := eventlog.ChainStart(hrec)
	var next, stored, turns int64
	err = l.Records(ctx, id, 0, func(seq int64, rec []byte) error {
		if seq != next {
			return errors.Newf("session %s: record seq %d, want %d", id, seq, next)
		}
		p, err := codec.DecodeRecord(rec)
		if err != nil {
			return errors.Wrapf(err, "session %s seq %d", id, seq)
		}
		ev, err := codec.DecodeEvent(p)
		if err != nil {
			return errors.Wrapf(err, "session %s seq %d", id, seq)
		}
		if ev.Seq != seq {
			return errors.Newf("session %s: key %d holds seq %d", id, seq, ev.Seq)
		}
		if ev.Type == codec.TypeTurnStart {
			turns++
		}
		c = eventlog.ChainNext(c, p)
		stored += int64(len(codec.EncodeEventRecord(nil, p))) // as the log writes it
		next++
		return nil
	})
	if err != nil {
		return err
	}
	if next != head.Next || stored != head.StoredBytes || turns != head.Turns || c != head.Chain {
		return errors.Newf("session %s: head {next %d, stored %d, turns %d, chain %x} but records give {%d, %d, %d, %x}",
			id, head.Next, head.StoredBytes, head.Turns, head.Chain, next, stored, turns, c)
	}
	return nil
}

// parse builds an event from a JSON line.
func parse(t testing.TB, line string) codec.Event {
	t.Helper()
	ev, err := codec.ParseEvent([]byte(line), codec.Limits{})
	if err != nil {
		t.Fatalf("ParseEvent(%s) = %v", line, err)
	}
	return ev
}

// header is a test session header.
func header(id string) codec.SessionHeader {
	return codec.NewSessionHeader(id, 1767225600000, "/home/dev/project", "", 0)
}

// noteEvent is an event carrying a unique marker string.
func noteEvent(t testing.TB, seq int64, marker string) codec.Event {
	t.Helper()
	return parse(t, fmt.Sprintf(`{"type":"x/note","seq":%d,"time":%d,"data":{"marker":%q}}`, seq, 1767225600000+seq, marker))
}

// turnEvents returns turn n (turn/start, user/message, turn/end) from seq.
func turnEvents(t testing.TB, seq, n int64) []codec.Event {
	t.Helper()
	return []codec.Event{
		parse(t, fmt.Sprintf(`{"type":"turn/start","seq":%d,"time":%d,"data":{"turn":%d}}`, seq, 1767225600000+seq, n)),
		parse(t, fmt.Sprintf(`{"type":"user/message","seq":%d,"time":%d,"data":{"content":[{"type":"text","text":"hello %d"}],"source":{"kind":"user"}},"surfaceOp":"append"}`, seq+1, 1767225600000+seq+1, n)),
		parse(t, fmt.Sprintf(`{"type":"turn/end","seq":%d,"time":%d,"data":{"turn":%d,"reason":{"kind":"completed"}}}`, seq+2, 1767225600000+seq+2, n)),
	}
}
