package stress

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/pglog"
	"github.com/sessionlog/sessionlog/internal/loggen"
	"github.com/sessionlog/sessionlog/loop"
)

// TestCrashChild is the child process of TestCrash: it drives the loop on
// the sessions it is given until it is killed, reporting every durable
// event on stdout. Run directly, it skips.
func TestCrashChild(t *testing.T) {
	if os.Getenv(envRole) != "crash" {
		t.Skip("the child process of TestCrash; runs only when TestCrash starts it")
	}
	seed, err := strconv.ParseInt(os.Getenv(envSeed), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	ids := strings.Split(os.Getenv(envIDs), ",")
	opts := storeOptions()
	opts.ImportBatch = crashImportBatch
	if seed%2 == 0 {
		// Half the children keep too few validator states for their
		// sessions, so appends keep rebuilding them from the store.
		opts.ValidatorCache = crashSmallCache
	}
	d := &durable{w: os.Stdout}
	target := os.Getenv(envStore)
	bopts := storeBoltOptions()
	if !pglog.IsURL(target) {
		bopts.WAL = childWAL(seed)
		opts.Logger = slog.New(walLines{d})
	}
	st, err := openTarget(target, opts, bopts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d.store = st
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watchStdin(cancel)
	if err := d.say([]byte("start\n")); err != nil {
		t.Fatal(err)
	}
	if os.Getenv(envSabotage) == "stall" {
		<-ctx.Done() // until killed, or told to finish
		return
	}
	stop := make(chan struct{})
	go func() { // commit stats, so the parent can tell that group commits happened
		tick := time.NewTicker(crashStatsEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				tx, writes := st.CommitStats()
				_ = d.say(fmt.Appendf(nil, "commits %d %d\n", tx, writes))
			}
		}
	}()
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := drive(ctx, d, newWorkload(id, seed+int64(i), false /* calm */))
			if err != nil && ctx.Err() == nil {
				// Say it on stdout too: the parent's kill may win the
				// race with this exit.
				_ = d.say(fmt.Appendf(nil, "fatal %s\n", strings.ReplaceAll(fmt.Sprintf("%+v", err), "\n", " | ")))
				fmt.Fprintf(os.Stderr, "session %s: %+v\n", id, err)
				os.Exit(3)
			}
		}()
	}
	wg.Wait()
	close(stop)
}

// drive runs turns of w over d until ctx is done; after one turn in
// crashStagedEvery it forks the session at its last turn/end, or imports
// a generated session, both staged in several transactions, and after one
// in crashRestartEvery it disposes of the loop instance and opens a new
// one (a restart within the process). Meanwhile another goroutine injects
// context and steers at random moments, as a host's plugins do (queued
// during a turn, a turn of its own between). It does not dispose of the
// instance mid-turn, nor cancel at random moments: a turn cancelled at
// the wrong moment once failed Send or was logged as an invariant error
// (TestCancelAtEveryCommit, fixed since), and turns are still cancelled
// only from the provider and the tools: the workload was not widened.
func drive(ctx context.Context, d *durable, w *workload) error {
	if err := w.open(ctx, d); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		for {
			pause := time.NewTimer(crashInjectEvery/2 + time.Duration(w.rng.Intn(int(crashInjectEvery))))
			select {
			case <-ctx.Done():
				pause.Stop()
				return
			case <-pause.C:
			}
			var err error
			w.quiet.RLock()
			switch w.rng.Intn(4) {
			case 0:
				err = w.loop().Steer(loop.Text("async steer: "+w.words(3)), loop.User)
			default:
				err = w.loop().Inject(ctx, loop.Text("async: "+w.words(6)), loop.Plugin("async"))
			}
			w.quiet.RUnlock()
			if err != nil && !errors.Is(err, loop.ErrDisposed) && ctx.Err() == nil {
				cancel(errors.Wrapf(err, "session %s: async inject", errors.Safe(w.id)))
				return
			}
		}
	}()
	for ctx.Err() == nil {
		out, err := w.turn(ctx)
		disposed := errors.Is(err, loop.ErrDisposed) || (err == nil && out.Reason == "disposed")
		if err != nil && !disposed {
			return err
		}
		if disposed || w.rng.Intn(crashRestartEvery) == 0 {
			// A store failure while draining is the next Open's to see.
			_ = w.loop().Dispose(context.Background())
			if err := w.open(ctx, d); err != nil {
				return err
			}
			continue
		}
		switch w.rng.Intn(crashStagedEvery) {
		case 0:
			// The store's head, not the loop's: the injector may be
			// appending. Its batches are whole turns, so the last event
			// is a turn/end.
			head, err := d.Head(ctx, w.id)
			if err != nil {
				return err
			}
			child := fmt.Sprintf("%s%s%x", w.id, forkMark, w.rng.Int63())
			if err := d.fork(ctx, w.id, head.Next-1, child); err != nil {
				return err
			}
		case 1:
			if err := d.importGenerated(ctx, w.rng.Int63()); err != nil {
				return err
			}
		}
	}
	if err := context.Cause(ctx); err != context.Canceled {
		return err // the injector failed
	}
	return nil
}

// Names of the sessions a crash child forks and imports.
const (
	forkMark     = ".fork-" // CHILD = SOURCE + forkMark + hex
	importPrefix = "imp-"   // ID = importPrefix + the loggen seed, decimal
)

// fork forks source at its turn/end at seq at into child, then reports
//
//	forked CHILD
func (d *durable) fork(ctx context.Context, source string, at int64, child string) error {
	h := codec.NewSessionHeader(child, float64(time.Now().UnixMilli()), "/work/"+child, source, at+1)
	if err := d.store.Fork(ctx, source, at, h); err != nil {
		return errors.Wrapf(err, "fork %s at %d", errors.Safe(source), errors.Safe(at))
	}
	return d.say(fmt.Appendf(nil, "forked %s\n", child))
}

// importGenerated imports the session loggen generates from seed, as
// importPrefix+seed, then reports
//
//	imported ID
func (d *durable) importGenerated(ctx context.Context, seed int64) error {
	id := importPrefix + strconv.FormatInt(seed, 10)
	h, src, err := generated(id, seed)
	if err != nil {
		return err
	}
	if _, err := d.store.Import(ctx, h, src); err != nil {
		return errors.Wrapf(err, "import %s", errors.Safe(id))
	}
	return d.say(fmt.Appendf(nil, "imported %s\n", id))
}

// generated returns the session loggen generates from seed, under id: its
// header and a scanner over its events.
func generated(id string, seed int64) (codec.SessionHeader, *codec.Scanner, error) {
	var buf bytes.Buffer
	err := loggen.Generate(seed, loggen.Options{Events: crashImportEvents}, func(line []byte) error {
		buf.Write(line)
		return buf.WriteByte('\n')
	})
	if err != nil {
		return codec.SessionHeader{}, nil, err
	}
	sc := codec.NewScanner(&buf, codec.Limits{})
	orig, err := sc.Header()
	if err != nil {
		return codec.SessionHeader{}, nil, err
	}
	return codec.NewSessionHeader(id, orig.CreatedAt, orig.Cwd, "", 0), sc, nil
}

// durable is the store the crash child hands the loop: the real store,
// whose Append, once the store has returned nil (the batch is committed and
// synced), writes one line per event of the batch to w:
//
//	durable SESSION SEQ SHA256(payload)
//
// A batch's lines go out in one write, after the append, so every line the
// parent reads names an event the store acknowledged.
type durable struct {
	store
	mu sync.Mutex
	w  io.Writer
}

func (d *durable) Append(ctx context.Context, session string, events []codec.Event) error {
	if err := d.store.Append(ctx, session, events); err != nil {
		return err
	}
	var b []byte
	for i := range events {
		sum := sha256.Sum256(events[i].Raw)
		b = fmt.Appendf(b, "durable %s %d %x\n", session, events[i].Seq, sum)
	}
	return d.say(b)
}

// say writes b in one write.
func (d *durable) say(b []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, err := d.w.Write(b)
	return errors.Wrap(err, "stress: report to the parent")
}

var _ loop.Store = (*durable)(nil)

// childWAL is the write-ahead log of a crash child on a bbolt store:
// three children in four cut small segments and apply in short, small
// rounds, so that kills land mid-apply and mid-cut as well as mid-write;
// the fourth keeps the defaults. envSegment, when set, is the small
// segment size (TestPowerCut's children write less, and cut smaller).
func childWAL(seed int64) boltlog.WALOptions {
	if seed%4 == 3 {
		return boltlog.WALOptions{}
	}
	size := int64(crashSegmentSize)
	if v, err := strconv.ParseInt(os.Getenv(envSegment), 10, 64); err == nil {
		size = v
	}
	return boltlog.WALOptions{
		SegmentSize:   size,
		ApplyInterval: crashApplyMin + time.Duration(seed%int64(crashApplyMax-crashApplyMin)),
		ApplyBytes:    crashApplyBytes,
	}
}

// walLines is the slog handler of a crash child's store: it reports the
// store's apply rounds and segment cuts (its Debug lines) to the parent,
// in the stream of durable lines, so that the parent can tell what the
// child was doing when it was killed:
//
//	wal apply-begin
//	wal apply-commit
//	wal cut
//
// Other lines go to stderr.
type walLines struct{ d *durable }

func (walLines) Enabled(context.Context, slog.Level) bool { return true }

func (h walLines) Handle(_ context.Context, r slog.Record) error {
	switch r.Message {
	case "eventlog: apply round begins":
		return h.d.say([]byte("wal apply-begin\n"))
	case "eventlog: apply round committed":
		return h.d.say([]byte("wal apply-commit\n"))
	case "eventlog: write-ahead log segment started":
		return h.d.say([]byte("wal cut\n"))
	}
	if r.Level >= slog.LevelInfo {
		fmt.Fprintf(os.Stderr, "%s %s\n", r.Level, r.Message)
	}
	return nil
}

func (h walLines) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h walLines) WithGroup(string) slog.Handler      { return h }
