package loop_test

import (
	"context"
	"encoding/hex"
	"io"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/scenario"
)

func openStore(t testing.TB) *boltlog.Log {
	t.Helper()
	l, err := boltlog.Open(filepath.Join(t.TempDir(), "s.db"), &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func readSession(t testing.TB, s *boltlog.Log, id string) (codec.SessionHeader, []codec.Event) {
	t.Helper()
	ctx := context.Background()
	head, err := s.Head(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	it, err := s.Scan(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var evs []codec.Event
	for {
		ev, err := it.Next()
		if err == io.EOF {
			return head.Header, evs
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
}

// checkTheorem checks docs/README.md#the-principle on a stored session: every request the model
// received is byte-identical to the log's rebuild of its step and to the
// recorded digest, and the log breaks no rule of docs/rules.md#turns-and-steps.
func checkTheorem(t *testing.T, s *boltlog.Log, id string, seen []scenario.Step) {
	t.Helper()
	h, evs := readSession(t, s, id)
	steps, err := rebuild.Steps(h, evs)
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	var st rebuild.Structure
	for i := range evs {
		if brk := st.Add(&evs[i]); len(brk) > 0 {
			t.Fatalf("structure break at seq %d: %s", brk[0].Seq, brk[0].What)
		}
	}
	byStep := map[[2]int64]rebuild.Step{}
	for _, s := range steps {
		byStep[[2]int64{s.Turn, s.Step}] = s
	}
	for _, r := range seen {
		s, ok := byStep[[2]int64{r.Turn, r.Step}]
		if !ok {
			t.Fatalf("step %d.%d was sent but the log has no such step", r.Turn, r.Step)
		}
		if string(s.Request) != string(r.Request) {
			t.Fatalf("step %d.%d: sent request differs from rebuild\nsent %s\nlog  %s", r.Turn, r.Step, r.Request, s.Request)
		}
		if len(s.Recorded) != 1 || s.Recorded[0].SHA256 != hex.EncodeToString(s.Digest[:]) {
			t.Fatalf("step %d.%d: recorded digests %v, rebuild %x", r.Turn, r.Step, s.Recorded, s.Digest)
		}
	}
}

// openOrCreate opens a loop instance over session id, creating the
// session first when the store has none.
func openOrCreate(ctx context.Context, store loop.Store, id string, o loop.Options) (*loop.Loop, error) {
	l, err := loop.Open(ctx, store, id, o)
	if errors.Is(err, eventlog.ErrNotFound) {
		return loop.Create(ctx, store, id, o)
	}
	return l, err
}
