package ui_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/loggen"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/ui"
)

// TestGeneratedSession serves a generated session that has what the
// scripted ones lack: steps with no header in force, compactions, header
// deltas and snapshots of every reason, and more events than one page.
func TestGeneratedSession(t *testing.T) {
	ctx := context.Background()
	h, evs, err := loggen.Session(3, loggen.Options{Events: 1500, CompactEvery: 300})
	if err != nil {
		t.Fatal(err)
	}
	st, err := boltlog.Open(filepath.Join(t.TempDir(), "s.db"), &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	src := sliceSource(evs)
	if _, err := st.Import(ctx, h, &src); err != nil {
		t.Fatal(err)
	}
	head, _ := st.Head(ctx, h.ID)
	o, err := audit.Index(ctx, st, head)
	if err != nil {
		t.Fatal(err)
	}
	var null, sent *audit.StepInfo
	for i := range o.Steps {
		if o.Steps[i].Null && null == nil {
			null = &o.Steps[i]
		}
		if !o.Steps[i].Null {
			sent = &o.Steps[i]
		}
	}
	if null == nil || sent == nil || len(o.Compactions) == 0 {
		t.Fatalf("the generated session lacks a null step, a sent step or a compaction: %d steps, %d compactions", len(o.Steps), len(o.Compactions))
	}
	srv, err := ui.New(st, &ui.Options{EventsPage: 100, CachePage: 40})
	if err != nil {
		t.Fatal(err)
	}
	id := "/s/" + h.ID
	tests := []struct {
		target string
		status int
		want   string
	}{
		{id, 200, "replaced"},
		{id + "?from=1400", 200, "← earlier"},
		{id + "/step/" + null.Ref.String(), 200, "No header was in force"},
		{id + "/step/" + null.Ref.String() + "/request.json", 400, "has no request"},
		{id + "/step/" + sent.Ref.String(), 200, "Request messages"},
		{id + "/cache", 200, "later steps"},
		{id + "/cache?from=" + itoa(len(o.Steps)-5), 200, "earlier steps"},
		{id + "/diff?a=" + null.Ref.String() + "&b=" + sent.Ref.String(), 400, "has no request"},
		{"/api/sessions/" + h.ID + "/steps/" + null.Ref.String(), 200, `"digest":null`},
		{"/api/sessions/" + h.ID + "/steps?from=2&limit=3", 200, `"total":`},
		{"/api/sessions/" + h.ID + "/events?from=1490", 200, `"next":null`},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, localRequest("GET", tt.target, nil))
		if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.want) {
			t.Errorf("GET %s = %d, want %d with %q:\n%.2000s", tt.target, rec.Code, tt.status, tt.want, rec.Body.String())
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
