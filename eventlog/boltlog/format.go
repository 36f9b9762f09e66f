package boltlog

import (
	"os"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/boltfmt"
)

// FormatVersion is the store format this code reads and writes, recorded
// under meta/format (package boltfmt holds the format). A store with a
// newer version is refused with ErrUnsupported, never misread (docs/format.md#format-versions).
const FormatVersion = boltfmt.FormatVersion

// CheckMeta checks bbolt's two meta pages (boltfmt.CheckMeta): a damaged
// one, which bbolt silently replaces by the older one, is ErrCorrupt
// naming the page and the transaction the store now reads.
func (l *Log) CheckMeta() error {
	f, err := os.Open(l.path)
	if err != nil {
		return errors.Wrapf(err, "eventlog: read meta pages of %s", errors.Safe(l.path))
	}
	defer f.Close()
	return boltfmt.CheckMeta(f)
}
