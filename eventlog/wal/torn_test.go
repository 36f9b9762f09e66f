package wal

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
)

// snapshot holds the bytes of every segment of a WAL.
type snapshot struct {
	names []string
	data  [][]byte
}

func takeSnapshot(t testing.TB, dir string) snapshot {
	t.Helper()
	paths, err := Segments(dir)
	if err != nil {
		t.Fatal(err)
	}
	var s snapshot
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s.names = append(s.names, filepath.Base(p))
		s.data = append(s.data, b)
	}
	return s
}

// restore writes s into a fresh directory, the last segment replaced by
// last when it is not nil.
func (s snapshot) restore(t testing.TB, last []byte) string {
	t.Helper()
	dir := t.TempDir()
	for i, name := range s.names {
		b := s.data[i]
		if i == len(s.names)-1 && last != nil {
			b = last
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// lastRecord returns the offset of the last record in the last segment
// and the offset after it.
func lastRecord(t testing.TB, s snapshot) (start, end int) {
	t.Helper()
	data := s.data[len(s.data)-1]
	start = -1
	for off := headerSize; ; {
		f, ok := parseFrame(data[off:])
		if !ok {
			if start < 0 {
				t.Fatal("the last segment holds no record")
			}
			return start, off
		}
		start = off
		off += f.size
	}
}

func TestTornTail(t *testing.T) {
	const n = 30
	src := t.TempDir()
	write(t, src, small, 0, 1, n)
	s := takeSnapshot(t, src)
	if len(s.names) < 3 {
		t.Fatalf("%d segments; want at least 3", len(s.names))
	}
	start, end := lastRecord(t, s)
	last := s.data[len(s.data)-1]
	name := s.names[len(s.names)-1]
	tests := 0
	for cut := start; cut < end; cut++ {
		for _, how := range []string{"truncated", "zero-filled"} {
			t.Run(fmt.Sprintf("%s@%d", how, cut), func(t *testing.T) {
				b := append([]byte(nil), last[:cut]...)
				if how == "zero-filled" {
					b = append(b, make([]byte, len(last)-cut)...)
				}
				dir := s.restore(t, b)
				var got []rec
				w, rep, err := Open(dir, 0, small, collect(&got))
				if err != nil {
					t.Fatal(err)
				}
				checkRecords(t, got, 1, n-1)
				switch {
				case cut == start:
					if rep.TornBytes != 0 || rep.TornAt != "" {
						t.Errorf("no tail, but report %+v", rep)
					}
				case rep.TornBytes <= 0 || rep.TornBytes > int64(cut-start) || rep.TornAt != fmt.Sprintf("%s@%d", name, start):
					t.Errorf("report %+v; want a torn tail of at most %d bytes at %s@%d", rep, cut-start, name, start)
				}
				if rep.Last != n-1 || rep.Records != n-1 {
					t.Errorf("report %+v; want %d records", rep, n-1)
				}
				if lsn, err := w.Append(payloadFor(n)); err != nil || lsn != n {
					t.Fatalf("Append = %d, %v; want %d", lsn, err, n)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				got = nil
				rep, err = Read(dir, 0, collect(&got))
				if err != nil {
					t.Fatal(err)
				}
				checkRecords(t, got, 1, n)
				if rep.TornBytes != 0 {
					t.Errorf("reread after the append: %+v", rep)
				}
			})
			tests++
		}
	}
	if tests < 20 {
		t.Fatalf("only %d cuts", tests)
	}
}

// TestUnwrittenSegment: a last segment shorter than a header (created, never
// written) is dropped, and Open removes it.
func TestUnwrittenSegment(t *testing.T) {
	src := t.TempDir()
	write(t, src, small, 0, 1, 20)
	s := takeSnapshot(t, src)
	for _, size := range []int{0, 1, headerSize - 1} {
		dir := s.restore(t, nil)
		hdr := appendHeader(nil, header{first: 21})
		if err := os.WriteFile(filepath.Join(dir, segmentName(21)), hdr[:size], 0o644); err != nil {
			t.Fatal(err)
		}
		var got []rec
		rep, err := Read(dir, 0, collect(&got))
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		checkRecords(t, got, 1, 20)
		if rep.Segments != len(s.names)+1 {
			t.Errorf("size %d: report %+v", size, rep)
		}
		w, _, err := Open(dir, 0, small, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, segmentName(21))); !os.IsNotExist(err) {
			t.Errorf("size %d: unwritten segment still there: %v", size, err)
		}
		if lsn, err := w.Append(payloadFor(21)); err != nil || lsn != 21 {
			t.Errorf("Append = %d, %v", lsn, err)
		}
		w.Close()
		got = nil
		if _, err := Read(dir, 0, collect(&got)); err != nil {
			t.Fatal(err)
		}
		checkRecords(t, got, 1, 21)
	}
}

// TestDamage flips every byte of a three-segment WAL, one at a time. The
// outcome is ErrCorrupt, or a reported torn tail when the flip is in the
// final record of the last segment (which then is dropped) or after it
// (no record dropped). Never a different or silently shorter sequence.
func TestDamage(t *testing.T) {
	const n = 30
	src := t.TempDir()
	write(t, src, small, 0, 1, n)
	s := takeSnapshot(t, src)
	if len(s.names) != 3 {
		t.Fatalf("%d segments; want 3", len(s.names))
	}
	start, end := lastRecord(t, s)
	counts := map[string]int{}
	for seg := range s.data {
		for off := range s.data[seg] {
			for _, mask := range []byte{0x01, 0xff} {
				data := append([][]byte(nil), s.data...)
				data[seg] = append([]byte(nil), s.data[seg]...)
				data[seg][off] ^= mask
				dir := snapshot{s.names, data}.restore(t, nil)
				var got []rec
				rep, err := Read(dir, 0, collect(&got))
				where := fmt.Sprintf("%s@%d^%02x", s.names[seg], off, mask)
				lastSeg := seg == len(s.data)-1
				switch {
				case errors.Is(err, ErrCorrupt):
					counts["corrupt"]++
				case err != nil:
					t.Fatalf("%s: %v", where, err)
				case lastSeg && off >= start && off < end:
					counts["torn final record"]++
					checkRecords(t, got, 1, n-1)
					if rep.TornAt != fmt.Sprintf("%s@%d", s.names[seg], start) {
						t.Errorf("%s: report %+v", where, rep)
					}
				case lastSeg && off >= end:
					counts["junk after the end"]++
					checkRecords(t, got, 1, n)
					if rep.TornBytes == 0 {
						t.Errorf("%s: junk not reported: %+v", where, rep)
					}
				default:
					t.Errorf("%s: read %d records without an error (report %+v)", where, len(got), rep)
				}
			}
		}
	}
	t.Logf("outcomes: %v", counts)
	for _, k := range []string{"corrupt", "torn final record", "junk after the end"} {
		if counts[k] == 0 {
			t.Errorf("no flip had the outcome %q", k)
		}
	}
}

// TestIrregularTail: bytes after a bad frame that make the torn-tail scan
// check a crc at many offsets exhaust its budget, and the read refuses the
// segment (ErrCorrupt) rather than drop the tail, in bounded time.
func TestIrregularTail(t *testing.T) {
	b := appendHeader(nil, header{first: 1})
	b, _ = appendFrame(b, 1, 0, []byte("one"))
	for len(b) < 1<<20 {
		b = binary.LittleEndian.AppendUint32(b, 1000) // a length that fits
		b = binary.LittleEndian.AppendUint32(b, 0)    // link
		b = binary.LittleEndian.AppendUint64(b, 2)    // the lsn that would follow
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, segmentName(1)), b, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := Read(dir, 0, nil)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Read = %v; want ErrCorrupt", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Read took %v", d)
	}
}
