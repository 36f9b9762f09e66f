package stress_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/loggen"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/verify"
)

// TestCorruptNewestMeta is the recipe of the SILENT probes that
// TestCorrupt/meta found, reduced to one flip. eventlog fixed it (commit
// 3c1c4c7: Log.CheckMeta, which logtool verify runs): this test keeps it
// fixed.
//
// bbolt keeps two meta pages and writes transaction T's meta to page T%2.
// Open validates both and, when the newer one fails its checksum, uses the
// older one without a word: that is how it survives a crash in the middle
// of a meta write. But a flipped bit in the newest meta of a store whose
// last commit succeeded (fsynced, acknowledged) looks exactly the same, so
// the store opens as of the transaction before: here the last session
// imported is gone, and verify, which checks the sessions it is given,
// finds nothing. The next read-write commit then overwrites the damaged
// page, and the loss is invisible for good.
//
// The fix: eventlog reads both meta pages itself (magic, version, FNV-64a
// checksum over the first 56 bytes of the meta, as bbolt does) and
// CheckMeta reports a damaged one.
func TestCorruptNewestMeta(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	l, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"first", "last"} {
		h := codec.NewSessionHeader(id, 1767225600000, "", "", 0)
		var evs []codec.Event
		for seq, line := range []string{
			`{"type":"turn/start","seq":0,"time":1767225600001,"data":{"turn":1}}`,
			`{"type":"turn/end","seq":1,"time":1767225600002,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
		} {
			ev, err := codec.ParseEvent([]byte(line), codec.Limits{})
			if err != nil {
				t.Fatalf("seq %d: %v", seq, err)
			}
			evs = append(evs, ev)
		}
		if _, err := l.Import(ctx, h, &eventSource{evs: evs}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Flip one bit of the txid of the newest meta page.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := int(binary.LittleEndian.Uint32(b[bbPageHeader+8:]))
	txid := func(page int) uint64 { return binary.LittleEndian.Uint64(b[page*ps+bbPageHeader+48:]) }
	newest := 0
	if txid(1) > txid(0) {
		newest = 1
	}
	off := newest*ps + bbPageHeader + 48
	b[off] ^= 0x01
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("flipped bit 0 of byte %d: the txid of meta page %d (txid %d; the other is %d)",
		off, newest, txid(newest)^1, txid(1-newest))

	ro, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		if !errors.Is(err, eventlog.ErrCorrupt) {
			t.Fatalf("Open = %v, want an ErrCorrupt refusal", err)
		}
		return // refused with a classified error: not silent
	}
	defer ro.Close()
	if err := ro.CheckMeta(); err != nil {
		if !errors.Is(err, eventlog.ErrCorrupt) {
			t.Fatalf("CheckMeta = %v, want ErrCorrupt", err)
		}
		t.Logf("CheckMeta: %v", err)
		return
	}
	ids, err := ro.SessionIDs(ctx)
	if err != nil {
		if !errors.Is(err, eventlog.ErrCorrupt) {
			t.Fatalf("SessionIDs = %v, want an ErrCorrupt refusal", err)
		}
		return
	}
	findings := 0
	for _, id := range ids {
		res, err := verify.Session(ctx, ro, id, verify.Options{Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		findings += len(res.Findings)
	}
	if len(ids) != 2 && findings == 0 {
		t.Errorf("SILENT: after one flipped bit in the newest meta page, the store opens without an error, "+
			"lists sessions %v instead of [first last], and verify finds nothing: bbolt fell back to the "+
			"older meta page, losing the last committed transaction", ids)
	}
}

// TestCorruptHeadKey is the recipe of the SILENT probes the exhaustive
// sweep (-sweep.all) found in data pages, reduced to one flip. eventlog
// fixed it (commit 4cb6884, a staging mark): this test keeps it fixed.
//
// eventlog takes a session bucket without a "head" key for an import that
// never finished: SessionIDs and Sessions skip it, and a read-write Open
// deletes it. One flipped bit that hides the key (in the key itself, in
// the element that points at it, in the page's element count, in the
// bucket header that points at the page, or a key before it that breaks
// the page's order) therefore makes the session vanish without a finding,
// and the next read-write Open destroys its events for good.
func TestCorruptHeadKey(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	l, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"kept", "hidden"} {
		h := codec.NewSessionHeader(id, 1767225600000, "", "", 0)
		ev, err := codec.ParseEvent([]byte(`{"type":"turn/start","seq":0,"time":1767225600001,"data":{"turn":1}}`), codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Import(ctx, h, &eventSource{evs: []codec.Event{ev}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Flip one bit of the key "head" in the root page of session "hidden".
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := mapPages(b)
	if err != nil {
		t.Fatal(err)
	}
	off := -1
	for _, r := range pm.regions {
		if r.kind == kindKey && r.session == "hidden" && string(b[r.start:r.end]) == "head" {
			off = r.start + 1
		}
	}
	if off < 0 {
		t.Fatal("no head key of session hidden in the file")
	}
	b[off] ^= 0x01 // "hdad"
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("flipped bit 0 of byte %d: the key \"head\" of session hidden", off)

	ro, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		if !errors.Is(err, eventlog.ErrCorrupt) {
			t.Fatalf("Open = %v, want an ErrCorrupt refusal", err)
		}
	} else {
		ids, err := ro.SessionIDs(ctx)
		if err == nil {
			findings := 0
			for _, id := range ids {
				res, err := verify.Session(ctx, ro, id, verify.Options{Strict: true})
				if err != nil {
					t.Fatal(err)
				}
				findings += len(res.Findings)
			}
			if len(ids) != 2 && findings == 0 {
				t.Errorf("SILENT: after one flipped bit in a session's head key, the store lists %v instead of "+
					"[hidden kept], and verify finds nothing: the session looks like an unfinished import", ids)
			}
		}
		if err := ro.Close(); err != nil {
			t.Fatal(err)
		}
	}

	// A read-write Open removes unpublished sessions: here, the damaged one.
	rw, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err == nil {
		err = rw.Close()
	}
	if err != nil && !errors.Is(err, eventlog.ErrCorrupt) {
		t.Fatalf("read-write Open = %v", err)
	}
	if bucketGone(t, path, "hidden") {
		t.Errorf("DATA LOSS: a read-write Open deleted the damaged session \"hidden\" as an unfinished import; " +
			"its events cannot be salvaged any more")
	}
}

// bucketGone reports whether the sessions bucket has no key id any more.
func bucketGone(t *testing.T, path, id string) bool {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	gone := false
	err = db.View(func(tx *bolt.Tx) error {
		gone = tx.Bucket([]byte("sessions")).Get([]byte(id)) == nil && tx.Bucket([]byte("sessions")).Bucket([]byte(id)) == nil
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return gone
}

// TestCorruptBranchKey is the recipe of the MISSED probe the sweep found:
// verify said a session was clean while reading it failed. eventlog fixed
// it (commit 0aca666: Records checks that a seek of seq 0 finds the first
// key; verify.CheckStore runs bbolt's structure check): this test keeps it
// fixed.
//
// A flipped bit in the size of a key of a branch page of an events bucket
// misleads bbolt's binary search, so Seek — which Scan, and so replay,
// export and the loop, use to find a seq — lands on the wrong leaf, while
// a walk from First to Next, which is how verify (through Records from seq
// 0) reads, never consults branch keys and sees every record in order.
//
// The fix checks where a seek lands against where a walk starts, and
// bbolt's own key-order check across pages.
func TestCorruptBranchKey(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	l, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, evs, err := loggen.Session(11, loggen.Options{Events: 600})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Import(ctx, h, &eventSource{evs: evs}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// The branch page of the events bucket: flags 0x01 and 8-byte keys.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := int(binary.LittleEndian.Uint32(b[bbPageHeader+8:]))
	off := -1
	for p := 2; p < len(b)/ps && off < 0; p++ {
		page := b[p*ps:]
		if binary.LittleEndian.Uint16(page[8:]) == bbBranchPage && binary.LittleEndian.Uint16(page[10:]) > 2 &&
			binary.LittleEndian.Uint32(page[bbPageHeader+bbElement+4:]) == 8 {
			off = p*ps + bbPageHeader + bbElement + 4 // the key size of element 1
		}
	}
	if off < 0 {
		t.Fatal("no branch page with 8-byte keys: the session is too short")
	}
	b[off] ^= 0x0b // key size 8 → 3
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("flipped byte %d ^= 0x0b: the key size of element 1 of an events branch page (8 → 3)", off)

	ro, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	defer ro.Close()
	res, err := verify.Session(ctx, ro, h.ID, verify.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	_, rerr := readSession(ctx, ro, h.ID)
	if !res.Failed() && rerr != nil {
		t.Errorf("MISSED: verify finds nothing in session %s, yet reading it fails: %v", h.ID, rerr)
	}
	if res.Failed() && rerr == nil {
		t.Logf("verify reports %v", res.Findings)
	}
}

// TestCorruptSessionNotBucket is the recipe of the SILENT probes the sweep
// found in data pages after the head-key fix, reduced to one flip.
// eventlog fixed it (commit 0aca666: SessionIDs lists such a key, and Head
// reports it as corrupt): this test keeps it fixed.
//
// A flipped bit in the flags of a leaf element of the sessions bucket
// turns a session's bucket into a plain value: bbolt no longer opens it as
// a bucket, and SessionIDs, which lists only keys whose value is a bucket,
// skips it, so verify never looks at the session and finds nothing
// (Sessions, by contrast, refuses the store: "is a value, not a session
// bucket").
//
// The fix: SessionIDs lists every key of the sessions bucket, and Head and
// Records report such a key as corrupt.
func TestCorruptSessionNotBucket(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	l, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"kept", "hidden"} {
		h := codec.NewSessionHeader(id, 1767225600000, "", "", 0)
		ev, err := codec.ParseEvent([]byte(`{"type":"turn/start","seq":0,"time":1767225600001,"data":{"turn":1}}`), codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Import(ctx, h, &eventSource{evs: []codec.Event{ev}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// The leaf element of "hidden" in the sessions bucket's root page.
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var root int
	err = db.View(func(tx *bolt.Tx) error { root = int(tx.Bucket([]byte("sessions")).Root()); return nil })
	ps := db.Info().PageSize
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil || root == 0 {
		t.Fatalf("sessions bucket root %d: %v", root, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := b[root*ps:]
	off := -1
	for i := 0; i < int(binary.LittleEndian.Uint16(page[10:])); i++ {
		e := bbPageHeader + i*bbElement
		pos, ksize := int(binary.LittleEndian.Uint32(page[e+4:])), int(binary.LittleEndian.Uint32(page[e+8:]))
		if string(page[e+pos:e+pos+ksize]) == "hidden" {
			off = root*ps + e
		}
	}
	if off < 0 {
		t.Fatal("no element for session hidden in the sessions bucket's root page")
	}
	b[off] ^= bbBucketLeafFlag
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("flipped bit 0 of byte %d: the bucket flag of the element of session hidden in the sessions bucket", off)

	ro, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		if !errors.Is(err, eventlog.ErrCorrupt) {
			t.Fatalf("Open = %v, want an ErrCorrupt refusal", err)
		}
		return
	}
	defer ro.Close()
	ids, err := ro.SessionIDs(ctx)
	if err != nil {
		if !errors.Is(err, eventlog.ErrCorrupt) {
			t.Fatalf("SessionIDs = %v, want an ErrCorrupt refusal", err)
		}
		return
	}
	findings := 0
	for _, id := range ids {
		res, err := verify.Session(ctx, ro, id, verify.Options{Strict: true})
		if err != nil {
			findings++ // an error naming the session is not silent
			continue
		}
		findings += len(res.Findings)
	}
	if len(ids) != 2 && findings == 0 {
		t.Errorf("SILENT: after one flipped bit in an element flag of the sessions bucket, the store lists %v "+
			"instead of [hidden kept], and verify finds nothing", ids)
	}
}

// envCheckStructure names the damaged store TestCorruptCheckStructureChild
// checks.
const envCheckStructure = "SESSIONLOG_CORRUPT_CHECK_STRUCTURE"

// TestCorruptCheckStructure is the recipe of two damaged stores on which
// bbolt's own structure check (tx.Check) killed the process or ran for
// minutes: it walks the pages in a goroutine of its own, where a fault is
// fatal, and a flipped high byte of an overflow count makes it mark
// billions of pages. eventlog no longer runs tx.Check (its CheckStructure
// is gone), and this test keeps what logtool verify runs — the meta check
// and every session's verify, then every session's read — in a child
// process that must neither die nor hang. Both damages leave every record
// readable as stored; only bbolt's own page check saw them, and a safe
// structure check in the calling goroutine is left for later.
func TestCorruptCheckStructure(t *testing.T) {
	st := buildCorruptStore(t)
	b, err := os.ReadFile(st.path)
	if err != nil {
		t.Fatal(err)
	}
	ps := st.pm.pageSize
	// The root page of session tools-1's bucket, and the first branch page
	// of an events bucket (8-byte keys).
	sessionPage, branchPage := -1, -1
	for _, r := range st.pm.regions {
		if r.kind == kindKey && r.session == "tools-1" && string(b[r.start:r.end]) == "head" {
			sessionPage = r.start / ps
		}
	}
	for p := 2; p < len(b)/ps && branchPage < 0; p++ {
		page := b[p*ps:]
		if binary.LittleEndian.Uint16(page[8:]) == bbBranchPage &&
			binary.LittleEndian.Uint32(page[bbPageHeader+4:]) == 8 {
			branchPage = p
		}
	}
	if sessionPage < 0 || branchPage < 0 {
		t.Fatalf("pages not found: session %d, branch %d", sessionPage, branchPage)
	}
	for _, tt := range []struct {
		name      string
		off, mask int
	}{
		// The size of the key of element 0 of the branch page: huge.
		{"key size", branchPage*ps + bbPageHeader + 6, 0xb7},
		// The high byte of the session page's overflow count.
		{"overflow", sessionPage*ps + 15, 0xb5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := append([]byte(nil), b...)
			d[tt.off] ^= byte(tt.mask)
			path := filepath.Join(t.TempDir(), "damaged.db")
			if err := os.WriteFile(path, d, 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCorruptCheckStructureChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), envCheckStructure+"="+path)
			out, err := cmd.CombinedOutput()
			switch {
			case ctx.Err() != nil:
				t.Errorf("byte %d ^= %#02x: verify ran for more than 15 s (hangs)", tt.off, tt.mask)
			case err != nil:
				line := string(out)
				if i := strings.Index(line, "fatal error:"); i >= 0 {
					line = line[i:]
				}
				if i := strings.Index(line, "\n"); i >= 0 {
					line = line[:i]
				}
				t.Errorf("byte %d ^= %#02x: verify killed the process: %s", tt.off, tt.mask, line)
			case !strings.Contains(string(out), "check-structure: corrupt"):
				// Damage that neither a walk nor a seek reaches leaves every
				// record readable as it was: not silent, since nothing reads
				// differently (the sweep's digest comparison would say so).
				t.Logf("byte %d ^= %#02x: every record still reads as stored", tt.off, tt.mask)
			}
		})
	}
}

// TestCorruptCheckStructureChild is the child process of
// TestCorruptCheckStructure.
func TestCorruptCheckStructureChild(t *testing.T) {
	path := os.Getenv(envCheckStructure)
	if path == "" {
		t.Skip("the child process of TestCorruptCheckStructure")
	}
	l, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		fmt.Println("check-structure: open refused:", err)
		return
	}
	defer l.Close()
	ctx := context.Background()
	findings := verify.CheckStore(l)
	ids, err := l.SessionIDs(ctx)
	if err != nil {
		fmt.Println("check-structure: corrupt: listing:", err)
		return
	}
	for _, id := range ids {
		res, err := verify.Session(ctx, l, id, verify.Options{})
		if err != nil {
			findings = append(findings, verify.Finding{Session: id, Seq: -1, Kind: verify.Corrupt, Message: err.Error()})
			continue
		}
		for _, f := range res.Findings {
			if !f.Warning {
				findings = append(findings, f)
			}
		}
	}
	if len(findings) > 0 {
		fmt.Println("check-structure: corrupt:", findings[0].String())
		return
	}
	// verify walks the records leaf by leaf; damage confined to what a
	// seek uses (a branch key, an overflow count) is then seen by the
	// readers, which must refuse cleanly rather than die or hang.
	for _, id := range ids {
		it, err := l.Scan(ctx, id, 0)
		for err == nil {
			_, err = it.Next()
		}
		if it != nil {
			it.Close()
		}
		if err != io.EOF {
			fmt.Println("check-structure: corrupt: read:", err)
			return
		}
	}
	fmt.Println("check-structure: nothing found")
}
