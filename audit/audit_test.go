package audit_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/loggen"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/scenario"
)

// events is an eventlog.Source over a slice.
type events []codec.Event

func (e *events) Next() (codec.Event, error) {
	if len(*e) == 0 {
		return codec.Event{}, io.EOF
	}
	ev := (*e)[0]
	*e = (*e)[1:]
	return ev, nil
}

func openStore(t testing.TB) *boltlog.Log {
	t.Helper()
	st, err := boltlog.Open(filepath.Join(t.TempDir(), "s.db"), &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func head(t testing.TB, st eventlog.Store, id string) eventlog.Head {
	t.Helper()
	h, err := st.Head(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// generated imports a loggen session of about n events.
func generated(t testing.TB, st eventlog.Store, seed int64, n int) eventlog.Head {
	t.Helper()
	h, evs, err := loggen.Session(seed, loggen.Options{Events: n, CompactEvery: 400})
	if err != nil {
		t.Fatal(err)
	}
	src := events(evs)
	if _, err := st.Import(context.Background(), h, &src); err != nil {
		t.Fatal(err)
	}
	return head(t, st, h.ID)
}

func allRows(t testing.TB, st eventlog.Store, h eventlog.Head, w audit.Window) ([]audit.CacheRow, audit.CacheTotals) {
	t.Helper()
	var rows []audit.CacheRow
	tot, err := audit.Cache(context.Background(), st, h, w, func(r audit.CacheRow) error {
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows, tot
}

// TestCacheWindows checks that a window of the cache report is exactly
// that slice of the whole report: the rows a page shows do not depend on
// where the page starts.
func TestCacheWindows(t *testing.T) {
	st := openStore(t)
	reasons := map[string]bool{}
	for seed := int64(1); seed <= 2; seed++ {
		h := generated(t, st, seed, 900)
		whole, tot := allRows(t, st, h, audit.Window{})
		if len(whole) < 20 || tot.Requests == 0 {
			t.Fatalf("seed %d: only %d steps, %d requests: the test did no real work", seed, len(whole), tot.Requests)
		}
		for _, r := range whole {
			reasons[r.Reason] = true
		}
		for _, w := range []audit.Window{{From: 0, Limit: 1}, {From: 1, Limit: 7}, {From: 13, Limit: 5}, {From: len(whole) - 3, Limit: 10}, {From: len(whole) + 4, Limit: 2}, {From: 5}} {
			got, _ := allRows(t, st, h, w)
			end := len(whole)
			if w.Limit > 0 {
				end = min(w.From+w.Limit, len(whole))
			}
			want := whole[min(w.From, len(whole)):max(end, min(w.From, len(whole)))]
			if len(got) != len(want) {
				t.Fatalf("seed %d window %+v: %d rows, want %d", seed, w, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("seed %d window %+v row %d:\n got %+v\nwant %+v", seed, w, i, got[i], want[i])
				}
			}
		}
	}
	if !reasons[audit.ReasonCompaction] || !reasons[audit.ReasonNone] {
		t.Errorf("reasons %v lack compaction or none", reasons)
	}
}

// TestCacheReads checks that the provider-reported cache reads of each
// step's assistant/message reach its row, and only its row.
func TestCacheReads(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	data, err := os.ReadFile("../cmd/logtool/testdata/scenarios/audit.json")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scenario.Run(ctx, st, sc, scenario.Options{Session: "src", Now: func() float64 { return 1 }}); err != nil {
		t.Fatal(err)
	}
	// The same session with cache reads in every assistant/message's usage
	// but the first: 1000·turn + step tokens.
	usage := regexp.MustCompile(`"usage":\{"inputTokens":[0-9]+`)
	var evs []codec.Event
	first := true
	read := map[audit.Ref]bool{} // the steps given a cache read
	err = audit.Scan(ctx, st, "src", 0, 1<<62, func(ev *codec.Event) error {
		line, err := ev.AppendJSON(nil)
		if err != nil {
			return err
		}
		if d, ok := ev.Data.(*codec.AssistantMessage); ok {
			if !first {
				n := d.Turn*1000 + d.Step
				read[audit.Ref{Turn: d.Turn, Step: d.Step}] = true
				line = usage.ReplaceAllFunc(line, func(m []byte) []byte {
					return append(append([]byte(nil), m...), []byte(`,"cacheReadTokens":`+itoa(n))...)
				})
			}
			first = false
		}
		e, err := codec.ParseEvent(line, codec.Limits{})
		evs = append(evs, e)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	src := events(evs)
	if _, err := st.Import(ctx, codec.NewSessionHeader("reads", 1, "", "", 0), &src); err != nil {
		t.Fatal(err)
	}
	plain, _ := allRows(t, st, head(t, st, "src"), audit.Window{})
	rows, tot := allRows(t, st, head(t, st, "reads"), audit.Window{})
	if len(rows) != len(plain) || len(rows) < 4 {
		t.Fatalf("%d rows, %d without reads", len(rows), len(plain))
	}
	for i, r := range rows {
		p := plain[i]
		if p.HasCacheRead {
			t.Errorf("row %s of the plain session has a cache read", p.Ref)
		}
		want := read[r.Ref]
		if r.HasCacheRead != want || want && r.CacheRead != float64(r.Turn*1000+r.Step) {
			t.Errorf("row %s: cache read %v %v, want %v %d", r.Ref, r.HasCacheRead, r.CacheRead, want, r.Turn*1000+r.Step)
		}
		r.CacheRead, r.HasCacheRead = 0, false
		if r.Bytes != p.Bytes || r.Reusable != p.Reusable || r.Reason != p.Reason {
			t.Errorf("row %s: the cache reads changed the prediction: %+v vs %+v", r.Ref, r, p)
		}
	}
	if tot.CacheReads != len(read) || len(read) < 3 {
		t.Errorf("totals count %d cache reads, want %d", tot.CacheReads, len(read))
	}
	line := string(rows[1].AppendJSON(nil))
	if !json.Valid([]byte(line)) || !strings.HasSuffix(line, `,"cacheReadTokens":1002}`) {
		t.Errorf("row JSON %s", line)
	}
	if line := string(rows[0].AppendJSON(nil)); strings.Contains(line, "cacheReadTokens") {
		t.Errorf("a row with no cache read prints one: %s", line)
	}
}

func itoa(n int64) string { return string(codec.AppendJSONInt(nil, n)) }

// TestDiffSteps checks the diff's classes and its JSON.
func TestDiffSteps(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	h := generated(t, st, 4, 600)
	o, err := audit.Index(ctx, st, h)
	if err != nil {
		t.Fatal(err)
	}
	var refs []audit.Ref
	for _, s := range o.Steps {
		if !s.Null {
			refs = append(refs, s.Ref)
		}
	}
	if len(refs) < 5 || len(o.Headers) == 0 {
		t.Fatalf("%d steps with a request, %d header events: no real work", len(refs), len(o.Headers))
	}
	d, err := audit.DiffSteps(ctx, st, h, refs[0], refs[0])
	if err != nil || d.Relation != audit.MessagesIdentical || len(d.Header) != 0 {
		t.Fatalf("a step against itself: %+v, %v", d, err)
	}
	relations := map[string]bool{}
	for i := 1; i < len(refs); i++ {
		d, err := audit.DiffSteps(ctx, st, h, refs[i-1], refs[i])
		if err != nil {
			t.Fatal(err)
		}
		relations[d.Relation] = true
		if js := d.AppendJSON(nil); !json.Valid(js) {
			t.Fatalf("diff JSON is not JSON: %s", js)
		}
		if d.Relation == audit.MessagesDiverged && (d.MessageA == nil || d.MessageB == nil) {
			t.Fatalf("diverged without the messages: %+v", d)
		}
	}
	if !relations[audit.MessagesAppended] || !relations[audit.MessagesDiverged] {
		t.Errorf("relations %v: no step appended to the one before", relations)
	}
	_, err = audit.DiffSteps(ctx, st, h, refs[0], audit.Ref{Turn: 9999, Step: 1})
	if !errors.Is(err, eventlog.ErrNotFound) {
		t.Errorf("a missing step: %v, want not found", err)
	}
	for _, s := range o.Steps {
		if s.Null {
			_, err = audit.DiffSteps(ctx, st, h, s.Ref, refs[0])
			if !errors.Is(err, audit.ErrNullRequest) {
				t.Errorf("a step with no request: %v, want ErrNullRequest", err)
			}
			break
		}
	}
}
