package verify_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/wal"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/verify"
)

// crashedStore returns the path of a copy of a store whose write-ahead
// log holds the demo session, unapplied, as a crash leaves it (the copy
// is taken while the store is open and never applies).
func crashedStore(t *testing.T) string {
	t.Helper()
	work := filepath.Join(t.TempDir(), "s.db")
	l, err := boltlog.Open(work, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, &boltlog.Options{WAL: boltlog.WALOptions{ApplyInterval: time.Hour, ApplyBytes: 1 << 40}})

	if err != nil {
		t.Fatal(err)
	}
	runScenario(t, l, demo, "root")
	path := filepath.Join(t.TempDir(), "s.db")
	copyFile(t, work, path)
	if err := os.Mkdir(boltlog.WALDir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	segs, err := wal.Segments(boltlog.WALDir(work))
	if err != nil || len(segs) == 0 {
		t.Fatalf("the live store's log has %d segments (%v)", len(segs), err)
	}
	for _, s := range segs {
		copyFile(t, s, filepath.Join(boltlog.WALDir(path), filepath.Base(s)))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestCheckWAL: CheckWAL says how many records a crashed store's log
// holds past the tree, and warns of a dropped torn tail by segment and
// offset, without user content; a closed store has no log.
func TestCheckWAL(t *testing.T) {
	path := crashedStore(t)
	check := func() (verify.WAL, []verify.Finding) {
		l, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return verify.CheckWAL(l)
	}
	w, findings := check()
	if w.Segments == 0 || w.Records == 0 || w.Replay != w.Records || w.TornBytes != 0 || len(findings) != 0 {
		t.Fatalf("a crashed store's log: %+v, %v; want records to replay and no finding", w, findings)
	}

	// A write torn by the crash: bytes after the last record.
	segs, err := wal.Segments(boltlog.WALDir(path))
	if err != nil {
		t.Fatal(err)
	}
	last := segs[len(segs)-1]
	b, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	copy(b[len(b)-7:], "torn!!!")
	if err := os.WriteFile(last, b, 0o644); err != nil {
		t.Fatal(err)
	}
	torn, findings := check()
	if torn.TornBytes == 0 || torn.Replay != w.Replay || len(findings) != 1 {
		t.Fatalf("a torn tail: %+v, %v; want it reported, the records kept", torn, findings)
	}
	f := findings[0]
	msg := f.String()
	if f.Kind != verify.Torn || !f.Warning || f.Session != "" || f.Seq != -1 ||
		!strings.Contains(msg, filepath.Base(last)+"@") || !strings.HasPrefix(msg, "store: warning torn: write-ahead log") {
		t.Fatalf("the torn tail's finding: %+v (%s)", f, msg)
	}
	if strings.Contains(msg, "torn!!!") || strings.Contains(msg, "read it") {
		t.Fatalf("the finding quotes the log's bytes: %s", msg)
	}

	// Applied and closed: no log.
	l, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if w, findings := check(); w != (verify.WAL{}) || len(findings) != 0 {
		t.Fatalf("a closed store: %+v, %v; want no log", w, findings)
	}
}
