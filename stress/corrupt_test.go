package stress_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/loggen"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/scenario"
)

// TestCorrupt is the corruption sweep (docs/rules.md#store, docs/rules.md#error-classes; style R32): it
// writes a small real store, then damages copies of its file one byte at a
// time (XOR with a random non-zero mask) and checks what a reader of each
// copy sees. Every probe runs in a worker process (TestCorruptWorker), so
// that a probe that kills or hangs its worker is seen and counted as
// refused-crash rather than ending the test. Each probe is one of:
//
//	ok-identical   verify finds nothing, and every session, event and
//	               rebuilt step digest is as in the original
//	detected       verify (verify.CheckStore, then verify.Session on every
//	               session listed) reports a finding or an error with a
//	               class; when the flip is inside an event record, a
//	               finding names that session and seq
//	refused        Open or the session list fails with a classified error
//	refused-crash  the worker died or hung (probeTimeout): tolerated
//	               for at most 1% of the probes, and never when it died
//	               of a Go runtime fatal error (checkptr, out of memory,
//	               a stack overflow …) or hung in this project's code (a
//	               hung worker is sent SIGQUIT, and its goroutine dump
//	               says where the probe was)
//	SILENT         verify finds nothing, yet something reads differently:
//	               a rebuilt digest, an event, the set of sessions
//	MISSED         verify finds nothing, yet reading or rebuilding fails
//
// SILENT and MISSED fail the test, as do errors without a class, record
// damage whose finding does not name the record, and the refused-crash
// cases above. TestCorruptSabotage shows that these checks fire.
//
// By default the sweep is a short sample that fits the package's test
// budget; -sweep.full runs the full structural sweep, and -sweep.all
// every byte. The subtests:
//
//	sweep    positions in the data pages (page 2 on): a random sample
//	         (seed -sweep.seed) of 150 positions and 150 bytes of the
//	         structure that locates sessions and records (page headers,
//	         element arrays, keys and bucket headers of the pages that
//	         hold no event record); with -sweep.full, -sweep.probes (2000)
//	         positions and every byte of that structure; with -sweep.all,
//	         every byte of the data pages
//	meta     the two meta pages: a sample of 40 bytes of both meta
//	         records, 10 of the rest of the pages and 10 of the data
//	         pages; with -sweep.full, every byte of both meta records, 40
//	         and 60; with -sweep.all, every byte of both pages
//	salvage  package salvage, opened as logtool salvage opens a store,
//	         on damaged copies: flips in event records, in the structure of
//	         pages, in the keys of session buckets, anywhere, and the
//	         sweep's probes that the store refused to open. It never changes
//	         the damaged copy, everything it copies verifies clean in the
//	         new store and is the original's prefix, no session of the
//	         original goes missing from a report that says nothing is
//	         wrong, and a flip inside an event record loses exactly that
//	         record and what follows
//
// The counts per class are logged, and printed as one line to quote:
//
//	corrupt: probes=2000 ok-identical=… detected=… refused=… refused-crash=… silent=0
//
// What it finds is reduced to one-flip recipes in corrupt_recipes_test.go,
// which fail until the owner of the code fixes it, and then keep it fixed
// (all four found so far are fixed).
//
// Run it alone with: go test -run 'TestCorrupt$' -v ./stress (add
// -sweep.full for the full sweep; .ci/proofs.sh runs it so). A probe
// "byte OFF ^= MASK" is replayed by hand on the store that -sweep.keep PATH
// writes: the file is the same on every run of the same code.
func TestCorrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("the corruption sweep is skipped under -short")
	}
	st := buildCorruptStore(t)
	if *sweepKeep != "" {
		b, err := os.ReadFile(st.path)
		if err == nil {
			err = os.WriteFile(*sweepKeep, b, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("store: %d bytes, %d pages of %d bytes, sessions %v", st.pm.size, st.pm.size/st.pm.pageSize, st.pm.pageSize, st.ids)
	var refused []probeSpec // the sweep's probes the store refused to open
	t.Run("sweep", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(*sweepSeed, 1))
		var probes []probeSpec
		lo := 2 * st.pm.pageSize
		if *sweepAll {
			for off := lo; off < st.pm.size; off++ {
				probes = append(probes, probeSpec{off: off, mask: 1 + rng.IntN(255)})
			}
		} else {
			n := shortUniform
			if *sweepFull {
				n = *sweepProbes
			}
			probes = sample(rng, lo, st.pm.size, n)
			// The uniform sample mostly hits event records; the bytes that
			// tell bbolt where sessions and records are (the pages of the
			// root, sessions and session buckets, and branch pages) are
			// few, so every one of them is probed too (a sample of them
			// in the short form).
			extra := structural(st.pm)
			all := len(extra)
			if !*sweepFull {
				extra = pick(rng, extra, shortStructural)
			}
			for _, off := range extra {
				probes = append(probes, probeSpec{off: off, mask: 1 + rng.IntN(255)})
			}
			t.Logf("%d uniform probes, and %d of the %d bytes of page headers, elements, keys and bucket headers outside the leaves of events buckets",
				n, len(extra), all)
		}
		t.Logf("seed %d (-sweep.seed), %d probes", *sweepSeed, len(probes))
		for _, o := range runSweep(t, st, "probe", probes) {
			if o.res.Class == classRefused || o.res.Class == classRefusedCrash {
				refused = append(refused, o.spec)
			}
		}
	})
	t.Run("meta", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(*sweepSeed, 2))
		var probes []probeSpec
		if *sweepAll {
			for off := 0; off < 2*st.pm.pageSize; off++ {
				probes = append(probes, probeSpec{off: off, mask: 1 + rng.IntN(255)})
			}
		} else {
			var metas []int
			for _, page := range []int{0, 1} {
				for i := 0; i < bbPageHeader+bbMetaSize; i++ {
					metas = append(metas, page*st.pm.pageSize+i)
				}
			}
			rest, data := 40, 60
			if !*sweepFull {
				metas, rest, data = pick(rng, metas, 40), 10, 10
			}
			for _, off := range metas {
				probes = append(probes, probeSpec{off: off, mask: 1 + rng.IntN(255)})
			}
			probes = append(probes, sample(rng, 0, 2*st.pm.pageSize, rest)...)
			probes = append(probes, sample(rng, 2*st.pm.pageSize, st.pm.size, data)...)
		}
		t.Logf("seed %d (-sweep.seed), %d probes", *sweepSeed, len(probes))
		runSweep(t, st, "probe", probes)
	})
	t.Run("salvage", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(*sweepSeed, 3))
		var records, structure []region
		for _, r := range st.pm.regions {
			switch r.kind {
			case kindEventRecord:
				records = append(records, r)
			case kindPageHeader, kindElements, kindKey, kindBucketValue:
				structure = append(structure, r)
			}
		}
		var probes []probeSpec
		scale := 1 // the full sweep's counts, a quarter of them in the short form
		if !*sweepFull && !*sweepAll {
			scale = 4
		}
		for _, rs := range []struct {
			regions []region
			n       int
		}{{records, 20}, {structure, 15}, {sessionKeys(st.pm), 10}} {
			for i := 0; i < rs.n/scale; i++ {
				r := rs.regions[rng.IntN(len(rs.regions))]
				probes = append(probes, probeSpec{off: r.start + rng.IntN(r.end-r.start), mask: 1 + rng.IntN(255)})
			}
		}
		probes = append(probes, sample(rng, 2*st.pm.pageSize, st.pm.size, 10/scale)...)
		probes = append(probes, refused[:min(len(refused), 20/scale)]...)
		runSweep(t, st, "salvage", probes)
	})
}

var (
	sweepFull   = flag.Bool("sweep.full", false, "TestCorrupt: the full structural sweep rather than the short sample")
	sweepAll    = flag.Bool("sweep.all", false, "TestCorrupt: probe every byte of the data pages")
	sweepProbes = flag.Int("sweep.probes", 2000, "TestCorrupt: random probes in the data pages, with -sweep.full")
	sweepSeed   = flag.Uint64("sweep.seed", 20260102, "TestCorrupt: the seed of the probe positions and masks")
	sweepKeep   = flag.String("sweep.keep", "", "TestCorrupt: copy the original store to this `path`, to replay a probe by hand")
)

// The short form's sample sizes (see TestCorrupt).
const (
	shortUniform    = 150
	shortStructural = 150
)

// probeTimeout is how long a probe may take before its worker counts as
// hung. A probe takes milliseconds, and rarely a second or two under the
// race detector on a busy machine. (A flip of a leaf element's value size
// once made eventlog copy a value of that bogus size, up to 4 GiB, until
// the read faulted past the memory map: under the race detector 30 s and
// 5–8 GB per probe. eventlog now refuses a value outside the store's
// pages before reading it.)
const probeTimeout = time.Minute

// sweepWorkers is how many probes run at once.
const sweepWorkers = 2

// corruptStore is the original store of the sweep.
type corruptStore struct {
	path string
	dir  string // scratch for the workers
	ids  []string
	pm   *pageMap
}

// probeSpec is one flip: the byte at off XOR mask.
type probeSpec struct {
	off, mask int
}

// sessionKeys returns the regions of the keys of session buckets (events,
// head, header).
func sessionKeys(pm *pageMap) []region {
	var out []region
	for _, r := range pm.regions {
		if r.kind == kindKey && r.session != "" && r.seq < 0 {
			out = append(out, r)
		}
	}
	return out
}

// structural returns every byte of page headers, elements, keys and bucket
// headers in pages that hold no event record.
func structural(pm *pageMap) []int {
	records := map[int]bool{} // pages holding event records
	for _, r := range pm.regions {
		if r.kind == kindEventRecord {
			for p := r.start / pm.pageSize; p <= (r.end-1)/pm.pageSize; p++ {
				records[p] = true
			}
		}
	}
	var offs []int
	for _, r := range pm.regions {
		switch r.kind {
		case kindPageHeader, kindElements, kindKey, kindBucketValue:
			if !records[r.start/pm.pageSize] {
				for off := r.start; off < r.end; off++ {
					offs = append(offs, off)
				}
			}
		}
	}
	return offs
}

// sample returns n distinct random positions in [lo, hi) with random
// non-zero masks, in file order (all of them when n ≥ hi-lo).
func sample(rng *rand.Rand, lo, hi, n int) []probeSpec {
	offs := map[int]bool{}
	if n >= hi-lo {
		for off := lo; off < hi; off++ {
			offs[off] = true
		}
	}
	for len(offs) < n {
		offs[lo+rng.IntN(hi-lo)] = true
	}
	out := make([]probeSpec, 0, len(offs))
	for off := range offs {
		out = append(out, probeSpec{off: off})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].off < out[j].off })
	for i := range out {
		out[i].mask = 1 + rng.IntN(255)
	}
	return out
}

// The scenarios of the store: tool calls (one with a result large enough
// for an overflow page), prompt, tool and config changes, an injection and
// a prefix; a small context window that compacts often.
const (
	toolsScenario = `{"session":"tools-1",
 "config":{"provider":"p","model":"m-1","temperature":0.2,"maxTokens":4096},
 "system":"You are a coding assistant.\nKeep answers short.",
 "tools":[{"name":"read_file","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}}},
   {"name":"run_tests","description":"Run tests.","parameters":{"type":"object","properties":{"pkg":{"type":"string"}},"x-order":[2,1]}}],
 "prefix":[[{"role":"user","content":[{"type":"text","text":"<workspace>AGENTS.md: small Go library.</workspace>"}]}]],
 "turns":[
  {"prompt":"Why does TestParse fail?",
   "replies":[[{"type":"reasoning","text":"Run the tests first."},{"type":"tool-call","id":"c1","name":"run_tests","arguments":"{\"pkg\":\"./x\"}"}],
     [{"type":"text","text":"It stops after the first unit; loop over every pair."}]],
   "toolResults":{"c1":{"content":[{"type":"text","text":"BIG"}]}}},
  {"prompt":"Apply the fix.","system":"You are a coding assistant.\nKeep answers short.\nEdit mode.",
   "inject":["duration.go changed on disk."],
   "replies":[[{"type":"tool-call","id":"c2","name":"read_file","arguments":"{\"path\":\"d.go\"}"}],[{"type":"text","text":"Done."}]],
   "toolResults":{"c2":{"content":[{"type":"text","text":"package x\n\nfunc Parse() {}"}],"isError":false}}},
  {"prompt":"Again, with other settings.","config":{"provider":"p","model":"m-2","temperature":0.7},
   "tools":[{"name":"run_tests","description":"Run tests.","parameters":{"type":"object"}},{"name":"read_file","description":"Read a file.","parameters":{"type":"object"}}],
   "replies":[[{"type":"tool-call","id":"c3","name":"run_tests","arguments":"{}"}],[{"type":"text","text":"All pass."}]]}]}`

	compactScenario = `{"session":"compact-1","system":"Be brief.",
 "compaction":{"contextWindow":300,"thresholdRatio":0.6,"retainTokens":60,"charsPerToken":4,"summary":"Earlier: the user asked about files; the answers listed them."},
 "turns":[
  {"prompt":"List the files of the project and say what each is for, in detail please.","replies":[[{"type":"text","text":"a.go parses durations, b.go formats them, c.go holds helpers used by both of them."}]]},
  {"prompt":"Now explain a.go line by line, with every corner case you can think of.","replies":[[{"type":"text","text":"It splits the input into number and unit pairs and sums them; an empty input is an error."}]]},
  {"prompt":"And b.go, the same way, with the corner cases too.","replies":[[{"type":"text","text":"It prints the largest unit first and drops zero units, except for a zero duration."}]]},
  {"prompt":"Summarise everything so far in one sentence.","replies":[[{"type":"text","text":"Durations are parsed by summing unit pairs and printed largest unit first."}]]},
  {"prompt":"One more question about c.go and its helpers, in detail.","replies":[[{"type":"text","text":"c.go has the unit table and a function that looks units up by name."}]]}]}`

	resumeScenario = `{"config":{"provider":"p","model":"m-2"},"system":"Resumed.",
 "turns":[{"prompt":"Resume and check.","replies":[[{"type":"text","text":"Checked."}]]}]}`
)

// buildCorruptStore writes the sweep's store: three loop sessions (one
// resumed, one compacting), a fork child that went on, and a generated
// DSH-like log imported. The clock is fixed, so the file is the same on
// every run of the same code.
func buildCorruptStore(t *testing.T) *corruptStore {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "sessions.db")
	l, err := boltlog.Open(path, &eventlog.Options{NoSync: true,
		NewValidator: rebuild.NewValidator}, nil)

	if err != nil {
		t.Fatal(err)
	}
	clock := float64(1767225600000)
	now := func() float64 { clock += 7; return clock }
	run := func(js, session string) {
		t.Helper()
		sc, err := scenario.Parse([]byte(js))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := scenario.Run(ctx, l, sc, scenario.Options{Session: session, Now: now}); err != nil {
			t.Fatalf("scenario %s: %v", session, err)
		}
	}
	// A tool result of ~9 KB: its record spans an overflow page.
	run(strings.Replace(toolsScenario, "BIG", strings.Repeat("--- FAIL: TestParse (0.00s) want 1h30m\\n", 220), 1), "")
	run(compactScenario, "")
	run(resumeScenario, "tools-1")
	head, err := l.Head(ctx, "tools-1")
	if err != nil {
		t.Fatal(err)
	}
	at := lastTurnEnd(t, l, "tools-1", head.Next)
	if err := l.Fork(ctx, "tools-1", at, codec.NewSessionHeader("fork-1", now(), "/home/dev", "tools-1", at+1)); err != nil {
		t.Fatal(err)
	}
	run(resumeScenario, "fork-1")
	h, evs, err := loggen.Session(7, loggen.Options{Events: 300, Realistic: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Import(ctx, h, &eventSource{evs: evs}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := mapPages(b)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	ids, err := ro.SessionIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &corruptStore{path: path, dir: dir, ids: ids, pm: pm}
}

// lastTurnEnd returns the seq of the last turn/end before seq end.
func lastTurnEnd(t *testing.T, l *boltlog.Log, id string, end int64) int64 {
	t.Helper()
	it, err := l.Scan(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	at := int64(-1)
	for seq := int64(0); seq < end; seq++ {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == codec.TypeTurnEnd {
			at = ev.Seq
		}
	}
	return at
}

// eventSource is an eventlog.Source over events.
type eventSource struct{ evs []codec.Event }

func (s *eventSource) Next() (codec.Event, error) {
	if len(s.evs) == 0 {
		return codec.Event{}, io.EOF
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	return ev, nil
}

// outcome is a probe with its result and where it landed.
type outcome struct {
	spec   probeSpec
	region region
	res    probeResult
	crash  workerCrash   // for refused-crash: how the worker died
	took   time.Duration // wall time of the probe, its worker's start excluded
}

// pick returns n of offs chosen at random, in their order (all of them
// when n >= len(offs)).
func pick(rng *rand.Rand, offs []int, n int) []int {
	if n >= len(offs) {
		return offs
	}
	idx := rng.Perm(len(offs))[:n]
	sort.Ints(idx)
	out := make([]int, n)
	for i, j := range idx {
		out[i] = offs[j]
	}
	return out
}

// runSweep runs the probes (mode "probe" or "salvage") on sweepWorkers
// workers and checks and reports the outcomes.
func runSweep(t *testing.T, st *corruptStore, mode string, probes []probeSpec) []outcome {
	outs := runProbes(t, st, mode, probes, workerOpts{timeout: probeTimeout})
	if mode == "salvage" {
		checkSalvage(t, outs)
	} else {
		report(t, outs)
	}
	for _, p := range crashProblems(outs) {
		t.Error(p)
	}
	return outs
}

// workerOpts are how workers run: their extra environment, and how long a
// probe may take.
type workerOpts struct {
	env     []string
	timeout time.Duration
}

// runProbes runs the probes on sweepWorkers workers and returns their
// outcomes.
func runProbes(t *testing.T, st *corruptStore, mode string, probes []probeSpec, wo workerOpts) []outcome {
	outs := make([]outcome, len(probes))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < sweepWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var wk *worker
			defer func() {
				if wk != nil {
					wk.stop()
				}
			}()
			done := 0
			for i := range next {
				p := probes[i]
				outs[i].spec, outs[i].region = p, st.pm.at(p.off)
				if wk == nil || done == workerProbes {
					if wk != nil {
						wk.stop()
					}
					var err error
					if wk, err = startWorker(t, st, wo.env); err != nil {
						t.Errorf("probe %d not run: %v", i, err)
						outs[i].res.Class = "not-run"
						continue
					}
					done = 0
				}
				start := time.Now()
				res, crash := wk.do(fmt.Sprintf("%s %d %d %d", mode, i, p.off, p.mask), wo.timeout)
				outs[i].took = time.Since(start)
				done++
				if crash.why != "" {
					outs[i].res.Class, outs[i].crash = classRefusedCrash, crash
					wk.stop()
					wk = nil
					continue
				}
				outs[i].res = res
			}
		}()
	}
	for i := range probes {
		next <- i
	}
	close(next)
	wg.Wait()
	return outs
}

// workerProbes is how many probes a worker runs before it is replaced,
// so that what damaged opens leak (a memory map left by a panic inside
// bbolt's Open) stays bounded.
const workerProbes = 400
