package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The programs a Cluster runs.
var clusterPrograms = []string{"initdb", "pg_ctl", "pg_basebackup"}

// Binaries returns the directory that holds initdb, pg_ctl and
// pg_basebackup: $SESSIONLOG_TEST_PG_BIN, else initdb's directory on
// $PATH, else the newest /usr/lib/postgresql/*/bin (Debian's layout).
// When there is none, t skips with one line, or fails when $CI is set or
// $SESSIONLOG_TEST_PG_REQUIRED=1.
func Binaries(t testing.TB) string {
	t.Helper()
	var dirs []string
	if d := os.Getenv("SESSIONLOG_TEST_PG_BIN"); d != "" {
		dirs = append(dirs, d)
	} else {
		if p, err := osexec.LookPath("initdb"); err == nil {
			dirs = append(dirs, filepath.Dir(p))
		}
		found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		sort.Slice(found, func(i, j int) bool { return version(found[i]) > version(found[j]) })
		dirs = append(dirs, found...)
	}
	for _, d := range dirs {
		ok := true
		for _, p := range clusterPrograms {
			if st, err := os.Stat(filepath.Join(d, p)); err != nil || st.IsDir() {
				ok = false
			}
		}
		if ok {
			return d
		}
	}
	absent(t, "no PostgreSQL server programs (initdb, pg_ctl, pg_basebackup) on $PATH, in /usr/lib/postgresql/*/bin or $SESSIONLOG_TEST_PG_BIN")
	return ""
}

// version is the major version in a /usr/lib/postgresql/N/bin path.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// absent skips t for a missing precondition, or fails it where the
// precondition is required.
func absent(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" || os.Getenv("SESSIONLOG_TEST_PG_REQUIRED") == "1" {
		t.Fatalf("required under CI / SESSIONLOG_TEST_PG_REQUIRED=1: %s", why)
	}
	t.Skip(why)
}

// Cluster is a PostgreSQL server of a test's own, in a temporary
// directory, listening on 127.0.0.1 only at a free port, with trust
// authentication for the superuser postgres (connections and
// replication). It is stopped in immediate mode and removed when the test
// ends, whatever happened. Run as root, its programs run as the postgres
// user (initdb refuses root).
type Cluster struct {
	bin  string
	root string // the temporary directory: data and log
	dir  string // the data directory
	log  string // the server's log file
	// Port is the TCP port the server listens on.
	Port    int
	cred    *syscall.Credential
	running bool
}

// NewCluster creates a primary with initdb, appends conf (postgresql.conf
// lines, e.g. "synchronous_commit = on") to its configuration, and
// starts it.
func NewCluster(t testing.TB, conf ...string) *Cluster {
	t.Helper()
	c := newCluster(t, "primary")
	c.run(t, "initdb", "-D", c.dir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	c.write(t, "pg_hba.conf", hba("trust"), false)
	c.configure(t, append([]string{"wal_level = replica", "max_wal_senders = 8"}, conf...))
	c.Start(t)
	return c
}

// Standby creates a streaming standby of c with pg_basebackup -R (which
// writes primary_conninfo and standby.signal), appends conf to its
// configuration after the primary's, so conf overrides it, and starts
// it: a hot standby, open for reads. Its walreceiver connects with
// application_name name (cluster_name), the name synchronous_standby_names
// refers to.
func (c *Cluster) Standby(t testing.TB, name string, conf ...string) *Cluster {
	t.Helper()
	s := newCluster(t, name)
	c.run(t, "pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(c.Port), "-U", "postgres",
		"-D", s.dir, "-R", "-X", "stream", "--checkpoint=fast", "--no-sync")
	s.configure(t, append([]string{"cluster_name = '" + name + "'", "hot_standby = on"}, conf...))
	s.Start(t)
	return s
}

// hba is the whole pg_hba.conf, every line explicit whatever initdb's
// defaults: trust for every connection, replication's by method.
func hba(replication string) string {
	return "local all all trust\n" +
		"host all all 127.0.0.1/32 trust\n" +
		"local replication all " + replication + "\n" +
		"host replication all 127.0.0.1/32 " + replication + "\n"
}

// CutReplication cuts c's standbys off, as a network partition would: c
// refuses replication connections from now on (pg_hba.conf, reloaded)
// and ends the ones it has. It returns once no standby streams from c.
func (c *Cluster) CutReplication(t testing.TB) {
	t.Helper()
	c.write(t, "pg_hba.conf", hba("reject"), false)
	Exec(t, c.URL(), `SELECT pg_reload_conf()`)
	// The postmaster reloads pg_hba.conf when it gets to the signal; a
	// standby that reconnected before that is ended again.
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := QueryInt(t, c.URL(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_replication`)
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgtest: standbys still connect to the primary 30 s after it refused them\n%s", c.LogTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func newCluster(t testing.TB, name string) *Cluster {
	t.Helper()
	c := &Cluster{bin: Binaries(t)}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			absent(t, "running as root, and there is no postgres user to run the server as (initdb refuses root)")
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	root, err := os.MkdirTemp("", "sessionlog-pg-"+name+"-")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	c.root, c.dir, c.log = root, filepath.Join(root, "data"), filepath.Join(root, "server.log")
	if c.cred != nil {
		if err := os.Chown(root, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			t.Fatalf("pgtest: %v", err)
		}
	}
	// Registered before the server starts: on every exit, stop it first
	// (no checkpoint, as a crash), then remove its files.
	t.Cleanup(func() {
		if c.running {
			_, _ = c.output("pg_ctl", "stop", "-D", c.dir, "-m", "immediate", "-w")
		}
		_ = os.RemoveAll(root)
	})
	c.Port = freePort(t)
	return c
}

// configure appends the listening parameters and conf to
// postgresql.conf; a later line overrides an earlier one.
func (c *Cluster) configure(t testing.TB, conf []string) {
	t.Helper()
	lines := append([]string{
		"",
		"# pgtest.Cluster",
		"listen_addresses = '127.0.0.1'",
		"port = " + strconv.Itoa(c.Port),
		"unix_socket_directories = ''",
		"logging_collector = off",
	}, conf...)
	c.write(t, "postgresql.conf", strings.Join(lines, "\n")+"\n", true)
}

// write writes (or appends to) a file of the data directory.
func (c *Cluster) write(t testing.TB, name, content string, appendTo bool) {
	t.Helper()
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendTo {
		flag = os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(filepath.Join(c.dir, name), flag, 0o600)
	if err == nil {
		_, err = f.WriteString(content)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatalf("pgtest: write %s: %v", name, err)
	}
}

// output runs one of the server programs, as the postgres user when root.
func (c *Cluster) output(name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = c.root
	// The PG* variables of the test's environment would redirect the
	// programs elsewhere.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd.CombinedOutput()
}

// run is output that fails t on an error, with the program's output and
// the server log's tail.
func (c *Cluster) run(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := c.output(name, args...); err != nil {
		t.Fatalf("pgtest: %s %s: %v\n%s\nserver log:\n%s", name, strings.Join(args, " "), err, out, c.LogTail())
	}
}

// Start starts the server and waits until it accepts connections.
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	c.running = true // a failed start may still leave a server to stop
	c.run(t, "pg_ctl", "start", "-D", c.dir, "-l", c.log, "-w", "-t", "120")
	c.wait(t)
}

// Stop stops the server: mode "immediate" is a crash (every backend
// killed, no checkpoint; the WAL is replayed at the next start), "fast"
// a clean shutdown.
func (c *Cluster) Stop(t testing.TB, mode string) {
	t.Helper()
	c.run(t, "pg_ctl", "stop", "-D", c.dir, "-m", mode, "-w")
	c.running = false
}

// Promote ends a standby's recovery: it becomes a primary that accepts
// writes. It returns once the server says it is promoted.
func (c *Cluster) Promote(t testing.TB) {
	t.Helper()
	c.run(t, "pg_ctl", "promote", "-D", c.dir, "-w", "-t", "120")
}

// URL is the server's postgres database, as the superuser.
func (c *Cluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres", c.Port)
}

// wait waits until the server answers at its URL.
func (c *Cluster) wait(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := pgx.Connect(ctx, c.URL())
		if err == nil {
			err = conn.Ping(ctx)
			conn.Close(ctx)
		}
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgtest: the server on port %d did not answer within 2 minutes: %v\n%s", c.Port, err, c.LogTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitStandby waits until the standby named name streams from c with
// the given sync_state of pg_stat_replication ("sync", "async").
func (c *Cluster) WaitStandby(t testing.TB, name, state string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	got := ""
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := pgx.Connect(ctx, c.URL())
		if err == nil {
			err = conn.QueryRow(ctx, `SELECT coalesce(string_agg(sync_state, ','), '') FROM pg_stat_replication
WHERE application_name = $1 AND state = 'streaming'`, name).Scan(&got)
			conn.Close(ctx)
		}
		cancel()
		if err == nil && got == state {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("pgtest: standby %s is not streaming as %q (pg_stat_replication says %q)\n%s", name, state, got, c.LogTail())
}

// WaitReplayed waits until standby has replayed everything c had written
// when it was called, so a read there sees what c had committed.
func (c *Cluster) WaitReplayed(t testing.TB, standby *Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var lsn string
	if err := queryOne(ctx, c.URL(), `SELECT pg_current_wal_lsn()::text`, &lsn); err != nil {
		t.Fatalf("pgtest: primary's WAL position: %v", err)
	}
	for {
		var done bool
		err := queryOne(ctx, standby.URL(), `SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, &done, lsn)
		if err == nil && done {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("pgtest: the standby did not replay up to %s within a minute: %v\n%s", lsn, err, standby.LogTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func queryOne(ctx context.Context, url, sql string, dst any, args ...any) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return conn.QueryRow(ctx, sql, args...).Scan(dst)
}

// LogTail returns the last 4 KiB of the server's log.
func (c *Cluster) LogTail() string {
	b, err := os.ReadFile(c.log)
	if err != nil {
		return "(no server log: " + err.Error() + ")"
	}
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return string(b)
}

// freePort returns a TCP port of 127.0.0.1 that nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
