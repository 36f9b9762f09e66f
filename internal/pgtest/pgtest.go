package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultURL is the server tests use when $SESSIONLOG_TEST_PG is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test"

// ServerURL returns the server's URL, skipping t (or failing it, when
// $SESSIONLOG_TEST_PG_REQUIRED=1) when no server answers there.
func ServerURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("SESSIONLOG_TEST_PG")
	if u == "" {
		u = DefaultURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err == nil {
		err = conn.Ping(ctx)
		conn.Close(ctx)
	}
	if err != nil {
		if os.Getenv("SESSIONLOG_TEST_PG_REQUIRED") == "1" {
			t.Fatalf("PostgreSQL at $SESSIONLOG_TEST_PG is required (SESSIONLOG_TEST_PG_REQUIRED=1) but unreachable: %v", err)
		}
		t.Skipf("no PostgreSQL reachable at $SESSIONLOG_TEST_PG (%v)", err)
	}
	return u
}

// Schema creates a schema with a unique name on the server, drops it when
// the test ends, and returns the URL that selects it and its name.
func Schema(t testing.TB) (string, string) {
	t.Helper()
	server := ServerURL(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "sltest_" + hex.EncodeToString(b[:])
	exec(t, server, `CREATE SCHEMA `+name)
	t.Cleanup(func() { exec(t, server, `DROP SCHEMA `+name+` CASCADE`) })
	return WithSearchPath(t, server, name), name
}

// WithSearchPath returns u with its search_path set to schema.
func WithSearchPath(t testing.TB, u, schema string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	q := p.Query()
	q.Set("search_path", schema)
	p.RawQuery = q.Encode()
	return p.String()
}

// Exec runs sql on the database at u.
func Exec(t testing.TB, u, sql string) { t.Helper(); exec(t, u, sql) }

func exec(t testing.TB, u, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}

// QueryInt runs sql, which returns one integer, on the database at u.
func QueryInt(t testing.TB, u, sql string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	var v int64
	if err := conn.QueryRow(ctx, sql).Scan(&v); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
	return v
}

// Lock takes tables of the database at u in ACCESS EXCLUSIVE mode, as
// another session would, in a transaction that stays open until release
// is called (or the test ends). So that code that waits for the lock
// without a bound cannot hang the test for good, the server ends that
// transaction after 10 s idle.
func Lock(t testing.TB, u string, tables ...string) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	for _, sql := range []string{
		`SET idle_in_transaction_session_timeout = '10s'`,
		`BEGIN`,
		`LOCK TABLE ` + strings.Join(tables, ", ") + ` IN ACCESS EXCLUSIVE MODE`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			conn.Close(ctx)
			t.Fatalf("pgtest: %s: %v", sql, err)
		}
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			_, _ = conn.Exec(ctx, `ROLLBACK`) // fails when the server ended it already
			conn.Close(ctx)
		})
	}
	t.Cleanup(release)
	return release
}
