package stress

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/jackc/pgx/v5"

	"github.com/sessionlog/sessionlog/internal/pgtest"
)

// TestCrashPostgres runs TestCrash's rounds on the PostgreSQL store: the
// same child, loop workload, kills and checks, on a schema of its own.
// Under -short it runs STRESS_PG_KILLS rounds (default 4), else
// STRESS_KILLS (default 20; .ci/pg.sh runs 120). When STRESS_PG_CRASHES is n > 0, n of the
// rounds crash PostgreSQL itself mid-load instead (an immediate-mode stop
// of the cluster, then a start: the server loses every connection and
// recovers from its WAL) and then kill the child, and the same claims are
// proved: every event acknowledged before the crash is there byte for
// byte, the store verifies, loop.Open writes exactly the crash closers.
// Crashing the server disturbs every other user of it, so it happens only
// when asked for (.ci/pg.sh runs this test alone).
func TestCrashPostgres(t *testing.T) {
	kills := envInt(t, "STRESS_KILLS", 20)
	if testing.Short() {
		kills = envInt(t, "STRESS_PG_KILLS", 4)
	}
	u, _ := pgtest.Schema(t)
	every := int64(0)
	if n := envInt(t, "STRESS_PG_CRASHES", 0); n > 0 {
		if _, err := exec.LookPath("pg_ctlcluster"); err != nil {
			t.Fatalf("STRESS_PG_CRASHES=%d, but there is no pg_ctlcluster to crash the server with", n)
		}
		every = max(1, kills/n)
	}
	runCrash(t, u, kills, every)
}

// pgCluster returns the version and name of the cluster to crash:
// $STRESS_PG_CLUSTER ("15 main" by default).
func pgCluster() []string {
	if c := os.Getenv("STRESS_PG_CLUSTER"); c != "" {
		return strings.Fields(c)
	}
	return []string{"15", "main"}
}

// crashServer stops the PostgreSQL cluster in immediate mode: no
// checkpoint, every backend killed, as a crash of the server would.
func crashServer(t *testing.T) {
	t.Helper()
	args := append([]string{"--skip-systemctl-redirect"}, pgCluster()...)
	out, err := exec.Command("pg_ctlcluster", append(args, "stop", "-m", "immediate")...).CombinedOutput()
	if err != nil {
		t.Fatalf("crash the server: %v\n%s", err, out)
	}
}

// startServer starts the cluster again and waits until it answers at
// target (recovery replays the WAL first).
func startServer(t *testing.T, target string) {
	t.Helper()
	args := append([]string{"--skip-systemctl-redirect"}, pgCluster()...)
	out, err := exec.Command("pg_ctlcluster", append(args, "start")...).CombinedOutput()
	if err != nil {
		t.Fatalf("start the server: %v\n%s", err, out)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := pgx.Connect(ctx, target)
		if err == nil {
			err = conn.Ping(ctx)
			conn.Close(ctx)
		}
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not come back within 2 minutes: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// withParam returns the URL u with the query parameter k set to v.
func withParam(t *testing.T, u, k, v string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatalf("stress: %v", err)
	}
	q := p.Query()
	q.Set(k, v)
	p.RawQuery = q.Encode()
	return p.String()
}

// waitBackends waits until the server holds no connection whose
// application_name is app: the backends of a killed child end once they
// notice it is gone, after finishing (committing or not) what it sent.
func waitBackends(t *testing.T, target, app string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, target)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.Background())
	for {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
			t.Fatalf("wait for the killed child's connections to end: %v", err)
		}
		if n == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// pgUnpublished lists the session rows not marked published.
func pgUnpublished(target string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, target)
	if err != nil {
		return nil, errors.Wrap(err, "connect")
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT id FROM sessionlog_sessions WHERE NOT published ORDER BY id`)
	if err != nil {
		if strings.Contains(err.Error(), "SQLSTATE 42P01") {
			return nil, nil // no store yet
		}
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// expireLeases moves the staging leases of unpublished sessions into the
// past, as the passing of their lease time would.
func expireLeases(t *testing.T, target string) {
	t.Helper()
	pgtest.Exec(t, target, `UPDATE sessionlog_sessions SET lease_until = now() - interval '1 second' WHERE NOT published`)
}
