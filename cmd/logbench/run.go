package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/atomicfile"
)

// Exit codes.
const (
	exitOK      = 0 // every measurement was taken and the report written
	exitFailure = 1 // a measurement or the report failed
	exitUsage   = 2 // the command line could not be run
)

// config is what one run measures, from the flags.
// sectionKeys name the report's sections for -only, in the order they run.
var sectionKeys = []string{"durable", "walopen", "codec", "sealed", "sessions", "verify", "memory", "ui", "uimem", "space", "wire", "stream", "transcripts", "gateway", "redact", "pg"}

// runs reports whether section key is to be measured: every one without
// -only; with it, those named and the generated sessions that verify,
// memory, ui and space measure.
func (c config) runs(key string) bool {
	if c.only == "" {
		return true
	}
	named := strings.Split(c.only, ",")
	if key == "sessions" {
		return slices.ContainsFunc(named, func(k string) bool {
			return k == "sessions" || k == "verify" || k == "memory" || k == "ui" || k == "space" || k == "pg"
		})
	}
	return slices.Contains(named, key)
}

type config struct {
	only      string        // comma-separated section keys; "" runs all
	out       string        // report file; "-" prints only
	dir       string        // where stores and JSONL files go
	quick     bool          // small sizes, short rounds
	rounds    int           // rounds each figure is the median of
	roundTime time.Duration // one durable round of one side
	// minTime is the least time one timed sample of a short operation
	// (a codec call, a small verify) runs for: the operation repeats
	// until it is reached.
	minTime time.Duration
	// slice is the least length of one batch of calls when two
	// operations are timed interleaved (timePair).
	slice time.Duration
	// sizes are the event counts of the generated sessions, ascending;
	// the naive rebuild runs on all but the largest.
	sizes []int
	// pool is the number of distinct events the durable rounds append
	// from (a session that reaches it is replaced by a new one).
	pool int
	// pg is the PostgreSQL server of the PostgreSQL section; "" skips it.
	pg string
	// args is the command line, for the report.
	args []string
	// cpuProfile, if set, is where the CPU profile of the whole run is
	// written (go tool pprof reads it).
	cpuProfile string
}

// defaults of the full run and of -quick.
var (
	fullSizes  = []int{1000, 10000, 100000}
	quickSizes = []int{300, 1000, 3000}
)

// verifyMinTime is the least time each side of a verify pair runs for:
// longer than a codec sample, since one run of the largest session or of
// the naive rebuild takes a good part of a second, and the ratio needs
// several alternations to average out the load of other processes.
func (c config) verifyMinTime() time.Duration { return 5 * c.minTime }

// parseFlags reads the command line into a config.
func parseFlags(args []string, stdout io.Writer) (config, error) {
	fs := flag.NewFlagSet("logbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c config
	fs.StringVar(&c.out, "o", "BENCHMARKS.md", "write the report to `FILE` (\"-\": print it only)")
	fs.StringVar(&c.dir, "dir", "", "write the stores and JSONL files under `DIR`, the disk under test (default: the system temp directory)")
	fs.StringVar(&c.pg, "pg", os.Getenv("LOGBENCH_PG"), "measure the PostgreSQL store on the server at `URL` (postgres://…; default $LOGBENCH_PG), in a schema of its own")
	fs.BoolVar(&c.quick, "quick", false, "small sizes and short rounds: a smoke test, not a measurement")
	fs.IntVar(&c.rounds, "rounds", 0, "rounds each figure is the median of (default 5, 2 with -quick)")
	fs.DurationVar(&c.roundTime, "round-time", 0, "length of one durable round of one side (default 2s, 100ms with -quick)")
	fs.StringVar(&c.only, "only", "", "run only the comma-separated `SECTIONS` ("+strings.Join(sectionKeys, ", ")+") and print the report (never written to a file)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to `FILE`")
	fs.Usage = func() {} // Parse calls it on every error; help is printed below
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: logbench [flags]\n\n"+
				"Measures sessionlog against its baselines (durable appends against JSONL+fsync,\n"+
				"verify against the naive rebuild, the codec against encoding/json, bytes on disk,\n"+
				"replay memory) and writes the tables to BENCHMARKS.md. Run it from the\n"+
				"repository root on an otherwise idle machine.\n\nFlags:\n")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return c, err
		}
		return c, usagef("%s", errors.Safe(err.Error()))
	}
	if fs.NArg() > 0 {
		return c, usagef("unexpected argument %q", errors.Safe(fs.Arg(0)))
	}
	switch {
	case c.rounds < 0:
		return c, usagef("-rounds must be at least 1")
	case c.rounds == 0 && c.quick:
		c.rounds = 2
	case c.rounds == 0:
		c.rounds = 5
	}
	switch {
	case c.roundTime < 0:
		return c, usagef("-round-time must be positive")
	case c.roundTime == 0 && c.quick:
		c.roundTime = 100 * time.Millisecond
	case c.roundTime == 0:
		c.roundTime = 2 * time.Second
	}
	if c.out == "" {
		return c, usagef("-o must name a file, or - to print only")
	}
	if c.only != "" {
		outSet := false
		fs.Visit(func(f *flag.Flag) { outSet = outSet || f.Name == "o" })
		if outSet && c.out != "-" {
			return c, usagef("-only never writes a report file (a partial report would replace the whole one): drop -o")
		}
		c.out = "-"
		for _, k := range strings.Split(c.only, ",") {
			if !slices.Contains(sectionKeys, k) {
				return c, usagef("-only: unknown section %q (sections: %s)", errors.Safe(k), errors.Safe(strings.Join(sectionKeys, ", ")))
			}
		}
	}
	if c.dir == "" {
		c.dir = os.TempDir()
	}
	c.sizes, c.minTime, c.slice, c.pool = fullSizes, 300*time.Millisecond, 10*time.Millisecond, 4096
	if c.quick {
		c.sizes, c.minTime, c.slice, c.pool = quickSizes, 10*time.Millisecond, 2*time.Millisecond, 512
	}
	c.args = args
	return c, nil
}

// run runs logbench with the command line args and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err == nil {
		err = measure(ctx, c, stdout, stderr)
	}
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "logbench: %s\n", strings.TrimPrefix(err.Error(), "logbench: "))
	if hints := errors.FlattenHints(err); hints != "" {
		for _, h := range strings.Split(hints, "\n--\n") {
			fmt.Fprintf(stderr, "hint: %s\n", h)
		}
	}
	if errors.Is(err, ErrUsage) {
		fmt.Fprintln(stderr, "hint: run 'logbench -h' for usage")
		return exitUsage
	}
	return exitFailure
}

// measure takes every measurement of c, then prints and writes the report.
func measure(ctx context.Context, c config, stdout, stderr io.Writer) error {
	if fi, err := os.Stat(c.dir); err != nil || !fi.IsDir() {
		return usagef("-dir %s is not a directory", errors.Safe(c.dir))
	}
	work, err := os.MkdirTemp(c.dir, "logbench-")
	if err != nil {
		return errors.Wrap(err, "logbench: work directory")
	}
	defer os.RemoveAll(work)
	if c.cpuProfile != "" {
		f, err := os.OpenFile(c.cpuProfile, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return errors.Wrap(err, "logbench: CPU profile")
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return errors.Wrap(err, "logbench: CPU profile")
		}
		defer pprof.StopCPUProfile()
	}

	r := &report{cfg: c, started: time.Now(), machine: describeMachine(work)}
	p := progress{w: stderr}
	p.printf("load average %s; work directory %s", r.machine.loadStart, work)

	sections := []struct {
		key, name string
		fn        func() error
	}{
		{"durable", "durable appends", func() (err error) { r.durable, err = measureDurable(ctx, c, work, p); return err }},
		{"walopen", "write-ahead log open", func() error {
			pool, _, err := messagePool(c)
			if err == nil {
				var w walOpenResult
				w, err = measureWALOpen(ctx, c, work, pool, p)
				r.walOpen = &w
			}
			return err
		}},
		{"codec", "codec", func() (err error) { r.codec, err = measureCodec(ctx, c, p); return err }},
		{"sealed", "sealed frames", func() (err error) { r.sealed, err = measureSealed(ctx, c, p); return err }},
		{"sessions", "sessions", func() (err error) { r.sessions, err = buildSessions(ctx, c, work, p); return err }},
		{"verify", "verify", func() (err error) { r.verify, r.scale, err = measureVerify(ctx, c, r.sessions, p); return err }},
		{"memory", "memory", func() (err error) {
			r.memory, err = measureMemory(ctx, c, r.sessions, p)
			return err
		}},
		{"ui", "audit UI", func() (err error) { r.ui, err = measureUI(ctx, c, r.sessions, p); return err }},
		{"uimem", "audit UI memory", func() (err error) { r.uiMem, err = measureUIMemory(ctx, c, work, p); return err }},
		{"space", "bytes on disk", func() (err error) {
			if r.space, err = measureSpace(ctx, r.sessions, r.durable); err != nil {
				return err
			}
			cs, err := measureCorpusSpace(ctx, work, p)
			if cs != nil {
				r.space = append(r.space, *cs)
			}
			return err
		}},
		{"wire", "wire", func() (err error) { r.wire, err = measureWire(ctx, c, p); return err }},
		{"stream", "memory while streaming", func() (err error) { r.streamMem, err = measureStreamMemory(ctx, c, work, p); return err }},
		{"transcripts", "transcript import", func() (err error) { r.transcripts, err = measureTranscripts(ctx, c, work, p); return err }},
		{"gateway", "recording gateway", func() (err error) {
			if r.gateway, err = measureGateway(ctx, work, p); err != nil {
				return err
			}
			r.gatewayLoad, err = measureGatewayLoad(ctx, c, work, p)
			return err
		}},
		{"redact", "redaction", func() (err error) { r.redact, err = measureRedact(ctx, c, p); return err }},
		{"pg", "PostgreSQL", func() (err error) { r.pg, err = measurePostgres(ctx, c, work, r.sessions, p); return err }},
	}
	defer func() {
		for _, s := range r.sessions {
			s.close()
		}
	}()
	for _, s := range sections {
		if err := ctx.Err(); err != nil {
			return errors.Wrap(err, "logbench: interrupted")
		}
		if !c.runs(s.key) {
			continue
		}
		p.printf("%s…", s.name)
		if err := s.fn(); err != nil {
			return errors.Wrapf(err, "logbench: %s", errors.Safe(s.name))
		}
	}
	r.elapsed = time.Since(r.started)
	r.machine.loadEnd = loadAverage()

	doc := r.markdown()
	if _, err := io.WriteString(stdout, doc); err != nil {
		return errors.Wrap(err, "logbench: stdout")
	}
	if c.out == "-" {
		return nil
	}
	// BENCHMARKS.md holds figures, no session content: readable like the
	// rest of a checkout.
	err = atomicfile.Write(c.out, "logbench: write", 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, doc)
		return errors.Wrapf(err, "logbench: write %s", errors.Safe(c.out))
	})
	if err != nil {
		return err
	}
	p.printf("wrote %s", c.out)
	return nil
}

// progress writes progress lines on stderr.
type progress struct{ w io.Writer }

func (p progress) printf(format string, args ...interface{}) {
	fmt.Fprintf(p.w, "logbench: "+format+"\n", args...)
}
