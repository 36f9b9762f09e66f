package ui_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/loggen"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/ui"
	"github.com/sessionlog/sessionlog/verify"
)

// sliceSource is an eventlog.Source over generated events.
type sliceSource []codec.Event

func (s *sliceSource) Next() (codec.Event, error) {
	if len(*s) == 0 {
		return codec.Event{}, io.EOF
	}
	ev := (*s)[0]
	*s = (*s)[1:]
	return ev, nil
}

// BenchmarkPages100k serves the pages of a realistic generated session
// of 100,000 events (as logbench's), each request through the whole
// handler; cmd/logbench reports the same against verify's time.
func BenchmarkPages100k(b *testing.B) {
	ctx := context.Background()
	h, evs, err := loggen.Session(7, loggen.Options{Events: 100000, CompactEvery: 3000, Realistic: true})
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "s.db")
	st, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	src := sliceSource(evs)
	if _, err := st.Import(ctx, h, &src); err != nil {
		b.Fatal(err)
	}
	head, err := st.Head(ctx, h.ID)
	if err != nil {
		b.Fatal(err)
	}
	o, err := audit.Index(ctx, st, head)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := ui.New(st, nil)
	if err != nil {
		b.Fatal(err)
	}
	n := len(o.Steps)
	last, mid := o.Steps[n-1].Ref.String(), o.Steps[n/2].Ref.String()
	id := "/s/" + h.ID
	pages := []struct{ name, target string }{
		{"sessions", "/"},
		{"timeline", id},
		{"timeline-last", id + "?from=" + strconv.FormatInt(head.Next-200, 10)},
		{"step-middle", id + "/step/" + mid},
		{"step-last", id + "/step/" + last},
		{"cache-last", id + "/cache?from=" + strconv.Itoa(n-100)},
		{"diff-last", id + "/diff?a=" + o.Steps[n-2].Ref.String() + "&b=" + last},
		{"api-step-last", "/api/sessions/" + h.ID + "/steps/" + last},
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, localRequest(http.MethodGet, p.target, nil))
				if rec.Code != 200 {
					b.Fatalf("GET %s = %d: %s", p.target, rec.Code, rec.Body)
				}
			}
		})
	}
	// The baseline: verify folds and checks the whole session once.
	b.Run("verify", func(b *testing.B) {
		for b.Loop() {
			if _, err := verify.Session(ctx, st, h.ID, verify.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("timeline-cold", func(b *testing.B) {
		for b.Loop() {
			cold, _ := ui.New(st, nil)
			rec := httptest.NewRecorder()
			cold.ServeHTTP(rec, localRequest(http.MethodGet, id, nil))
			if rec.Code != 200 {
				b.Fatal(rec.Code)
			}
		}
	})
}
