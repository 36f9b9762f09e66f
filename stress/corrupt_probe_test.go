package stress_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/salvage"
	"github.com/sessionlog/sessionlog/verify"
)

// The probe side of the corruption sweep: TestCorruptWorker is this test
// binary re-executed by TestCorrupt. It reads probes on stdin, one a line
// ("probe N OFFSET MASK" or "salvage N OFFSET MASK"), applies each to a
// fresh copy of the original store, and answers with one line
// "corrupt-result {json}" on stdout. bbolt may crash or hang the process
// on a damaged page; the parent then counts the probe as refused-crash and
// starts a new worker.

// Environment of a worker.
const (
	envCorruptStore = "SESSIONLOG_CORRUPT_STORE" // the original store
	envCorruptDir   = "SESSIONLOG_CORRUPT_DIR"   // where to write damaged copies
	// envCorruptSabotage makes a worker fail on purpose, for
	// TestCorruptSabotage: "die" exits at once, "fatal" dies of a stack
	// overflow (a Go runtime fatal error) on its first probe, "hang"
	// sleeps in its first probe.
	envCorruptSabotage = "SESSIONLOG_CORRUPT_SABOTAGE"
)

// recurse never returns: a stack overflow, for the "fatal" sabotage.
func recurse(n int) int {
	var pad [256]byte
	pad[n%256] = byte(n)
	return recurse(n+1) + int(pad[0])
}

// resultPrefix starts every answer line of a worker.
const resultPrefix = "corrupt-result "

// Classes of a probe's outcome.
const (
	classOK           = "ok-identical" // verifies, and everything reads as before
	classDetected     = "detected"     // verify reports a classified finding
	classRefused      = "refused"      // Open or the session list fails with a classified error
	classRefusedCrash = "refused-crash"
	classSilent       = "SILENT"  // verify clean, yet something reads differently
	classMissed       = "MISSED"  // verify clean, yet a read or rebuild fails
	classOpenFailed   = "no-open" // salvage probe: the store does not open
)

// probeResult is a worker's answer.
type probeResult struct {
	N     int    `json:"n"`
	Class string `json:"class"`
	// Err is the refusal, or the first error seen.
	Err string `json:"err,omitempty"`
	// Unclassified lists errors that carry no class (docs/rules.md#error-classes wants one).
	Unclassified []string `json:"unclassified,omitempty"`
	// Findings are verify's findings that are not warnings (at most 64).
	Findings []findingKey `json:"findings,omitempty"`
	// Diff says what reads differently, for SILENT and MISSED.
	Diff    string         `json:"diff,omitempty"`
	Salvage *salvageResult `json:"salvage,omitempty"`
}

type findingKey struct {
	Session string `json:"s"`
	Seq     int64  `json:"q"`
	Kind    string `json:"k"`
}

// salvageResult is what a salvage probe found.
type salvageResult struct {
	Changed  bool              `json:"changed,omitempty"` // the damaged file changed: never allowed
	Sessions []salvageSession  `json:"sessions"`
	List     string            `json:"list,omitempty"`
	Problems []string          `json:"problems,omitempty"` // the copy does not verify, or differs
	Lines    []string          `json:"lines"`
	Warnings []string          `json:"warnings,omitempty"`
	Copied   map[string]int64  `json:"copied"`
	Causes   map[string]string `json:"causes"`
}

type salvageSession struct {
	ID     string `json:"id"`
	Copied int64  `json:"copied"`
	Cause  string `json:"cause"`
	Lost   bool   `json:"lost"`
}

// stepDigest is one rebuilt step.
type stepDigest struct {
	Start  int64
	Null   bool
	Digest [32]byte
}

// sessionState is what a session reads as.
type sessionState struct {
	Next   int64
	Chain  [32]byte
	Steps  []stepDigest
	Events [][32]byte // SHA-256 of each event payload
}

// storeState is what a store reads as.
type storeState struct {
	IDs      []string
	Sessions map[string]*sessionState
}

// readState reads every session of l: its head, each event, and every
// step rebuilt.
func readState(ctx context.Context, l *boltlog.Log) (*storeState, error) {
	ids, err := l.SessionIDs(ctx)
	if err != nil {
		return nil, err
	}
	st := &storeState{IDs: ids, Sessions: map[string]*sessionState{}}
	for _, id := range ids {
		ss, err := readSession(ctx, l, id)
		if err != nil {
			return st, err
		}
		st.Sessions[id] = ss
	}
	return st, nil
}

func readSession(ctx context.Context, l *boltlog.Log, id string) (*sessionState, error) {
	head, err := l.Head(ctx, id)
	if err != nil {
		return nil, err
	}
	ss := &sessionState{Next: head.Next, Chain: head.Chain}
	b := rebuild.NewBuilder(head.Header, rebuild.BuilderOptions{}, func(s rebuild.Step) error {
		ss.Steps = append(ss.Steps, stepDigest{Start: s.Start, Null: s.Null, Digest: s.Digest})
		return nil
	})
	it, err := l.Scan(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for {
		ev, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		ss.Events = append(ss.Events, sha256.Sum256(ev.Raw))
		if err := b.Add(&ev); err != nil {
			return nil, err
		}
	}
	return ss, b.End()
}

// diffState says how got differs from want, "" when it does not.
func diffState(want, got *storeState) string {
	if strings.Join(want.IDs, ",") != strings.Join(got.IDs, ",") {
		return fmt.Sprintf("sessions %v, want %v", got.IDs, want.IDs)
	}
	for _, id := range want.IDs {
		w, g := want.Sessions[id], got.Sessions[id]
		switch {
		case g.Next != w.Next:
			return fmt.Sprintf("session %s: %d events, want %d", id, g.Next, w.Next)
		case g.Chain != w.Chain:
			return fmt.Sprintf("session %s: chain hash %x, want %x", id, g.Chain[:6], w.Chain[:6])
		case len(g.Events) != len(w.Events):
			return fmt.Sprintf("session %s: %d events read, want %d", id, len(g.Events), len(w.Events))
		case len(g.Steps) != len(w.Steps):
			return fmt.Sprintf("session %s: %d steps, want %d", id, len(g.Steps), len(w.Steps))
		}
		for i := range w.Events {
			if g.Events[i] != w.Events[i] {
				return fmt.Sprintf("session %s seq %d: the event differs", id, i)
			}
		}
		for i := range w.Steps {
			if g.Steps[i] != w.Steps[i] {
				return fmt.Sprintf("session %s: step at seq %d rebuilds differently", id, w.Steps[i].Start)
			}
		}
	}
	return ""
}

// classified reports whether err carries one of the classes of docs/rules.md#error-classes.
func classified(err error) bool {
	return errors.IsAny(err, eventlog.ErrCorrupt, eventlog.ErrInvalid, eventlog.ErrUnsupported,
		eventlog.ErrNotFound, eventlog.ErrLocked, salvage.ErrDamaged)
}

// oneLine flattens an error message.
func oneLine(err error) string {
	return strings.ReplaceAll(fmt.Sprint(err), "\n", " ")
}

// probe opens the damaged store at path and classifies what a reader sees
// (see the class constants).
func probe(ctx context.Context, path string, orig *storeState) probeResult {
	var res probeResult
	note := func(err error) {
		if err != nil && !classified(err) && len(res.Unclassified) < 8 {
			res.Unclassified = append(res.Unclassified, oneLine(err))
		}
	}
	l, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, &boltlog.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		note(err)
		res.Class, res.Err = classRefused, oneLine(err)
		return res
	}
	defer func() { _ = l.Close() }()
	ids, err := l.SessionIDs(ctx)
	if err != nil {
		note(err)
		res.Class, res.Err = classRefused, oneLine(err)
		return res
	}
	detected := false
	// The store-level checks, as logtool verify runs them: bbolt falls
	// back to the older meta page without a word when the newest is
	// damaged; only CheckMeta can tell.
	for _, f := range verify.CheckStore(l) {
		note(f.Err)
		detected = true
		res.Findings = append(res.Findings, findingKey{Seq: -1, Kind: "store"})
		if res.Err == "" {
			res.Err = "store: " + oneLine(f.Err)
		}
	}
	for _, id := range ids {
		v, err := verify.Session(ctx, l, id, verify.Options{})
		if err != nil {
			note(err)
			detected = true
			res.Findings = append(res.Findings, findingKey{Session: id, Seq: -1, Kind: "error"})
			if res.Err == "" {
				res.Err = oneLine(err)
			}
			continue
		}
		for _, f := range v.Findings {
			if f.Warning {
				continue
			}
			detected = true
			note(f.Err)
			if len(res.Findings) < 64 {
				res.Findings = append(res.Findings, findingKey{Session: f.Session, Seq: f.Seq, Kind: f.Kind.String()})
			}
			if res.Err == "" {
				res.Err = f.String()
			}
		}
	}
	got, rerr := readState(ctx, l)
	switch {
	case detected:
		res.Class = classDetected
	case rerr != nil:
		note(rerr)
		res.Class, res.Diff = classMissed, oneLine(rerr)
	default:
		if d := diffState(orig, got); d != "" {
			res.Class, res.Diff = classSilent, d
		} else {
			res.Class = classOK
		}
	}
	return res
}

// probeSalvage salvages the damaged store at path into a new store and
// checks that the damaged file is unchanged, that everything copied
// verifies clean in the new store, and that each session copied is a
// prefix of the original.
func probeSalvage(ctx context.Context, path, out string, orig *storeState) probeResult {
	res := probeResult{Salvage: &salvageResult{Copied: map[string]int64{}, Causes: map[string]string{}}}
	sr := res.Salvage
	before, err := os.ReadFile(path)
	if err != nil {
		res.Class, res.Err = classOpenFailed, oneLine(err)
		return res
	}
	defer func() {
		after, err := os.ReadFile(path)
		sr.Changed = err != nil || !bytes.Equal(before, after)
	}()
	// As logtool salvage opens it: eventlog's reader, bbolt directly where
	// that fails.
	st, err := salvage.Open(path, &salvage.FileOptions{LockTimeout: 5 * time.Second})
	if err != nil {
		res.Class, res.Err = classOpenFailed, oneLine(err)
		return res
	}
	for _, w := range st.Warnings {
		sr.Warnings = append(sr.Warnings, oneLine(w))
	}
	rep, err := salvage.Into(ctx, st, out, &salvage.Options{NoSync: true})
	sr.Warnings = append(sr.Warnings, st.Notes()...)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		res.Class, res.Err = "salvage-failed", oneLine(err)
		return res
	}
	res.Class = "salvaged"
	if rep.List != nil {
		sr.List = oneLine(rep.List)
	}
	for i := range rep.Sessions {
		s := &rep.Sessions[i]
		sr.Sessions = append(sr.Sessions, salvageSession{ID: s.ID, Copied: s.Copied, Cause: s.Cause.String(), Lost: s.Lost})
		sr.Lines = append(sr.Lines, strings.ReplaceAll(s.String(), "\n", " "))
		if s.Err != nil && !classified(s.Err) {
			res.Unclassified = append(res.Unclassified, oneLine(s.Err))
		}
	}
	reported := map[string]bool{}
	for _, s := range rep.Sessions {
		reported[s.ID] = true
	}
	for _, id := range orig.IDs {
		if !reported[id] && !rep.Damaged() {
			sr.Problems = append(sr.Problems, fmt.Sprintf("session %s is not in a report that says nothing is wrong", id))
		}
	}
	nl, err := boltlog.Open(out, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		sr.Problems = append(sr.Problems, "the new store does not open: "+oneLine(err))
		return res
	}
	defer func() { _ = nl.Close() }()
	for _, s := range rep.Sessions {
		if s.Lost {
			continue
		}
		v, err := verify.Session(ctx, nl, s.ID, verify.Options{})
		if err != nil || v.Failed() {
			sr.Problems = append(sr.Problems, fmt.Sprintf("session %s does not verify in the new store: %v %v", s.ID, err, v.Findings))
			continue
		}
		got, err := readSession(ctx, nl, s.ID)
		if err != nil {
			sr.Problems = append(sr.Problems, fmt.Sprintf("session %s does not read in the new store: %v", s.ID, err))
			continue
		}
		want := orig.Sessions[s.ID]
		if want == nil {
			sr.Problems = append(sr.Problems, fmt.Sprintf("session %s was not in the original", s.ID))
			continue
		}
		if int64(len(got.Events)) != s.Copied || len(got.Events) > len(want.Events) {
			sr.Problems = append(sr.Problems, fmt.Sprintf("session %s: %d events in the new store, report says %d, original %d",
				s.ID, len(got.Events), s.Copied, len(want.Events)))
			continue
		}
		for i := range got.Events {
			if got.Events[i] != want.Events[i] {
				sr.Problems = append(sr.Problems, fmt.Sprintf("session %s seq %d: copied an event that differs from the original", s.ID, i))
				break
			}
		}
	}
	return res
}

// TestCorruptWorker is the worker process of TestCorrupt; it skips when
// not started by it.
func TestCorruptWorker(t *testing.T) {
	store, dir := os.Getenv(envCorruptStore), os.Getenv(envCorruptDir)
	if store == "" || dir == "" {
		t.Skip("the worker process of TestCorrupt")
	}
	ctx := context.Background()
	sabotage := os.Getenv(envCorruptSabotage)
	if sabotage == "die" {
		os.Exit(3)
	}
	orig, err := os.ReadFile(store)
	if err != nil {
		t.Fatal(err)
	}
	l, err := boltlog.Open(store, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := readState(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) != 4 {
			t.Fatalf("worker: bad probe line %q", in.Text())
		}
		n, _ := strconv.Atoi(f[1])
		off, _ := strconv.Atoi(f[2])
		mask, _ := strconv.Atoi(f[3])
		path := filepath.Join(dir, fmt.Sprintf("probe-%d.db", n))
		b := append([]byte(nil), orig...)
		b[off] ^= byte(mask)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		switch sabotage {
		case "fatal":
			debug.SetMaxStack(1 << 20)
			recurse(1)
		case "hang":
			time.Sleep(time.Hour)
		}
		var res probeResult
		switch f[0] {
		case "probe":
			res = probe(ctx, path, want)
		case "salvage":
			out := filepath.Join(dir, fmt.Sprintf("probe-%d.new.db", n))
			res = probeSalvage(ctx, path, out, want)
			_ = os.Remove(out)
		}
		res.N = n
		_ = os.Remove(path)
		line, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stdout.Write(append(append([]byte(resultPrefix), line...), '\n')); err != nil {
			t.Fatal(err)
		}
	}
}
