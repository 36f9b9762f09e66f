package stress

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/powerfs"
	"github.com/sessionlog/sessionlog/internal/powerfs/powerfstest"
	"github.com/sessionlog/sessionlog/salvage"
)

// TestPowerRecipeNewStoreName: a child creates a store on the mount and
// acknowledges its first events; power is cut, dropping everything not
// synced. The store and the events must be there. Before boltlog.Open
// synced the store's directory, the file's name was never durable and the
// store was gone after the cut.
func TestPowerRecipeNewStoreName(t *testing.T) {
	disk, mnt, fsys := powerfstest.Mount(t, nil)
	c := startChild(t, "TestCrashChild", "crash", envStore+"="+filepath.Join(mnt, "sessions.db"),
		envSeed+"=1", envIDs+"=recipe-0001")
	c.expect("start")
	log := &roundLog{durable: map[string]map[int64]string{}, staged: map[string]bool{}}
	deadline := time.Now().Add(time.Minute)
	for log.lines == 0 && time.Now().Before(deadline) {
		line, ok := c.next(time.Until(deadline))
		if !ok {
			break
		}
		log.add(t, line)
	}
	c.kill()
	if log.lines == 0 {
		t.Fatalf("the child acknowledged no event; stderr:\n%s", c.stderr.String())
	}
	rep, err := fsys.Cut(powerfs.Drop, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatalf("%+v", err)
	}
	t.Logf("cut: %+v", rep)
	st, err := boltlog.Open(filepath.Join(disk, "sessions.db"), &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatalf("after the cut the store does not open, though %d events were acknowledged: %v", log.lines, err)
	}
	defer st.Close()
	head, err := st.Head(context.Background(), "recipe-0001")
	if err != nil {
		t.Fatalf("after the cut: %v", err)
	}
	for seq := range log.durable["recipe-0001"] {
		if seq >= head.Next {
			t.Errorf("seq %d was acknowledged, the session holds %d events", seq, head.Next)
		}
	}
}

// envSalvageOut names the file TestPowerSalvageChild salvages into.
const envSalvageOut = "SESSIONLOG_STRESS_SALVAGE_OUT"

// TestPowerRecipeSalvageInto: salvage -o (salvage.Into) writes a new
// store under a temporary name on a power-loss mount and publishes it; the
// power is cut right after it returns. The new store must be there, whole,
// and no temporary file: it fails without the store's syncs or the
// directory sync after the publish.
func TestPowerRecipeSalvageInto(t *testing.T) {
	disk, mnt, fsys := powerfstest.Mount(t, nil)
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "src.db")
	st, err := boltlog.Open(src, storeOptions(), storeBoltOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for seed := int64(1); seed <= 3; seed++ {
		id := importPrefix + strconv.FormatInt(seed, 10)
		h, evs, err := generated(id, seed)
		if err == nil {
			_, err = st.Import(ctx, h, evs)
		}
		if err == nil {
			var head eventlog.Head
			head, err = st.Head(ctx, id)
			want[id] = head.Next
		}
		if err != nil {
			t.Fatalf("%+v", err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	c := startChild(t, "TestPowerSalvageChild", "salvage", envStore+"="+src, envSalvageOut+"="+filepath.Join(mnt, "out.db"))
	c.expect("salvaged")
	c.kill()
	if s := fsys.Stats(); s.Writes == 0 || s.FileSyncs == 0 || s.DirSyncs == 0 {
		t.Fatalf("stats %+v: salvage did not write and sync through the mount", s)
	}
	rep, err := fsys.Cut(powerfs.Drop, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatalf("%+v", err)
	}
	t.Logf("cut: %+v", rep)
	out, err := boltlog.Open(filepath.Join(disk, "out.db"), &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatalf("after the cut the salvaged store does not open: %v", err)
	}
	defer out.Close()
	for id, n := range want {
		head, err := out.Head(ctx, id)
		if err != nil || head.Next != n {
			t.Errorf("after the cut the salvaged store holds %d events of %s (%v), want %d", head.Next, id, err, n)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(disk, ".out.db.salvage-*")); len(left) > 0 {
		t.Errorf("temporary files left after the cut: %v", left)
	}
}

// TestPowerSalvageChild is TestPowerRecipeSalvageInto's child: it salvages
// the store at envStore into envSalvageOut, says so, and waits to be
// killed. Run directly, it skips.
func TestPowerSalvageChild(t *testing.T) {
	if os.Getenv(envRole) != "salvage" {
		t.Skip("the child process of TestPowerRecipeSalvageInto; runs only when it starts it")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watchStdin(cancel)
	src, err := boltlog.Open(os.Getenv(envStore), &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := salvage.Into(ctx, src, os.Getenv(envSalvageOut), nil); err != nil {
		t.Fatalf("%+v", err)
	}
	os.Stdout.WriteString("salvaged\n")
	<-ctx.Done()
}
