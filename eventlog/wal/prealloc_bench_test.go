package wal

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// BenchmarkPrealloc measures the fdatasync latency of one 1 KiB record
// written (a) by plain append, growing the file, (b) into a segment
// reserved with fallocate, (c) into a segment filled with zeros first. The
// segment is prepared outside the timer.
func BenchmarkPrealloc(b *testing.B) {
	const segSize = 64 << 20
	rec := make([]byte, 1024)
	for i := range rec {
		rec[i] = byte(i)
	}
	for _, mode := range []string{"append", "fallocate", "zerofill"} {
		b.Run(mode, func(b *testing.B) {
			f, err := os.OpenFile(filepath.Join(b.TempDir(), "seg"), os.O_CREATE|os.O_RDWR|os.O_EXCL, 0o644)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			switch mode {
			case "fallocate":
				if err := syscall.Fallocate(int(f.Fd()), 0, 0, segSize); err != nil {
					b.Fatal(err)
				}
			case "zerofill":
				if err := zeroFill(f, 0, segSize); err != nil {
					b.Fatal(err)
				}
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(rec)))
			b.ResetTimer()
			var off int64
			for i := 0; i < b.N; i++ {
				if off+int64(len(rec)) > segSize {
					off = 0
				}
				if _, err := f.WriteAt(rec, off); err != nil {
					b.Fatal(err)
				}
				if err := syscall.Fdatasync(int(f.Fd())); err != nil {
					b.Fatal(err)
				}
				off += int64(len(rec))
			}
		})
	}
}
