package wal

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead reads a segment made of arbitrary bytes, as the last segment or
// (last false) followed by an unwritten one. Read must not panic, and the
// records it returns must be exactly the frames that open the segment:
// re-encoding them after its header reproduces its first bytes.
func FuzzRead(f *testing.F) {
	dir := f.TempDir()
	write(f, dir, Options{SegmentSize: 300, NoSync: true}, 0, 1, 12)
	paths, err := Segments(dir)
	if err != nil || len(paths) < 2 {
		f.Fatalf("seed WAL: %v, %d segments", err, len(paths))
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, true)
		f.Add(b, false)
		f.Add(b[:len(b)/2], true)
	}
	f.Fuzz(func(t *testing.T, data []byte, last bool) {
		first := uint64(1)
		if len(data) >= 24 {
			first = binary.LittleEndian.Uint64(data[16:24])
		}
		after := first - 1
		if first == 0 {
			after = 0
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, segmentName(first)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if !last && first != ^uint64(0) {
			if err := os.WriteFile(filepath.Join(dir, segmentName(first+1)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var got []rec
		rep, err := Read(dir, after, collect(&got))
		if err != nil {
			return
		}
		if len(got) == 0 {
			return
		}
		h, bad := parseHeader(data)
		if bad != "" {
			t.Fatalf("records read from a segment with a bad header: %s", bad)
		}
		want := appendHeader(nil, h)
		link := h.link
		for i, r := range got {
			if r.lsn != h.first+uint64(i) {
				t.Fatalf("record %d has lsn %d; want %d", i, r.lsn, h.first+uint64(i))
			}
			want, link = appendFrame(want, r.lsn, link, []byte(r.payload))
		}
		if !bytes.HasPrefix(data, want) {
			t.Fatalf("the records read do not re-encode to the segment's first %d bytes", len(want))
		}
		if rep.Records != len(got) || rep.Last != got[len(got)-1].lsn {
			t.Fatalf("report %+v for %d records", rep, len(got))
		}
	})
}
