package stress

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/powerfs"
	"github.com/sessionlog/sessionlog/internal/powerfs/powerfstest"
)

// Knobs of TestPowerCutImports.
const (
	powerImportCuts   = 12  // cuts in a plain run; STRESS_IMPORT_CUTS sets it
	powerImportWrites = 400 // the child is killed at its 1..powerImportWrites-th write
	powerImportSeeds  = 1000
)

// TestPowerCutImports cuts the power in the middle of staged imports: a
// child imports generated sessions one after another on a powerfs mount,
// each staged in several small transactions and then published, and is
// killed from inside its k-th write (k random); the power is cut in drop,
// tear and reorder mode in turn. Then every import the child reported is
// published and whole (the generated session's events and chain hash) and
// verifies clean, every published one too, and a read-write Open leaves no
// staged session behind.
func TestPowerCutImports(t *testing.T) {
	if testing.Short() {
		t.Skip("power-cut rounds take seconds; skipped under -short")
	}
	disk, mnt := powerfstest.Dirs(t)
	cuts := envInt(t, "STRESS_IMPORT_CUTS", powerImportCuts)
	seed := envInt(t, "STRESS_SEED", time.Now().UnixNano())
	t.Logf("seed %d (STRESS_SEED reproduces the choices, not the timing)", seed)
	rng := rand.New(rand.NewSource(seed))
	ctx := context.Background()
	path := filepath.Join(disk, "sessions.db")
	known := map[string]bool{}
	var reported, published, staged, lost, kills int
	var lostSectors int
	for round := 0; round < int(cuts) && !t.Failed(); round++ {
		k := 1 + rng.Int63n(powerImportWrites)
		var writes atomic.Int64
		var killed atomic.Bool
		fsys, err := powerfs.Mount(disk, mnt, &powerfs.Options{OnWrite: func(tid uint32) {
			if writes.Add(1) == k {
				killed.Store(syscall.Kill(int(tid), syscall.SIGKILL) == nil)
			}
		}})
		if err != nil {
			t.Fatalf("round %d: %+v", round, err)
		}
		c := startChild(t, "TestPowerImportChild", "power-import", envStore+"="+filepath.Join(mnt, "sessions.db"),
			envSeed+"="+strconv.Itoa(1+round*powerImportSeeds))
		var ids []string
		for stop := time.After(10 * time.Second); ; {
			var line string
			var ok bool
			select {
			case line, ok = <-c.lines:
			case <-stop:
			}
			if !ok {
				break
			}
			if f := strings.Fields(line); len(f) == 2 && f[0] == "imported" {
				ids = append(ids, f[1])
			}
			if strings.HasPrefix(line, "fatal") {
				t.Fatalf("round %d: the child failed: %s", round, line)
			}
		}
		for _, line := range c.kill() {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "imported" {
				ids = append(ids, f[1])
			}
		}
		if !c.killedBySignal() {
			t.Fatalf("round %d: the child was not killed (%v); stderr:\n%s", round, c.state, c.stderr.String())
		}
		if killed.Load() {
			kills++
		}
		mode := powerfs.Modes[round%len(powerfs.Modes)]
		rep, err := fsys.Cut(mode, rng)
		if err != nil {
			t.Fatalf("round %d: %s cut: %+v", round, mode, err)
		}
		lostSectors += rep.Lost
		reported += len(ids)

		findings, refusal := openAfterCut(path)
		if refusal != nil {
			if !classified(refusal) || len(known) > 0 || len(ids) > 0 {
				t.Fatalf("round %d: after a %s cut the store is refused: %+v", round, mode, refusal)
			}
			// Killed before the store's first Open returned.
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			continue
		}
		for _, f := range findings {
			t.Errorf("round %d: after a %s cut: %s", round, mode, f)
		}
		left, err := unpublished(path)
		if err != nil {
			t.Fatalf("round %d: after a %s cut: %+v", round, mode, err)
		}
		staged += len(left)
		st, err := boltlog.Open(path, storeOptions(), storeBoltOptions())
		if err != nil {
			t.Fatalf("round %d: after a %s cut the store does not open: %+v", round, mode, err)
		}
		all, err := st.SessionIDs(ctx)
		if err != nil {
			t.Fatalf("round %d: %+v", round, err)
		}
		have := map[string]bool{}
		for _, id := range all {
			have[id] = true
			if known[id] {
				continue
			}
			known[id] = true
			published++
			c := &sessionCheck{t: t, st: st, round: round, id: id, tot: crashTotals{types: map[string]int64{}}}
			if err := c.imported(ctx); err != nil {
				t.Fatalf("round %d: session %s: %+v", round, id, err)
			}
		}
		for _, id := range ids {
			if !have[id] {
				lost++
				t.Errorf("round %d: %s was reported imported, but after a %s cut the store does not hold it", round, id, mode)
			}
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if left, err := unpublished(path); err != nil || len(left) > 0 {
			t.Errorf("round %d: after a read-write Open the store still holds staged sessions %v (%v)", round, left, err)
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("power-imports: cuts=%d write_kills=%d imports_reported=%d published=%d lost=%d staged_removed=%d sectors_lost=%d",
		cuts, kills, reported, published, lost, staged, lostSectors)
	// The work first: kills inside writes, imports published, staged
	// ones a cut left, sectors lost; then nothing lost.
	if kills == 0 || published == 0 || staged == 0 || lostSectors == 0 {
		t.Errorf("write kills %d, imports published %d, staged sessions removed %d, sectors lost %d: want each > 0",
			kills, published, staged, lostSectors)
	}
	if lost != 0 {
		t.Errorf("%d reported imports lost", lost)
	}
}

// TestPowerImportChild is TestPowerCutImports's child: it imports the
// sessions loggen generates from envSeed on, one after another, reporting
// each ("imported ID"), until it is killed. Run directly, it skips.
func TestPowerImportChild(t *testing.T) {
	if os.Getenv(envRole) != "power-import" {
		t.Skip("the child process of TestPowerCutImports; runs only when it starts it")
	}
	seed, err := strconv.ParseInt(os.Getenv(envSeed), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watchStdin(cancel)
	opts := storeOptions()
	opts.ImportBatch = crashImportBatch
	st, err := boltlog.Open(os.Getenv(envStore), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d := &durable{store: st, w: os.Stdout}
	for i := int64(0); i < powerImportSeeds && ctx.Err() == nil; i++ {
		if err := d.importGenerated(ctx, seed+i); err != nil {
			_ = d.say([]byte("fatal " + strings.ReplaceAll(err.Error(), "\n", " | ") + "\n"))
			t.Fatalf("%+v", err)
		}
	}
}
