package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sessionlog/sessionlog/eventlog/pglog"
	"github.com/sessionlog/sessionlog/internal/pgtest"
)

// pgEnv is a fixed environment: the same clock and id bytes in every run,
// so that two stores given the same commands hold the same sessions.
func pgEnv() env {
	return env{
		stdin:  strings.NewReader(""),
		getenv: func(string) string { return "" },
		now:    func() time.Time { return testNow },
		random: strings.NewReader(strings.Repeat("r", 256)),
	}
}

// runArgs runs one command line and returns its exit code and output.
func runArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runEnv(context.Background(), pgEnv(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// mustRunArgs runs a command line that must succeed and returns its stdout.
func mustRunArgs(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := runArgs(t, args...)
	if code != exitOK {
		t.Fatalf("logtool %s = exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// TestURLParity: every command works against a postgres:// URL, and a read
// command prints the same bytes there as on a bbolt file holding the same
// sessions. The sessions get there by logtool copy, whose chain-hash check
// is the first parity; fork, import and run then write to both stores
// alike, and verify finds both clean.
func TestURLParity(t *testing.T) {
	u, _ := pgtest.Schema(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "s.db")
	mustRunArgs(t, "--db", file, "demo")
	mustRunArgs(t, "--db", file, "import", "testdata/import/basic.jsonl")
	copied := mustRunArgs(t, "copy", "--from", file, "--to", u)
	if strings.Count(copied, "\n") != 2 {
		t.Fatalf("copy printed %q, want two sessions", copied)
	}
	stores := []string{file, u}
	for _, db := range stores {
		mustRunArgs(t, "--db", db, "fork", "basic-1", "--at", "21", "--id", "child-1")
		mustRunArgs(t, "--db", db, "run", "testdata/scenarios/audit.json", "--session", "audit-1")
	}
	ls := mustRunArgs(t, "--db", file, "ls")
	demo := "" // the one session whose id we did not choose
	for _, line := range strings.Split(ls, "\n")[1:] {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasSuffix(f[0], "-1") {
			demo = f[0]
		}
	}
	reads := [][]string{
		{"ls"},
		{"export", "basic-1"},
		{"export", "child-1"},
		{"show", demo},
		{"show", "audit-1", "--json"},
		{"stat", demo},
		{"stat", "child-1"},
		{"replay", demo},
		{"replay", demo, "--format", "json"},
		{"replay", "audit-1", "--format", "json"},
		{"verify"},
		{"verify", "child-1", "--strict"},
		{"diff", demo, "1.1", "3.1"},
		{"cache", demo},
	}
	for _, args := range reads {
		name := strings.Join(args, " ")
		t.Run(name, func(t *testing.T) {
			want := mustRunArgs(t, append([]string{"--db", file}, args...)...)
			got := mustRunArgs(t, append([]string{"--db", u}, args...)...)
			if got != want {
				t.Errorf("on PostgreSQL:\n%s\non bbolt:\n%s", got, want)
			}
		})
	}
	// stat of the whole store differs only in its store and file size lines.
	stat := mustRunArgs(t, "--db", u, "stat")
	if !strings.Contains(stat, "sessions") || strings.Contains(stat, "file size") {
		t.Errorf("stat of a URL = %q", stat)
	}
	// Back the other way, into a new file: the same chain hashes.
	back := filepath.Join(dir, "back.db")
	again := mustRunArgs(t, "copy", "--from", u, "--to", back)
	fromFile := mustRunArgs(t, "copy", "--from", file, "--to", filepath.Join(dir, "back2.db"))
	if again != fromFile {
		t.Errorf("copy from PostgreSQL printed\n%s\nfrom bbolt\n%s", again, fromFile)
	}
	// An existing id is a conflict unless --skip-existing.
	if code, _, errOut := runArgs(t, "copy", "--from", file, "--to", u, "basic-1"); code != exitFailure ||
		!strings.Contains(errOut, "exists already") {
		t.Errorf("copy onto an existing id = exit %d\n%s", code, errOut)
	}
	if code, out, errOut := runArgs(t, "copy", "--from", file, "--to", u, "--skip-existing"); code != exitOK || out != "" {
		t.Errorf("copy --skip-existing = exit %d, stdout %q\n%s", code, out, errOut)
	}
	// salvage reads a URL too.
	salv := mustRunArgs(t, "--db", u, "salvage", "-o", filepath.Join(dir, "salvaged.db"))
	if !strings.Contains(salv, "basic-1 ok") {
		t.Errorf("salvage of a URL printed %q", salv)
	}
}

// TestURLReadCreatesNothing: read commands against a database without a
// store fail with "no store" and leave the schema empty, and a store open
// for reading runs read-only transactions.
func TestURLReadCreatesNothing(t *testing.T) {
	u, schema := pgtest.Schema(t)
	for _, args := range [][]string{{"ls"}, {"stat"}, {"verify"}, {"export", "x"}, {"show", "x"}, {"replay", "x"}} {
		code, _, errOut := runArgs(t, append([]string{"--db", u}, args...)...)
		if code != exitFailure || !strings.Contains(errOut, "no store") {
			t.Errorf("%s on an empty database = exit %d\n%s", args[0], code, errOut)
		}
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = $1`, schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("read commands created %d tables", n)
	}
}

// TestURLLocked: with the store's tables locked by another session, ls
// and import fail within lock_timeout (pglog's default, or the URL's),
// exit 1 naming what waited, instead of hanging.
func TestURLLocked(t *testing.T) {
	u, _ := pgtest.Schema(t)
	mustRunArgs(t, "--db", u, "import", "testdata/import/basic.jsonl")
	pgtest.Lock(t, u, "sessionlog_sessions", "sessionlog_events")
	short := u + "&lock_timeout=300"
	for _, tt := range []struct {
		args        []string
		names, says string
		limit       time.Duration
	}{
		{[]string{"--db", u, "ls"}, "list sessions", "waited past lock_timeout (5s)", pglog.DefaultLockTimeout + 3*time.Second},
		{[]string{"--db", short, "ls"}, "list sessions", "waited past lock_timeout (300ms)", 3 * time.Second},
		{[]string{"--db", short, "import", "--id", "other", "testdata/import/basic.jsonl"}, "remove unpublished sessions",
			"waited past lock_timeout (300ms)", 3 * time.Second},
	} {
		start := time.Now()
		code, out, errOut := runArgs(t, tt.args...)
		took := time.Since(start)
		if code != exitFailure || out != "" || took > tt.limit ||
			!strings.Contains(errOut, tt.names) || !strings.Contains(errOut, tt.says) {
			t.Errorf("%s under a table lock = exit %d after %v, stdout %q\n%s", strings.Join(tt.args[2:], " "), code,
				took.Round(time.Millisecond), out, errOut)
		}
	}
}
