package stress

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/powerfs"
	"github.com/sessionlog/sessionlog/internal/powerfs/powerfstest"
	"github.com/sessionlog/sessionlog/verify"
)

// powerShortCuts is the number of cuts of TestPowerCut in a plain
// go test run; STRESS_CUTS sets it (the full step runs more).
const powerShortCuts = 24

// powerKillWrites: a round killed from inside the filesystem is killed
// after 1..powerKillWrites writes (a child writes 50 to 150 in a round, more
// than that when its kill is timed late).
const powerKillWrites = 50

// powerSegmentSize is the write-ahead log segment size of most children
// (childWAL).
const powerSegmentSize = 4 << 10

// powerHooks let crashRun's rounds run on a power-loss mount: mount before
// the child starts (it returns the store path for the child), cut after it
// is killed (false: the store was rightly refused, skip the checks).
type powerHooks interface {
	mount(n int) string
	cut(n int, log *roundLog) bool
}

// TestPowerCut is TestCrash with power cuts: each child runs on a powerfs
// mount of the store's directory, and after the kill the parent cuts the
// power (drop, tear and reorder in turn), so everything not synced is
// lost, torn or reordered; then the same checks run on what is left, and
// the next child runs on a fresh mount. See the package doc.
func TestPowerCut(t *testing.T) {
	if testing.Short() {
		t.Skip("power-cut rounds take a minute; skipped under -short")
	}
	disk, mnt := powerfstest.Dirs(t)
	cuts := envInt(t, "STRESS_CUTS", powerShortCuts)
	seed := envInt(t, "STRESS_SEED", time.Now().UnixNano())
	t.Logf("seed %d (STRESS_SEED reproduces the choices, not the timing)", seed)
	p := &powerRun{t: t, disk: disk, mnt: mnt,
		rng: rand.New(rand.NewSource(seed + 1)), byMode: map[powerfs.Mode]int{}}
	t.Cleanup(p.unmount)
	r := newCrashRun(t, filepath.Join(p.disk, "sessions.db"), seed)
	r.power = p
	p.r = r
	// Children killed after a few dozen writes write little: small
	// segments, so that cuts of full segments happen and get cut into.
	r.env = append(r.env, envSegment+"="+strconv.Itoa(powerSegmentSize))
	start := time.Now()
	for round := 0; round < int(cuts) && !t.Failed(); round++ {
		r.round(round)
	}
	took := time.Since(start)
	if t.Failed() {
		return
	}
	r.report(took)
	p.report(took)

	// The work done, first: every cut made, in every mode; events
	// acknowledged and checked; cuts that lost unsynced sectors; crashed
	// turns closed.
	if p.cuts != int(cuts) {
		t.Errorf("%d cuts made, want %d", p.cuts, cuts)
	}
	for _, m := range powerfs.Modes {
		if p.byMode[m] < int(cuts)/4 {
			t.Errorf("%d %s cuts of %d", p.byMode[m], m, cuts)
		}
	}
	if r.tot.durable == 0 || r.tot.verifyRuns == 0 {
		t.Errorf("the children acknowledged %d durable events and verify ran %d times: the cuts proved nothing", r.tot.durable, r.tot.verifyRuns)
	}
	if p.tot.Lost == 0 || p.losing == 0 {
		t.Errorf("no cut lost an unsynced sector (%d cuts lost anything): the cuts proved nothing", p.losing)
	}
	if p.writeKills.Load() == 0 {
		t.Errorf("no child was killed inside a write")
	}
	if r.tot.closerBatches == 0 {
		t.Errorf("no crashed turn was closed after a cut")
	}
	if cuts >= crashClassKills {
		for _, k := range []string{killMidWrite, killMidApply, killMidCut} {
			if r.byClass[k] == 0 {
				t.Errorf("no cut %s of the write-ahead log in %d cuts (%s)", k, cuts, r.classes())
			}
		}
	}
	// Then nothing lost, nothing wrongly refused.
	if r.tot.lost != 0 {
		t.Errorf("%d acknowledged events lost to power cuts", r.tot.lost)
	}
	if p.wrong != 0 {
		t.Errorf("%d wrong opens after a power cut", p.wrong)
	}
}

// powerRun is TestPowerCut's state across rounds.
type powerRun struct {
	t         *testing.T
	r         *crashRun
	disk, mnt string
	rng       *rand.Rand
	fs        *powerfs.FS // while mounted

	cuts   int
	byMode map[powerfs.Mode]int
	tot    powerfs.Report // summed
	stats  powerfs.Stats  // summed
	// losing counts the cuts that lost a sector or a name; refused the
	// stores rightly refused (nothing acknowledged yet); wrong the opens
	// that failed after an acknowledgement.
	losing, refused, wrong int
	// writeKills counts the children killed from inside a write.
	writeKills atomic.Int64
}

// mount mounts the disk for round n. In half the rounds the child is
// killed from inside the filesystem, right after its k-th write: a kill
// inside a commit, with its writes not yet synced, which a kill timed from
// outside rarely hits.
func (p *powerRun) mount(n int) string {
	opts := &powerfs.Options{}
	if p.rng.Intn(2) == 0 {
		k := 1 + p.rng.Int63n(powerKillWrites)
		var writes atomic.Int64
		opts.OnWrite = func(tid uint32) {
			if writes.Add(1) == k {
				// The thread's id names its process to kill(2).
				if err := syscall.Kill(int(tid), syscall.SIGKILL); err == nil {
					p.writeKills.Add(1)
				}
			}
		}
	}
	fsys, err := powerfs.Mount(p.disk, p.mnt, opts)
	if err != nil {
		p.t.Fatalf("round %d: %+v", n, err)
	}
	p.fs = fsys
	return filepath.Join(p.mnt, filepath.Base(p.r.path))
}

func (p *powerRun) unmount() {
	if p.fs != nil {
		if err := p.fs.Unmount(); err != nil {
			p.t.Errorf("%+v", err)
		}
		p.fs = nil
	}
}

// cut cuts the power in the round's mode, then proves the store opens
// read-only and its own structures check clean; or, while nothing has
// been acknowledged, that its refusal is classified.
func (p *powerRun) cut(n int, log *roundLog) bool {
	t := p.t
	mode := powerfs.Modes[n%len(powerfs.Modes)]
	stats := p.fs.Stats()
	rep, err := p.fs.Cut(mode, p.rng)
	p.fs = nil
	if err != nil {
		t.Fatalf("round %d: %s cut: %+v", n, mode, err)
	}
	p.cuts++
	p.byMode[mode]++
	p.add(rep, stats)
	if rep.Lost > 0 || rep.Removed > 0 || rep.Restored > 0 {
		p.losing++
	}
	t.Logf("round %d: %s cut: %+v", n, mode, rep)

	acked := log.lines > 0 || p.r.tot.durable > 0
	findings, refusal := openAfterCut(p.r.path)
	if refusal != nil {
		switch {
		case !classified(refusal):
			p.wrong++
			t.Fatalf("round %d: after a %s cut the store is refused with an unclassified error: %+v", n, mode, refusal)
		case acked:
			p.wrong++
			t.Fatalf("round %d: after a %s cut the store is refused, but events were acknowledged durable: %+v", n, mode, refusal)
		}
		// Nothing was acknowledged: the store may be gone or unreadable.
		t.Logf("round %d: after a %s cut, before any acknowledgement, the store is refused: %v", n, mode, refusal)
		p.refused++
		if err := os.Remove(p.r.path); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return false
	}
	for _, f := range findings {
		t.Errorf("round %d: after a %s cut: %s", n, mode, f)
	}
	return true
}

// openAfterCut opens the store at path read-only after a power cut and
// returns what checking its own structures finds; or the open's error,
// when the store is refused.
func openAfterCut(path string) (findings []verify.Finding, refusal error) {
	st, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, &boltlog.Options{LockTimeout: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	findings = verify.CheckStore(st)
	if err := st.Close(); err != nil {
		findings = append(findings, verify.Finding{Seq: -1, Kind: verify.Corrupt, Message: err.Error(), Err: err})
	}
	return findings, nil
}

// classified reports whether err carries one of the store's error classes
// that say what is wrong with the file.
func classified(err error) bool {
	return errors.Is(err, eventlog.ErrCorrupt) || errors.Is(err, eventlog.ErrInvalid) ||
		errors.Is(err, eventlog.ErrNotFound) || errors.Is(err, eventlog.ErrUnsupported)
}

func (p *powerRun) add(rep powerfs.Report, s powerfs.Stats) {
	p.tot.Files += rep.Files
	p.tot.Sectors += rep.Sectors
	p.tot.Lost += rep.Lost
	p.tot.Kept += rep.Kept
	p.tot.Resized += rep.Resized
	p.tot.Removed += rep.Removed
	p.tot.Restored += rep.Restored
	p.stats.Writes += s.Writes
	p.stats.Truncates += s.Truncates
	p.stats.FileSyncs += s.FileSyncs
	p.stats.DirSyncs += s.DirSyncs
	p.stats.NameChanges += s.NameChanges
}

// report logs the one line to quote.
func (p *powerRun) report(took time.Duration) {
	c := &p.r.tot
	line := fmt.Sprintf("power: cuts=%d drop=%d tear=%d reorder=%d cuts_losing=%d durable=%d lost=%d wrong_opens=%d refused_before_ack=%d"+
		" write_kills=%d closers=%d closer_batches=%d forks=%d imports=%d sectors_unsynced=%d sectors_lost=%d sectors_kept=%d files_resized=%d"+
		" names_removed=%d names_restored=%d writes=%d truncates=%d file_syncs=%d dir_syncs=%d name_changes=%d seconds=%.0f",
		p.cuts, p.byMode[powerfs.Drop], p.byMode[powerfs.Tear], p.byMode[powerfs.Reorder], p.losing, c.durable, c.lost, p.wrong, p.refused,
		p.writeKills.Load(), c.closers, c.closerBatches, c.forks, c.imports, p.tot.Sectors, p.tot.Lost, p.tot.Kept, p.tot.Resized,
		p.tot.Removed, p.tot.Restored, p.stats.Writes, p.stats.Truncates, p.stats.FileSyncs, p.stats.DirSyncs, p.stats.NameChanges, took.Seconds())
	line += " " + p.r.classes()
	p.t.Log(line)
	if path := os.Getenv("STRESS_REPORT"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = fmt.Fprintln(f, line)
			err = errors.CombineErrors(err, f.Close())
		}
		if err != nil {
			p.t.Errorf("STRESS_REPORT: %v", err)
		}
	}
}
