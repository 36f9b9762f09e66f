package pglog_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/pglog"
	"github.com/sessionlog/sessionlog/internal/pgtest"
)

// events is a Source over a slice of events.
type events []codec.Event

func (e *events) Next() (codec.Event, error) {
	if len(*e) == 0 {
		return codec.Event{}, io.EOF
	}
	ev := (*e)[0]
	*e = (*e)[1:]
	return ev, nil
}

// turnEvents is one turn of two events from seq, whose last is a turn/end.
func turnEvents(t testing.TB, seq int64) []codec.Event {
	t.Helper()
	var evs []codec.Event
	for i, line := range []string{
		`{"type":"turn/start","seq":%d,"time":%d,"data":{"turn":1}}`,
		`{"type":"turn/end","seq":%d,"time":%d,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
	} {
		s := seq + int64(i)
		ev, err := codec.ParseEvent([]byte(fmt.Sprintf(line, s, 1000+s)), codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// TestTimeBounds: with the store's tables locked by another session,
// every call (list, read, scan, append, create, import, fork, open) fails
// within its bound with ErrLocked, naming the operation and the bound
// that ran out, never hangs; it writes nothing, and once the lock is gone
// the store works. The bound comes from Options.Postgres, from the URL,
// or is the default.
func TestTimeBounds(t *testing.T) {
	tests := []struct {
		name  string
		query string // added to the URL
		opts  pglog.Options
		want  string
		limit time.Duration
		all   bool // every operation, not only the listing
	}{
		{name: "lock_timeout option", opts: pglog.Options{LockTimeout: 300 * time.Millisecond},
			want: "waited past lock_timeout (300ms)", limit: 3 * time.Second, all: true},
		{name: "statement_timeout option", opts: pglog.Options{LockTimeout: time.Minute, StatementTimeout: 300 * time.Millisecond},
			want: "ran past statement_timeout (300ms)", limit: 3 * time.Second, all: true},
		{name: "lock_timeout in the URL", query: "&lock_timeout=300",
			want: "waited past lock_timeout (300ms)", limit: 3 * time.Second, all: true},
		{name: "option wins over the URL", query: "&lock_timeout=1h", opts: pglog.Options{LockTimeout: 300 * time.Millisecond},
			want: "waited past lock_timeout (300ms)", limit: 3 * time.Second},
		{name: "defaults", want: "waited past lock_timeout (5s)", limit: pglog.DefaultLockTimeout + 3*time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			base, _ := pgtest.Schema(t)
			u := base + tt.query
			s, err := pglog.Open(ctx, u, &unvalidated, &tt.opts)
			if err != nil {
				t.Fatalf("Open = %v", err)
			}
			t.Cleanup(func() { s.Close() })
			if err := s.Create(ctx, codec.NewSessionHeader("s", 1000, "", "", 0)); err != nil {
				t.Fatal(err)
			}
			if err := s.Append(ctx, "s", turnEvents(t, 0)); err != nil {
				t.Fatal(err)
			}
			it, err := s.Scan(ctx, "s", 0)
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			release := pgtest.Lock(t, u, "sessionlog_meta", "sessionlog_sessions", "sessionlog_events")

			ops := []struct {
				name, names string // the operation, and what its error must name
				fn          func() error
			}{
				{"ls", "list sessions", func() error { _, err := s.Sessions(ctx); return err }},
				{"head", `head of session "s"`, func() error { _, err := s.Head(ctx, "s"); return err }},
				{"scan", `scan session "s"`, func() error { _, err := s.Scan(ctx, "s", 0); return err }},
				{"next", `scan of session "s" at seq 0`, func() error { _, err := it.Next(); return err }},
				{"append", `append to session "s" seqs 2..3`, func() error { return s.Append(ctx, "s", turnEvents(t, 2)) }},
				{"create", `create session "new"`, func() error { return s.Create(ctx, codec.NewSessionHeader("new", 1000, "", "", 0)) }},
				{"import", `import`, func() error {
					_, err := s.Import(ctx, codec.NewSessionHeader("imp", 1000, "", "", 0), ptr(events(turnEvents(t, 0))))
					return err
				}},
				{"fork", `fork of session "s"`, func() error { return s.Fork(ctx, "s", 1, codec.NewSessionHeader("child", 1000, "", "s", 2)) }},
				{"open read-only", "pglog: open", func() error { return openClose(ctx, u, eventlog.Options{ReadOnly: true}, tt.opts) }},
				{"open", "pglog: open", func() error { return openClose(ctx, u, eventlog.Options{Unvalidated: true}, tt.opts) }},
			}
			if !tt.all {
				ops = ops[:1]
			}
			for _, op := range ops {
				start := time.Now()
				err := op.fn()
				took := time.Since(start)
				if !errors.Is(err, eventlog.ErrLocked) {
					t.Errorf("%s under a table lock = %v (after %v), want ErrLocked", op.name, err, took.Round(time.Millisecond))
					continue
				}
				if took > tt.limit {
					t.Errorf("%s failed after %v, want within %v", op.name, took.Round(time.Millisecond), tt.limit)
				}
				msg := err.Error()
				t.Logf("%s after %v: %s", op.name, took.Round(time.Millisecond), msg)
				if !strings.Contains(msg, op.names) || !strings.Contains(msg, tt.want) || strings.Contains(msg, "SELECT") {
					t.Errorf("%s: error %q, want it to name %q and say %q, without SQL", op.name, msg, op.names, tt.want)
				}
			}
			release()
			if err := s.Append(ctx, "s", turnEvents(t, 2)); err != nil {
				t.Fatalf("Append once the lock is gone = %v", err)
			}
			heads, err := s.Sessions(ctx)
			if err != nil || len(heads) != 1 || heads[0].Next != 4 {
				t.Fatalf("Sessions once the lock is gone = %+v, %v; want session s alone, 4 events", heads, err)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// openClose opens the store at u and closes it.
func openClose(ctx context.Context, u string, o eventlog.Options, po pglog.Options) error {
	s, err := pglog.Open(ctx, u, &o, &po)
	if err == nil {
		s.Close()
	}
	return err
}
