package stress

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/wal"
	"github.com/sessionlog/sessionlog/rebuild"
)

// The WAL sweep (TestCorruptWAL) damages the write-ahead log of a store
// that a crash left with unapplied writes.
const (
	walSweepSegment = 4 << 10 // the subject's segment size: several segments
	walSweepSample  = 40      // random flips of the short form, besides the last record and the headers
	walSweepPayload = 16      // flips of the short form in the last record's payload, about
	walSweepZeros   = 8       // flips in the preallocated zeros after the last record
	walTruncEvery   = 37      // the short form truncates at every 37th offset of the last record
)

// walSubject is a store whose write-ahead log holds unapplied writes, as
// a crash leaves it: a store file and its -wal directory, copied while
// the store was open (nothing is applied after its Open).
type walSubject struct {
	dir, path string
	segs      []string // segment file names, in order
	sizes     []int64
	// last is the offset and size of the last record in the last
	// segment; data the offset after the last record.
	lastOff, lastLen int64
	// full is what a reader sees of the intact store; dropped what it
	// sees once the last record is gone (a torn last write).
	full, dropped map[string]string
	records       int // records in the log
}

// TestCorruptWAL flips bytes of the segment files of a write-ahead log
// holding unapplied writes (creations, and appends continuing sessions the
// tree holds), and truncates its last record at many offsets. Each probe
// opens the store read-only, then read-write (which applies the log), and
// reads everything each time. A flip must be refused (ErrCorrupt), or
// reported as a torn tail (WALReport().TornBytes > 0) with the last record
// dropped, when the flip is in it, or nothing dropped, when it is in the
// zeros after it; a truncation must drop only the last record, never an
// earlier one. Anything else is silent damage: it fails the test. Every
// class must be seen (none of the flips reads as identical content: every
// byte is under a crc). The short form flips the last record's frame head
// and crc and samples its payload, each segment header and the rest (about
// 120 probes, 5 s under -race); -sweep.full flips every byte up to the end
// of the last record and truncates at every offset of it.
func TestCorruptWAL(t *testing.T) {
	if testing.Short() {
		t.Skip("the WAL sweep opens a store a thousand times; skipped under -short")
	}
	start := time.Now()
	s := newWALSubject(t)
	t.Logf("subject: %d records in %d segments %v, last record %d bytes at %s@%d",
		s.records, len(s.segs), s.sizes, s.lastLen, s.segs[len(s.segs)-1], s.lastOff)

	full := sweepFlag("sweep.full") == "true"
	seed, _ := strconv.ParseUint(sweepFlag("sweep.seed"), 10, 64)
	rng := rand.New(rand.NewPCG(seed, 2))
	type flip struct {
		seg int
		off int64
	}
	var flips []flip
	lastSeg := len(s.segs) - 1
	end := s.lastOff + s.lastLen
	for i := range s.segs {
		limit := s.sizes[i]
		if i == lastSeg {
			limit = end
		}
		if full {
			for off := int64(0); off < limit; off++ {
				flips = append(flips, flip{i, off})
			}
			continue
		}
		for off := int64(0); off < 32; off += 3 { // the segment header, sampled
			flips = append(flips, flip{i, off})
		}
	}
	if !full {
		// The last record's frame head and crc, bytes of its payload.
		for off := s.lastOff; off < end; off++ {
			if off < s.lastOff+16 || off >= end-4 || rng.IntN(int(s.lastLen)) < walSweepPayload {
				flips = append(flips, flip{lastSeg, off})
			}
		}
		for range walSweepSample {
			i := rng.IntN(len(s.segs))
			limit := s.sizes[i]
			if i == lastSeg {
				limit = end
			}
			flips = append(flips, flip{i, rng.Int64N(limit)})
		}
	}
	if zeros := s.sizes[lastSeg] - end; zeros > 0 { // the preallocated zeros after the last record
		for range walSweepZeros {
			flips = append(flips, flip{lastSeg, end + rng.Int64N(zeros)})
		}
	}

	outcomes := map[string]int{}
	probe := filepath.Join(t.TempDir(), "probe")
	for n, f := range flips {
		mask := byte(1 + rng.IntN(255))
		s.copyTo(t, probe)
		seg := filepath.Join(boltlog.WALDir(filepath.Join(probe, "sessions.db")), s.segs[f.seg])
		flipByte(t, seg, f.off, mask)
		where := fmt.Sprintf("probe %d: %s@%d ^= %#02x", n, s.segs[f.seg], f.off, mask)
		inLast := f.seg == lastSeg && f.off >= s.lastOff && f.off < end
		afterLast := f.seg == lastSeg && f.off >= end
		out := s.probe(t, probe, where, func(torn bool, got map[string]string) string {
			switch {
			case !torn && equalContent(got, s.full):
				return "identical"
			case torn && inLast && equalContent(got, s.dropped):
				return "torn-last-dropped"
			case torn && afterLast && equalContent(got, s.full):
				return "torn-after-last"
			}
			return ""
		})
		outcomes[out]++
	}
	t.Logf("flips: %d probes, %v", len(flips), outcomes)

	// Torn tails: the last record cut short at each offset, by a
	// truncated file and by zeros (a preallocated segment).
	truncs := map[string]int{}
	for off := s.lastOff; off <= end; off++ {
		if !full && off != s.lastOff && off != end-1 && off != end && (off-s.lastOff)%walTruncEvery != 0 {
			continue
		}
		for _, zero := range []bool{false, true} {
			s.copyTo(t, probe)
			seg := filepath.Join(boltlog.WALDir(filepath.Join(probe, "sessions.db")), s.segs[lastSeg])
			how := "truncated"
			if zero {
				how = "zeroed"
				zeroFrom(t, seg, off)
			} else if err := os.Truncate(seg, off); err != nil {
				t.Fatal(err)
			}
			where := fmt.Sprintf("%s at %s@%d", how, s.segs[lastSeg], off)
			out := s.probe(t, probe, where, func(torn bool, got map[string]string) string {
				switch {
				case off == end && !torn && equalContent(got, s.full):
					return "whole"
				case off == s.lastOff && !torn && equalContent(got, s.dropped):
					return "last-gone"
				case off > s.lastOff && off < end && torn && equalContent(got, s.dropped):
					return "torn-dropped"
				}
				return ""
			})
			truncs[out]++
		}
	}
	t.Logf("torn tails: %v", truncs)

	line := fmt.Sprintf("corrupt-wal: probes=%d refused=%d torn_last_dropped=%d torn_after_last=%d identical=%d silent=%d truncations=%d torn_dropped=%d trunc_silent=%d seconds=%.0f",
		len(flips), outcomes["refused"], outcomes["torn-last-dropped"], outcomes["torn-after-last"], outcomes["identical"], outcomes["silent"],
		truncs["whole"]+truncs["last-gone"]+truncs["torn-dropped"]+truncs["silent"], truncs["torn-dropped"], truncs["silent"], time.Since(start).Seconds())
	t.Log(line)
	fmt.Println(line)
	for _, k := range []string{"refused", "torn-last-dropped", "torn-after-last"} {
		if outcomes[k] == 0 {
			t.Errorf("no flip ended %s: the sweep did not exercise it", k)
		}
	}
	if truncs["torn-dropped"] == 0 || truncs["last-gone"] == 0 || truncs["whole"] == 0 {
		t.Errorf("torn tails %v: a class is empty", truncs)
	}
	if outcomes["silent"] != 0 || truncs["silent"] != 0 {
		t.Errorf("%d silent flips and %d silent truncations: damage read as other content with no error and no report",
			outcomes["silent"], truncs["silent"])
	}
}

// newWALSubject writes the subject: sessions applied to the tree (a
// store opened and closed), then, on a store that never applies (apply
// interval an hour), creations of new sessions and appends to all of
// them, each append its own record; the files are copied while it is
// open, as a crash leaves them.
func newWALSubject(t *testing.T) *walSubject {
	ctx := context.Background()
	s := &walSubject{dir: t.TempDir()}
	s.path = filepath.Join(s.dir, "sessions.db")
	work := filepath.Join(t.TempDir(), "sessions.db")
	opts := &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}
	type feed struct {
		id string
		h  codec.SessionHeader
		sc *codec.Scanner
	}
	var feeds []feed
	for i := range 4 {
		id := fmt.Sprintf("wal-%d", i)
		h, sc, err := generated(id, int64(100+i))
		if err != nil {
			t.Fatal(err)
		}
		feeds = append(feeds, feed{id, h, sc})
	}
	// wal-0 and wal-1 in the tree, with some events.
	st, err := boltlog.Open(work, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range feeds[:2] {
		if err := st.Create(ctx, f.h); err != nil {
			t.Fatal(err)
		}
		appendSome(t, st, f.id, f.sc, 12, 4)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// wal-2 and wal-3 created in the log only; appends to all four.
	st, err = boltlog.Open(work, opts, &boltlog.Options{WAL: boltlog.WALOptions{SegmentSize: walSweepSegment, ApplyInterval: time.Hour, ApplyBytes: 1 << 40}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range feeds[2:] {
		if err := st.Create(ctx, f.h); err != nil {
			t.Fatal(err)
		}
	}
	for range 6 {
		for _, f := range feeds {
			appendSome(t, st, f.id, f.sc, 6, 3)
		}
	}
	if rep := st.WALReport(); rep.Records != 0 {
		t.Fatalf("the subject's store replayed %d records on its Open: want a fresh log", rep.Records)
	}
	copyStore(t, work, s.path)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	paths, err := wal.Segments(boltlog.WALDir(s.path))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 3 {
		t.Fatalf("the subject's log has %d segments: want several", len(paths))
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		s.segs = append(s.segs, filepath.Base(p))
		s.sizes = append(s.sizes, fi.Size())
	}
	s.lastOff, s.lastLen = lastFrame(t, paths[len(paths)-1])
	first, err := strconv.ParseUint(strings.TrimSuffix(s.segs[0], ".wal"), 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := wal.Read(boltlog.WALDir(s.path), first-1, nil)
	if err != nil || rep.TornBytes != 0 {
		t.Fatalf("the subject's log reads %+v, %v: want it whole", rep, err)
	}
	s.records = rep.Records

	var torn bool
	s.full, torn, err = readContent(s.path, true)
	if err != nil || torn {
		t.Fatalf("the intact subject: torn %v, %+v", torn, err)
	}
	probe := filepath.Join(t.TempDir(), "dropped")
	s.copyTo(t, probe)
	zeroFrom(t, filepath.Join(boltlog.WALDir(filepath.Join(probe, "sessions.db")), s.segs[len(s.segs)-1]), s.lastOff)
	s.dropped, torn, err = readContent(filepath.Join(probe, "sessions.db"), true)
	if err != nil || torn {
		t.Fatalf("the subject without its last record: torn %v, %+v", torn, err)
	}
	if equalContent(s.full, s.dropped) {
		t.Fatal("dropping the last record changes nothing that a reader sees: the sweep could not tell")
	}
	return s
}

// appendSome appends n events from sc to session id, per events a batch
// (one log record each).
func appendSome(t *testing.T, st *boltlog.Log, id string, sc *codec.Scanner, n, per int) {
	t.Helper()
	var batch []codec.Event
	flush := func() {
		if len(batch) > 0 {
			if err := st.Append(context.Background(), id, batch); err != nil {
				t.Fatalf("append to %s: %+v", id, err)
			}
			batch = nil
		}
	}
	for range n {
		ev, err := sc.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, ev)
		if len(batch) == per {
			flush()
		}
	}
	flush()
}

// copyStore copies the store file at from and its log directory to to.
func copyStore(t *testing.T, from, to string) {
	t.Helper()
	copyFile(t, from, to)
	if err := os.MkdirAll(boltlog.WALDir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(boltlog.WALDir(from))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		copyFile(t, filepath.Join(boltlog.WALDir(from), e.Name()), filepath.Join(boltlog.WALDir(to), e.Name()))
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// copyTo makes dir a fresh copy of the subject (dir/sessions.db and its
// log).
func (s *walSubject) copyTo(t *testing.T, dir string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyStore(t, s.path, filepath.Join(dir, "sessions.db"))
}

// lastFrame returns the offset and size of the last record frame of the
// segment at path (frames are a 4-byte payload length, link, lsn,
// payload, crc; see eventlog/wal's doc), walking from the header.
func lastFrame(t *testing.T, path string) (off, size int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	off = -1
	for p := int64(32); p+20 <= int64(len(b)); {
		n := int64(binary.LittleEndian.Uint32(b[p:]))
		if binary.LittleEndian.Uint64(b[p+8:]) == 0 { // no lsn: the zeros after the last record
			break
		}
		off, size = p, 20+n
		p += size
	}
	if off < 0 {
		t.Fatalf("%s holds no record", path)
	}
	return off, size
}

func flipByte(t *testing.T, path string, off int64, mask byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= mask
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// zeroFrom zeroes the file at path from off to its end, as a torn write
// into a preallocated segment leaves it.
func zeroFrom(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	clear(b[off:])
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readContent opens the store at path (read-only or read-write, which
// applies the log), reads every session (head, header record and every
// record) and closes it; it returns a digest of each session and whether
// the open reported a torn tail.
func readContent(path string, readOnly bool) (map[string]string, bool, error) {
	ctx := context.Background()
	o := &eventlog.Options{ReadOnly: readOnly, NoSync: true}
	if !readOnly {
		o.NewValidator = rebuild.NewValidator
	}
	st, err := boltlog.Open(path, o, &boltlog.Options{LockTimeout: 10 * time.Second})
	if err != nil {
		return nil, false, err
	}
	torn := st.WALReport().TornBytes > 0
	out, err := digestAll(ctx, st)
	return out, torn, errors.CombineErrors(err, st.Close())
}

func digestAll(ctx context.Context, st *boltlog.Log) (map[string]string, error) {
	ids, err := st.SessionIDs(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, id := range ids {
		h, err := st.Head(ctx, id)
		if err != nil {
			return nil, err
		}
		hr, err := st.HeaderRecord(ctx, id)
		if err != nil {
			return nil, err
		}
		sum := sha256.New()
		sum.Write(hr)
		n := int64(0)
		err = st.Records(ctx, id, 0, func(seq int64, rec []byte) error {
			if seq != n {
				return errors.Newf("session %s: record seq %d, want %d", errors.Safe(id), errors.Safe(seq), errors.Safe(n))
			}
			n++
			sum.Write(rec)
			return nil
		})
		if err != nil {
			return nil, err
		}
		out[id] = fmt.Sprintf("next=%d turns=%d stored=%d chain=%x records=%d sum=%x", h.Next, h.Turns, h.StoredBytes, h.Chain, n, sum.Sum(nil))
	}
	return out, nil
}

func equalContent(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// probe opens the damaged copy in dir read-only, then read-write (which
// applies the log), and returns the outcome: "refused" (ErrCorrupt, by
// both opens alike), or the class classify gives what each read (the
// same); after the read-write Close, the log must be gone and the tree
// must read the same. Anything else is "silent", an error of the test,
// as is an unclassified refusal.
func (s *walSubject) probe(t *testing.T, dir, where string, classify func(torn bool, got map[string]string) string) string {
	t.Helper()
	path := filepath.Join(dir, "sessions.db")
	var outs []string
	var applied map[string]string
	for i, readOnly := range []bool{true, false} {
		got, torn, err := readContent(path, readOnly)
		switch {
		case err != nil && errors.Is(err, eventlog.ErrCorrupt):
			outs = append(outs, "refused")
			continue
		case err != nil:
			t.Errorf("%s: open %d (read-only %v) refused with an unclassified error: %+v", where, i, readOnly, err)
			return "unclassified"
		}
		c := classify(torn, got)
		if c == "" {
			t.Errorf("%s: open %d (read-only %v) reads %d sessions (torn tail reported: %v), neither refused nor a torn last record:\n got %v\nfull %v",
				where, i, readOnly, len(got), torn, got, s.full)
			return "silent"
		}
		outs = append(outs, c)
		applied = got
	}
	if outs[0] != outs[1] {
		t.Errorf("%s: the read-only and the read-write open disagree: %v", where, outs)
		return "silent"
	}
	if outs[1] != "refused" {
		if _, err := os.Stat(boltlog.WALDir(path)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the log is still there after a read-write Close (stat: %v)", where, err)
		}
		got, torn, err := readContent(path, true)
		if err != nil || torn || !equalContent(got, applied) {
			t.Errorf("%s: after the read-write Close applied the log, the store reads otherwise (torn %v, %v)", where, torn, err)
			return "silent"
		}
	}
	return outs[0]
}

// sweepFlag is the value of TestCorrupt's flag name (package stress_test
// defines it), "" if there is none.
func sweepFlag(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}
