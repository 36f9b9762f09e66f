package wal

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/errors"
)

// payloadFor is the payload of record lsn in the tests: its length varies
// so that frames do not line up.
func payloadFor(lsn uint64) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("<%d>", lsn)), int(lsn%7)+1)
}

// rec is a record as read back.
type rec struct {
	lsn     uint64
	payload string
}

// collect returns a read callback that appends to *got.
func collect(got *[]rec) func(uint64, []byte) error {
	return func(lsn uint64, p []byte) error {
		*got = append(*got, rec{lsn, string(p)})
		return nil
	}
}

// write opens dir and appends the records first..last, then closes.
func write(t testing.TB, dir string, opts Options, after, first, last uint64) {
	t.Helper()
	w, _, err := Open(dir, after, opts, func(uint64, []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	for lsn := first; lsn <= last; lsn++ {
		got, err := w.Append(payloadFor(lsn))
		if err != nil {
			t.Fatal(err)
		}
		if got != lsn {
			t.Fatalf("Append = lsn %d; want %d", got, lsn)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkRecords fails unless got is exactly the records first..last.
func checkRecords(t testing.TB, got []rec, first, last uint64) {
	t.Helper()
	if want := int(last - first + 1); len(got) != want {
		t.Fatalf("read %d records; want %d (lsn %d..%d)", len(got), want, first, last)
	}
	for i, r := range got {
		lsn := first + uint64(i)
		if r.lsn != lsn || r.payload != string(payloadFor(lsn)) {
			t.Fatalf("record %d = lsn %d %q; want lsn %d %q", i, r.lsn, r.payload, lsn, payloadFor(lsn))
		}
	}
}

var small = Options{SegmentSize: 512, NoSync: true}

func TestRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wal")
	write(t, dir, small, 0, 1, 100)
	segs, err := Segments(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) < 5 {
		t.Fatalf("%d segments; want several", len(segs))
	}
	for _, after := range []uint64{0, 1, 37, 99, 100} {
		var got []rec
		rep, err := Read(dir, after, collect(&got))
		if err != nil {
			t.Fatal(err)
		}
		checkRecords(t, got, after+1, 100)
		want := Report{Segments: len(segs), Records: 100, First: 1, Last: 100}
		if rep != want {
			t.Errorf("Read(after %d) report = %+v; want %+v", after, rep, want)
		}
	}
	// Reopen: lsns continue, across a new segment.
	write(t, dir, small, 0, 101, 150)
	var got []rec
	w, rep, err := Open(dir, 0, small, collect(&got))
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, 1, 150)
	if w.Last() != 150 || rep.Last != 150 {
		t.Errorf("Last = %d, report %d; want 150", w.Last(), rep.Last)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if _, err := w.Append(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close = %v; want ErrClosed", err)
	}
}

func TestSegmentCut(t *testing.T) {
	dir := t.TempDir()
	w, _, err := Open(dir, 0, small, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	big := bytes.Repeat([]byte("x"), 2000) // larger than a segment
	for i, p := range [][]byte{[]byte("a"), big, []byte("b"), nil} {
		if _, err := w.Append(p); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	segs, _ := Segments(dir)
	want := []string{segmentName(1), segmentName(2), segmentName(3)}
	if len(segs) != len(want) {
		t.Fatalf("segments %v; want %v", segs, want)
	}
	for i := range segs {
		if filepath.Base(segs[i]) != want[i] {
			t.Errorf("segment %d = %s; want %s", i, segs[i], want[i])
		}
	}
	var sum int64
	for _, p := range segs {
		fi, _ := os.Stat(p)
		sum += fi.Size()
	}
	if w.Size() != sum {
		t.Errorf("Size = %d; want %d", w.Size(), sum)
	}
	if _, err := w.Append(make([]byte, MaxPayload+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Append(too large) = %v; want ErrTooLarge", err)
	}
	if lsn, err := w.Append([]byte("c")); err != nil || lsn != 5 {
		t.Errorf("Append after a refusal = %d, %v; want 5", lsn, err)
	}
}

func TestRelease(t *testing.T) {
	dir := t.TempDir()
	w, _, err := Open(dir, 0, small, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for lsn := uint64(1); lsn <= 60; lsn++ {
		if _, err := w.Append(payloadFor(lsn)); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := Segments(dir)
	if len(before) < 4 {
		t.Fatalf("%d segments; want at least 4", len(before))
	}
	firsts := make([]uint64, len(before))
	for i, p := range before {
		firsts[i], _ = parseSegmentName(filepath.Base(p))
	}
	for _, applied := range []uint64{0, firsts[1] - 2, firsts[1] - 1, firsts[2], firsts[3] - 1, 60, 1000} {
		if err := w.Release(applied); err != nil {
			t.Fatal(err)
		}
		after, _ := Segments(dir)
		// Expected: every segment but the last whose successor starts at or below applied+1.
		want := 0
		for i := 0; i+1 < len(firsts); i++ {
			if firsts[i+1]-1 <= applied {
				want = i + 1
			}
		}
		if got := len(before) - len(after); got != want {
			t.Errorf("Release(%d) deleted %d segments; want %d", applied, got, want)
		}
		var got []rec
		rep, err := Read(dir, min(applied, 60), collect(&got))
		if err != nil {
			t.Fatalf("Read after Release(%d): %v", applied, err)
		}
		if applied < 60 {
			checkRecords(t, got, applied+1, 60)
		}
		if rep.Last != 60 {
			t.Errorf("after Release(%d), Last = %d; want 60", applied, rep.Last)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// All applied: reopen continues at 61 from the one segment left.
	w2, rep, err := Open(dir, 60, small, collect(new([]rec)))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Segments != 1 || w2.Last() != 60 {
		t.Errorf("reopen: %+v, Last %d; want 1 segment, Last 60", rep, w2.Last())
	}
	if lsn, err := w2.Append([]byte("z")); err != nil || lsn != 61 {
		t.Errorf("Append = %d, %v; want 61", lsn, err)
	}
	w2.Close()
	if err := Remove(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("dir after Remove: %v", err)
	}
	if err := Remove(dir); err != nil {
		t.Errorf("Remove(missing) = %v", err)
	}
	// A removed WAL reopens empty, continuing after the applied lsn.
	w3, rep, err := Open(dir, 61, small, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w3.Close()
	if lsn, err := w3.Append([]byte("y")); err != nil || lsn != 62 || rep != (Report{}) {
		t.Errorf("Append after Remove = %d, %v, report %+v; want 62", lsn, err, rep)
	}
}

func TestReadMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none")
	rep, err := Read(dir, 5, nil)
	if err != nil || rep != (Report{}) {
		t.Fatalf("Read(missing) = %+v, %v", rep, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Read created %s", dir)
	}
}

func TestGaps(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, small, 10, 11, 40)
	// Records 1..10 are missing when bbolt applied only up to 5.
	if _, err := Read(dir, 5, collect(new([]rec))); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Read(after 5) = %v; want ErrCorrupt (gap)", err)
	}
	// The WAL ends before what bbolt applied.
	if _, err := Read(dir, 41, collect(new([]rec))); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Read(after 41) = %v; want ErrCorrupt (behind)", err)
	}
	// A middle segment deleted: a gap.
	segs, _ := Segments(dir)
	if err := os.Remove(segs[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir, 10, collect(new([]rec))); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Read with a segment missing = %v; want ErrCorrupt", err)
	}
	// fn's error is returned.
	stop := errors.New("stop")
	if _, err := Read(t.TempDir(), 0, nil); err != nil {
		t.Fatal(err)
	}
	dir2 := t.TempDir()
	write(t, dir2, small, 0, 1, 3)
	if _, _, err := Open(dir2, 0, small, func(uint64, []byte) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("Open with a failing fn = %v; want it", err)
	}
}

func TestBroken(t *testing.T) {
	dir := t.TempDir()
	w, _, err := Open(dir, 0, small, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Append([]byte("a")); err != nil {
		t.Fatal(err)
	}
	fail := errors.New("injected write failure")
	w.writeHook = func(*os.File, []byte, int64) error { return fail }
	if _, err := w.Append([]byte("b")); !errors.Is(err, ErrBroken) || !errors.Is(err, fail) {
		t.Fatalf("Append with a failing write = %v; want ErrBroken and the cause", err)
	}
	w.writeHook = nil
	if _, err := w.Append([]byte("c")); !errors.Is(err, ErrBroken) {
		t.Fatalf("Append after a failed write = %v; want ErrBroken", err)
	}
	w.Close()
	// Reopened, it continues after the last record that was written.
	w2, rep, err := Open(dir, 0, small, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if lsn, err := w2.Append([]byte("d")); err != nil || lsn != 2 || rep.Last != 1 {
		t.Errorf("reopened Append = %d, %v, Last %d; want 2", lsn, err, rep.Last)
	}
	// A closed file underneath: the real write fails.
	w2.f.Close()
	if _, err := w2.Append([]byte("e")); !errors.Is(err, ErrBroken) {
		t.Errorf("Append to a closed file = %v; want ErrBroken", err)
	}
}

// TestConcurrentRelease: the applier releases while the committer appends;
// every record not yet released survives.
func TestConcurrentRelease(t *testing.T) {
	dir := t.TempDir()
	w, _, err := Open(dir, 0, small, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 400
	done := make(chan error)
	go func() {
		for {
			last := w.Last()
			if err := w.Release(last / 2); err != nil {
				done <- err
				return
			}
			if last >= n {
				done <- nil
				return
			}
		}
	}()
	for lsn := uint64(1); lsn <= n; lsn++ {
		if _, err := w.Append(payloadFor(lsn)); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got []rec
	rep, err := Read(dir, n/2, collect(&got))
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, n/2+1, n)
	if rep.First <= 1 {
		t.Errorf("nothing was released: %+v", rep)
	}
}

// TestPrefill: a segment is filled with zeros 4 MiB ahead of its records,
// never past SegmentSize, and reads back through its zero tail.
func TestPrefill(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 10 << 20, NoSync: true}
	w, _, err := Open(dir, 0, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	fileSize := func() int64 {
		segs, _ := Segments(dir)
		fi, err := os.Stat(segs[len(segs)-1])
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	p := make([]byte, 1<<20)
	for i, want := range []int64{4<<20 + headerSize, 4<<20 + headerSize, 4<<20 + headerSize, 8<<20 + headerSize, 8<<20 + headerSize, 8<<20 + headerSize, 8<<20 + headerSize, 10 << 20} {
		if _, err := w.Append(p); err != nil {
			t.Fatal(err)
		}
		if got := fileSize(); got != want || w.Size() != want {
			t.Errorf("after %d MiB records: file %d, Size %d; want %d", i+1, got, w.Size(), want)
		}
	}
	w.Close()
	rep, err := Read(dir, 0, nil)
	if err != nil || rep.Records != 8 || rep.TornBytes != 0 {
		t.Errorf("Read = %+v, %v; want 8 records", rep, err)
	}
}

// TestOnCut: OnCut names each segment as it is cut, before its file
// exists, and the names are the segments the directory ends up with.
func TestOnCut(t *testing.T) {
	dir := t.TempDir()
	var cuts []string
	opts := Options{SegmentSize: 256, NoSync: true, OnCut: func(name string) {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("OnCut(%s): the segment exists already (stat: %v)", name, err)
		}
		cuts = append(cuts, name)
	}}
	write(t, dir, opts, 0, 1, 40)
	paths, err := Segments(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 3 {
		t.Fatalf("%d segments of 256 bytes for 40 records: the cut was not exercised", len(paths))
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	if fmt.Sprint(cuts) != fmt.Sprint(names) {
		t.Fatalf("OnCut named %v; the directory holds %v", cuts, names)
	}
}
