package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/jackc/pgx/v5"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/pglog"
)

// pgSessions are the concurrent-session counts of the PostgreSQL append
// measurement, one event per commit each.
var pgSessions = []int{1, 64, 256}

// pgAppendResult is what the rounds of one session count measured.
type pgAppendResult struct {
	sessions int
	// pg, bolt and base are events per second, per round; the ratios are
	// per round too.
	pg, bolt, base      stat
	pgBase, pgBolt      stat // PostgreSQL ÷ JSONL+fsync, PostgreSQL ÷ bbolt
	boltBase            stat // bbolt ÷ JSONL+fsync
	pgPerTx             stat // events per PostgreSQL transaction
	pgP50, pgP99        time.Duration
	boltP50, boltP99    time.Duration
	baseP50, baseP99    time.Duration
	pgAcked, boltAcked  int64
	pgCommits, pgWrites int64
}

// pgScanResult is the scan throughput of one session on both stores.
type pgScanResult struct {
	events         int64
	pg, bolt, rate stat // events per second; rate is PostgreSQL ÷ bbolt
}

// pgResults is the PostgreSQL section of the report.
type pgResults struct {
	target string // the server, without password; "" when not measured
	append []pgAppendResult
	scan   *pgScanResult
}

// pgSchema creates a schema of its own for one run on the server at
// server, and returns the URL that selects it and the function that
// drops it.
func pgSchema(ctx context.Context, server string) (string, func(), error) {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return "", nil, errors.WithHint(errors.Wrap(err, "connect to the -pg server"),
			"is PostgreSQL running there? logbench needs a role that may create a schema")
	}
	name := fmt.Sprintf("logbench_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		conn.Close(ctx)
		return "", nil, errors.Wrap(err, "create the benchmark schema")
	}
	drop := func() {
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE")
		conn.Close(context.Background())
	}
	u, err := url.Parse(server)
	if err != nil {
		drop()
		return "", nil, errors.Wrap(err, "-pg")
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}

// measurePostgres measures the PostgreSQL store against bbolt and the
// JSONL baseline: durable appends at each of pgSessions, then a scan of
// the largest generated session.
func measurePostgres(ctx context.Context, c config, work string, sessions []*benchSession, p progress) (pgResults, error) {
	var res pgResults
	if c.pg == "" {
		return res, nil
	}
	pool := make([]codec.Event, c.pool)
	lines := make([][]byte, c.pool)
	for i := range pool {
		l := messageLine(int64(i))
		ev, err := codec.ParseEvent(l, codec.Limits{})
		if err != nil {
			return res, errors.Wrap(err, "benchmark event")
		}
		pool[i], lines[i] = ev, append(l, '\n')
	}
	for _, n := range pgSessions {
		r, err := pgAppends(ctx, c, work, n, pool, lines, p)
		if err != nil {
			return res, errors.Wrapf(err, "%d sessions", errors.Safe(n))
		}
		res.append = append(res.append, r)
	}
	if len(sessions) > 0 {
		s, err := pgScan(ctx, c, sessions[len(sessions)-1], p)
		if err != nil {
			return res, errors.Wrap(err, "scan")
		}
		res.scan = &s
	}
	res.target = "yes"
	return res, nil
}

// pgAppends runs c.rounds rounds of n sessions appending one event per
// commit, on a new PostgreSQL store and a new bbolt store, against the
// JSONL baseline. A round alternates slices of the three (the baseline
// first) until each has run for c.roundTime.
func pgAppends(ctx context.Context, c config, work string, n int, pool []codec.Event, lines [][]byte, p progress) (pgAppendResult, error) {
	res := pgAppendResult{sessions: n}
	u, drop, err := pgSchema(ctx, c.pg)
	if err != nil {
		return res, err
	}
	defer drop()
	pg, err := pglog.Open(ctx, u, &eventlog.Options{NewValidator: validator}, nil)
	if err != nil {
		return res, err
	}
	defer pg.Close()
	dir := filepath.Join(work, fmt.Sprintf("pg-%d", n))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return res, errors.Wrap(err, "work directory")
	}
	defer os.RemoveAll(dir)
	bolt, err := boltlog.Open(filepath.Join(dir, "sessions.db"), &eventlog.Options{NewValidator: validator}, nil)
	if err != nil {
		return res, err
	}
	defer bolt.Close()
	base, err := os.OpenFile(filepath.Join(dir, "baseline.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return res, errors.Wrap(err, "baseline")
	}
	defer base.Close()

	m := durableMode{name: fmt.Sprintf("%d sessions", n), sessions: n, perCommit: 1}
	dp := &durableRun{ctx: ctx, st: pg, mode: m, pool: pool}
	db := &durableRun{ctx: ctx, st: bolt, mode: m, pool: pool}
	slice := min(c.roundTime, durableSlice)
	var pgRates, boltRates, baseRates, pgBase, pgBolt, boltBase, perTx []float64
	var baseLat []time.Duration
	next := 0
	tx0, w0 := pg.CommitStats()
	for r := range c.rounds {
		if err := dp.startRound(); err != nil {
			return res, err
		}
		if err := db.startRound(); err != nil {
			return res, err
		}
		var bTook, pTook, oTook time.Duration
		var bLines, pEvents, pTx, oEvents int64
		for bTook < c.roundTime || pTook < c.roundTime || oTook < c.roundTime {
			k, took, lat, err := baselineSlice(ctx, base, lines, &next, slice)
			if err != nil {
				return res, err
			}
			bLines, bTook, baseLat = bLines+k, bTook+took, append(baseLat, lat...)
			ev, took, _, err := db.slice(slice)
			if err != nil {
				return res, err
			}
			oEvents, oTook = oEvents+ev, oTook+took
			ev, took, tx, err := dp.slice(slice)
			if err != nil {
				return res, err
			}
			pEvents, pTook, pTx = pEvents+ev, pTook+took, pTx+tx
		}
		bRate, pRate, oRate := float64(bLines)/bTook.Seconds(), float64(pEvents)/pTook.Seconds(), float64(oEvents)/oTook.Seconds()
		baseRates, pgRates, boltRates = append(baseRates, bRate), append(pgRates, pRate), append(boltRates, oRate)
		pgBase, pgBolt, boltBase = append(pgBase, pRate/bRate), append(pgBolt, pRate/oRate), append(boltBase, oRate/bRate)
		perTx = append(perTx, float64(pEvents)/float64(max(1, pTx)))
		res.pgAcked, res.boltAcked = res.pgAcked+pEvents, res.boltAcked+oEvents
		p.printf("  PostgreSQL, %d sessions, round %d/%d: %s ev/s, bbolt %s ev/s, JSONL+fsync %s ev/s", n, r+1, c.rounds,
			num(pRate), num(oRate), num(bRate))
	}
	tx1, w1 := pg.CommitStats()
	res.pgCommits, res.pgWrites = tx1-tx0, w1-w0
	res.pg, res.bolt, res.base = summarize(pgRates), summarize(boltRates), summarize(baseRates)
	res.pgBase, res.pgBolt, res.boltBase, res.pgPerTx = summarize(pgBase), summarize(pgBolt), summarize(boltBase), summarize(perTx)
	res.pgP50, res.pgP99 = percentile(dp.lat, 50), percentile(dp.lat, 99)
	res.boltP50, res.boltP99 = percentile(db.lat, 50), percentile(db.lat, 99)
	res.baseP50, res.baseP99 = percentile(baseLat, 50), percentile(baseLat, 99)
	// Nothing acknowledged may be missing: the benchmark checks what it
	// counted.
	var stored int64
	heads, err := pg.Sessions(ctx)
	if err != nil {
		return res, err
	}
	for _, h := range heads {
		stored += h.Next
	}
	if stored != res.pgAcked {
		return res, errors.Newf("PostgreSQL holds %d events, %d were acknowledged", errors.Safe(stored), errors.Safe(res.pgAcked))
	}
	return res, nil
}

// pgScan copies session s into a new PostgreSQL store and times full
// scans of it there and in its bbolt store, alternating, c.rounds times.
func pgScan(ctx context.Context, c config, s *benchSession, p progress) (pgScanResult, error) {
	res := pgScanResult{events: s.events}
	u, drop, err := pgSchema(ctx, c.pg)
	if err != nil {
		return res, err
	}
	defer drop()
	pg, err := pglog.Open(ctx, u, &eventlog.Options{Unvalidated: true, NoSync: true}, nil)
	if err != nil {
		return res, err
	}
	defer pg.Close()
	// The bytes-on-disk section closed the session's store to measure
	// its file: open it again, read-only.
	bolt, err := boltlog.Open(s.path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		return res, err
	}
	defer bolt.Close()
	it, err := bolt.Scan(ctx, s.header.ID, 0)
	if err != nil {
		return res, err
	}
	_, err = pg.Import(ctx, s.header, it)
	it.Close()
	if err != nil {
		return res, err
	}
	scan := func(st eventlog.Store) (float64, error) {
		start := time.Now()
		it, err := st.Scan(ctx, s.header.ID, 0)
		if err != nil {
			return 0, err
		}
		defer it.Close()
		var n int64
		for {
			_, err := it.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return 0, err
			}
			n++
		}
		if n != s.events {
			return 0, errors.Newf("scanned %d of %d events", errors.Safe(n), errors.Safe(s.events))
		}
		return float64(n) / time.Since(start).Seconds(), nil
	}
	var pgRates, boltRates, ratios []float64
	for r := range c.rounds {
		b, err := scan(bolt)
		if err != nil {
			return res, err
		}
		q, err := scan(pg)
		if err != nil {
			return res, err
		}
		boltRates, pgRates, ratios = append(boltRates, b), append(pgRates, q), append(ratios, q/b)
		p.printf("  scan of %s events, round %d/%d: PostgreSQL %s ev/s, bbolt %s ev/s", group(s.events), r+1, c.rounds, num(q), num(b))
	}
	res.pg, res.bolt, res.rate = summarize(pgRates), summarize(boltRates), summarize(ratios)
	return res, nil
}

// writePostgres writes the PostgreSQL section.
func (r *report) writePostgres(b *strings.Builder) {
	b.WriteString("## PostgreSQL store\n\n")
	if r.pg.target == "" {
		b.WriteString("Not measured: run logbench with `-pg postgres://…` (a server where it may create a schema).\n\n")
		return
	}
	fmt.Fprintf(b, "The PostgreSQL store (`eventlog/pglog`, docs/rules.md#distribution) on the local PostgreSQL server (loopback, the same\n"+
		"disk), with `synchronous_commit` on, against the bbolt store and the JSONL baseline of the section above,\n"+
		"appending the same ~1 KB events with every rule checked. Each round alternates slices of at most %s of\n"+
		"the three (baseline, bbolt, PostgreSQL) until each has run for %s; N sessions are N goroutines each\n"+
		"appending one event per call to its own session, so both stores' group commits share transactions\n"+
		"between them. Latencies are of one Append call (one line's write+fsync for the baseline), over every\n"+
		"call of every round. Events per commit is events ÷ PostgreSQL write transactions.\n\n",
		dur(min(r.cfg.roundTime, durableSlice)), dur(r.cfg.roundTime))
	t := newTable("sessions", "PostgreSQL ev/s", "bbolt ev/s", "JSONL+fsync ev/s", "PostgreSQL ÷ JSONL+fsync", "PostgreSQL ÷ bbolt",
		"events per commit", "PostgreSQL p50 / p99", "bbolt p50 / p99", "JSONL p50 / p99")
	for _, a := range r.pg.append {
		t.add(fmt.Sprint(a.sessions), num(a.pg.Median), num(a.bolt.Median), num(a.base.Median), ratioRange(a.pgBase),
			ratioRange(a.pgBolt), num(a.pgPerTx.Median), dur(a.pgP50)+" / "+dur(a.pgP99), dur(a.boltP50)+" / "+dur(a.boltP99),
			dur(a.baseP50)+" / "+dur(a.baseP99))
	}
	t.write(b)
	for _, a := range r.pg.append {
		if a.sessions == 64 {
			verdict := "met"
			if a.pgBase.Median < 5 {
				verdict = "not met"
			}
			fmt.Fprintf(b, "Target of issue 10, 64 sessions ≥ 5× JSONL+fsync: %s (%s).\n\n", verdict, ratio(a.pgBase.Median))
		}
	}
	if s := r.pg.scan; s != nil {
		fmt.Fprintf(b, "Scan: the %s-event generated session, read whole through `Scan` (every record's CRC checked and\n"+
			"decoded), from PostgreSQL (pages of 256 rows, one query each) and from its bbolt store, alternately.\n\n", group(s.events))
		t := newTable("session", "PostgreSQL ev/s", "bbolt ev/s", "PostgreSQL ÷ bbolt")
		t.add(group(s.events)+" events", num(s.pg.Median), num(s.bolt.Median), ratioRange(s.rate))
		t.write(b)
	}
}
