package eventlog

import (
	"os"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/boltfmt"
)

// FormatVersion is the store format this code reads and writes, recorded
// under meta/format (package boltfmt holds the format). A store with a
// newer version is refused with ErrUnsupported, never misread (SPEC §8.4).
const FormatVersion = boltfmt.FormatVersion

// MaxSessionID bounds the length of a session id in bytes (it is a bbolt
// key, whose own limit is 32 KiB).
const MaxSessionID = 1024

// toHead converts a decoded head record and header to the API's Head.
func toHead(h boltfmt.HeadRecord, hdr codec.SessionHeader) Head {
	out := Head{Header: hdr, Next: h.Next, Turns: h.Turns, LastTime: h.LastTime, StoredBytes: h.Stored}
	copy(out.Chain[:], h.Chain)
	return out
}

// fromHead is the head record of hd.
func fromHead(hd *Head) boltfmt.HeadRecord {
	return boltfmt.HeadRecord{Next: hd.Next, Turns: hd.Turns, LastTime: hd.LastTime, Chain: hd.Chain[:], Stored: hd.StoredBytes}
}

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
