package wal

import "os"

// zeroFill writes zeros to f over [off, end).
func zeroFill(f *os.File, off, end int64) error {
	buf := make([]byte, 1<<20)
	for off < end {
		n := int64(len(buf))
		if end-off < n {
			n = end - off
		}
		if _, err := f.WriteAt(buf[:n], off); err != nil {
			return err
		}
		off += n
	}
	return nil
}
