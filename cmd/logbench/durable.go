package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/rebuild"
)

// durableMode is one workload of the durable append measurement.
type durableMode struct {
	name      string
	sessions  int // concurrent sessions, one goroutine each
	perCommit int // events per Append
}

var durableModes = []durableMode{
	{name: "1 session, 1 event per commit", sessions: 1, perCommit: 1},
	{name: "1 session, 100 events per commit", sessions: 1, perCommit: 100},
	{name: "64 sessions, 1 event per commit (group commit)", sessions: 64, perCommit: 1},
}

// durableResult is what the rounds of one mode measured.
type durableResult struct {
	mode durableMode
	// ours and base are events per second, per round; ratio is ours ÷
	// base, per round.
	ours, base, ratio stat
	// perTx is events per group commit (write-ahead log record; median
	// over rounds).
	perTx stat
	// The median and 99th percentile latencies of one Append call and of
	// one line's write+fsync, over every call of every round.
	oursP50, oursP99, baseP50, baseP99 time.Duration
	// The store and the JSONL file after the last round, for the bytes
	// on disk section.
	events, records, fileSize, highWater, lineBytes, lines int64
}

// messageText is the prose of the benchmark's assistant message.
var messageText = strings.Repeat("The function reads the session log and rebuilds the request; "+
	"it never needs the whole log in memory. ", 8)

// messageLine is the JSON line (no newline) of a realistic ~1 KB
// assistant/message: text, a tool call, provenance and usage.
func messageLine(seq int64) []byte {
	return fmt.Appendf(nil, `{"type":"assistant/message","seq":%d,"time":%d,"data":{"turn":1,"step":%d,`+
		`"content":[{"type":"text","text":%q},{"type":"tool-call","id":"call_%08d","name":"read_file",`+
		`"arguments":"{\"path\":\"internal/store/log.go\",\"offset\":120,\"limit\":80}"}],`+
		`"provenance":{"provider":"deepseek","model":"deepseek-chat"},`+
		`"usage":{"inputTokens":18342,"outputTokens":412,"cacheReadTokens":17920}},`+
		`"sourceEventSeqs":[],"surfaceOp":"append"}`,
		seq, 1767225600000+seq*731, seq+1, messageText, seq)
}

// messagePool returns c.pool distinct assistant/message events and their
// JSON lines (with the newline).
func messagePool(c config) ([]codec.Event, [][]byte, error) {
	pool := make([]codec.Event, c.pool)
	lines := make([][]byte, c.pool)
	for i := range pool {
		l := messageLine(int64(i))
		ev, err := codec.ParseEvent(l, codec.Limits{})
		if err != nil {
			return nil, nil, errors.Wrap(err, "benchmark event")
		}
		pool[i], lines[i] = ev, append(l, '\n')
	}
	return pool, lines, nil
}

// validator is what writers pass the store: every rule of the log
// (docs/rules.md#appends), as logtool import and the loop do.
var validator = rebuild.NewValidator

// measureDurable runs the rounds of every durable mode.
func measureDurable(ctx context.Context, c config, work string, p progress) ([]durableResult, error) {
	pool, lines, err := messagePool(c)
	if err != nil {
		return nil, err
	}
	var out []durableResult
	for i, m := range durableModes {
		dir := filepath.Join(work, fmt.Sprintf("durable-%d", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, errors.Wrap(err, "durable")
		}
		res, err := runDurableMode(ctx, c, m, dir, pool, lines, p)
		if err != nil {
			return nil, errors.Wrapf(err, "%s", errors.Safe(m.name))
		}
		out = append(out, res)
		// The store and file of a mode are not needed once measured.
		if err := os.RemoveAll(dir); err != nil {
			return nil, errors.Wrap(err, "durable")
		}
	}
	return out, nil
}

// durableSlice is the longest one side runs inside a round before the
// other takes over: a round alternates baseline and store slices, so
// that a burst of load from other processes weighs on both alike.
const durableSlice = 250 * time.Millisecond

// runDurableMode runs c.rounds rounds of one mode in one store and one
// JSONL file. A round alternates slices of the baseline and of the store,
// baseline first, until each has run for c.roundTime; its ratio is the
// store's rate ÷ the baseline's over the round.
func runDurableMode(ctx context.Context, c config, m durableMode, dir string, pool []codec.Event, lines [][]byte, p progress) (durableResult, error) {
	res := durableResult{mode: m}
	st, err := boltlog.Open(filepath.Join(dir, "sessions.db"), &eventlog.Options{NewValidator: validator}, nil)
	if err != nil {
		return res, err
	}
	defer st.Close()
	base, err := os.OpenFile(filepath.Join(dir, "baseline.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return res, errors.Wrap(err, "baseline")
	}
	defer base.Close()
	d := &durableRun{ctx: ctx, st: st, mode: m, pool: pool}
	slice := min(c.roundTime, durableSlice)
	var ours, bases, ratios, perTx []float64
	var baseLat []time.Duration
	next := 0
	for r := range c.rounds {
		if err := d.startRound(); err != nil {
			return res, err
		}
		var bTook, oTook time.Duration
		var bLines, oEvents, oTx int64
		for bTook < c.roundTime || oTook < c.roundTime {
			n, took, lat, err := baselineSlice(ctx, base, lines, &next, slice)
			if err != nil {
				return res, err
			}
			bLines, bTook, baseLat = bLines+n, bTook+took, append(baseLat, lat...)
			ev, took, tx, err := d.slice(slice)
			if err != nil {
				return res, err
			}
			// The store's slice is charged with applying what it wrote
			// to the tree (the applier's work, which otherwise runs in
			// the background, during the baseline's slice too).
			t0 := time.Now()
			if err := st.Checkpoint(); err != nil {
				return res, err
			}
			took += time.Since(t0)
			oEvents, oTook, oTx = oEvents+ev, oTook+took, oTx+tx
		}
		res.lines += bLines
		bRate, oRate := float64(bLines)/bTook.Seconds(), float64(oEvents)/oTook.Seconds()
		bases, ours, ratios = append(bases, bRate), append(ours, oRate), append(ratios, oRate/bRate)
		perTx = append(perTx, float64(oEvents)/float64(max(1, oTx)))
		p.printf("  %s, round %d/%d: %s ev/s, JSONL+fsync %s ev/s: %s", m.name, r+1, c.rounds, num(oRate), num(bRate), ratio(oRate/bRate))
	}
	res.ours, res.base, res.ratio, res.perTx = summarize(ours), summarize(bases), summarize(ratios), summarize(perTx)
	res.oursP50, res.baseP50 = percentile(d.lat, 50), percentile(baseLat, 50)
	res.oursP99, res.baseP99 = percentile(d.lat, 99), percentile(baseLat, 99)

	heads, err := st.Sessions(ctx)
	if err != nil {
		return res, err
	}
	for _, h := range heads {
		res.events += h.Next
		res.records += h.StoredBytes
	}
	if err := st.Close(); err != nil {
		return res, err
	}
	fi, err := os.Stat(filepath.Join(dir, "sessions.db"))
	if err != nil {
		return res, errors.Wrap(err, "store size")
	}
	res.fileSize = fi.Size()
	if res.highWater, err = highWater(filepath.Join(dir, "sessions.db")); err != nil {
		return res, err
	}
	bi, err := base.Stat()
	if err != nil {
		return res, errors.Wrap(err, "baseline size")
	}
	res.lineBytes = bi.Size()
	return res, nil
}

// baselineSlice writes lines (cycling from *next) to f, each followed by
// an fsync, for d, and returns the number of lines written, the time
// taken and the latency of each write+fsync.
func baselineSlice(ctx context.Context, f *os.File, lines [][]byte, next *int, d time.Duration) (int64, time.Duration, []time.Duration, error) {
	var lat []time.Duration
	start := time.Now()
	for time.Since(start) < d {
		if err := ctx.Err(); err != nil {
			return 0, 0, nil, err
		}
		t0 := time.Now()
		if _, err := f.Write(lines[*next]); err != nil {
			return 0, 0, nil, errors.Wrap(err, "baseline write")
		}
		if err := f.Sync(); err != nil {
			return 0, 0, nil, errors.Wrap(err, "baseline fsync")
		}
		lat = append(lat, time.Since(t0))
		*next = (*next + 1) % len(lines)
	}
	return int64(len(lat)), time.Since(start), lat, nil
}

// appender is the store a durableRun appends to: the bbolt Log, or the
// PostgreSQL store.
type appender interface {
	Create(ctx context.Context, h codec.SessionHeader) error
	Append(ctx context.Context, session string, events []codec.Event) error
	CommitStats() (transactions, writes int64)
}

// durableRun appends a mode's rounds to one store.
type durableRun struct {
	ctx      context.Context
	st       appender
	mode     durableMode
	pool     []codec.Event
	sessions int      // sessions created so far
	ids      []string // the round's sessions, one per goroutine
	seqs     []int    // each session's next seq
	lat      []time.Duration
	mu       sync.Mutex // guards lat during a concurrent slice
}

// newSession creates the next session of the run. It costs a commit, so
// it is never timed.
func (d *durableRun) newSession() (string, error) {
	id := fmt.Sprintf("bench-%05d", d.sessions)
	d.sessions++
	return id, d.st.Create(d.ctx, codec.NewSessionHeader(id, 1767225600000, "/home/dev/project", "", 0))
}

// startRound creates the round's sessions.
func (d *durableRun) startRound() error {
	d.ids, d.seqs = make([]string, d.mode.sessions), make([]int, d.mode.sessions)
	for i := range d.ids {
		var err error
		if d.ids[i], err = d.newSession(); err != nil {
			return err
		}
	}
	return nil
}

// slice runs the store for one slice and returns the events appended,
// the time they took and the write transactions that committed them.
func (d *durableRun) slice(dur time.Duration) (int64, time.Duration, int64, error) {
	if d.mode.sessions == 1 {
		return d.serialSlice(dur)
	}
	return d.concurrentSlice(dur)
}

// serialSlice appends from one goroutine until its Append calls have
// taken dur in total. Only the Append calls are timed: when the session
// has used up the pool, a new one is created between two of them.
func (d *durableRun) serialSlice(dur time.Duration) (int64, time.Duration, int64, error) {
	var busy time.Duration
	var events, creates int64
	tx0, _ := d.st.CommitStats()
	for busy < dur {
		if err := d.ctx.Err(); err != nil {
			return 0, 0, 0, err
		}
		if d.seqs[0]+d.mode.perCommit > len(d.pool) {
			id, err := d.newSession()
			if err != nil {
				return 0, 0, 0, err
			}
			d.ids[0], d.seqs[0] = id, 0
			creates++
		}
		seq := d.seqs[0]
		t0 := time.Now()
		if err := d.st.Append(d.ctx, d.ids[0], d.pool[seq:seq+d.mode.perCommit]); err != nil {
			return 0, 0, 0, err
		}
		took := time.Since(t0)
		busy += took
		d.lat = append(d.lat, took)
		d.seqs[0] += d.mode.perCommit
		events += int64(d.mode.perCommit)
	}
	tx1, _ := d.st.CommitStats()
	return events, busy, tx1 - tx0 - creates, nil
}

// concurrentSlice lets one goroutine per session of the round append at
// once, one Append after the other each, for dur of wall time. A session
// that has used up the pool stops early (it would need more than
// pool × sessions ÷ round time events per second, far beyond a durable
// store).
func (d *durableRun) concurrentSlice(dur time.Duration) (int64, time.Duration, int64, error) {
	var events atomic.Int64
	errs := make([]error, len(d.ids))
	var wg sync.WaitGroup
	tx0, _ := d.st.CommitStats()
	start := time.Now()
	deadline := start.Add(dur)
	for i, id := range d.ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			defer func() {
				d.mu.Lock()
				d.lat = append(d.lat, lat...)
				d.mu.Unlock()
			}()
			for d.seqs[i]+d.mode.perCommit <= len(d.pool) && time.Now().Before(deadline) {
				if err := d.ctx.Err(); err != nil {
					errs[i] = err
					return
				}
				seq := d.seqs[i]
				t0 := time.Now()
				if err := d.st.Append(d.ctx, id, d.pool[seq:seq+d.mode.perCommit]); err != nil {
					errs[i] = err
					return
				}
				lat = append(lat, time.Since(t0))
				d.seqs[i] += d.mode.perCommit
				events.Add(int64(d.mode.perCommit))
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	tx1, _ := d.st.CommitStats()
	if err := errors.Join(errs...); err != nil {
		return 0, 0, 0, err
	}
	return events.Load(), took, tx1 - tx0, nil
}
