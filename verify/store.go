package verify

import (
	"fmt"

	"github.com/sessionlog/sessionlog/eventlog/wal"
)

// StoreChecker is a store that can check its own structures, below the
// sessions; *boltlog.Log is one.
type StoreChecker interface {
	// CheckMeta checks the two meta pages: bbolt opens a store whose
	// newest one is damaged on the older one, one commit back.
	CheckMeta() error
}

// CheckStore checks the store's own structures and returns what it finds, as
// corrupt findings whose Session is "" and Seq -1. Run it once per store,
// next to Session for each session.
func CheckStore(s StoreChecker) []Finding {
	var out []Finding
	if err := s.CheckMeta(); err != nil {
		out = append(out, Finding{Seq: -1, Kind: Corrupt, Message: err.Error(), Err: err})
	}
	return out
}

// WALReporter is a store with a write-ahead log that says what its Open
// found there; *boltlog.Log is one.
type WALReporter interface {
	// WALReport is what the Open read of the log: segments, records and
	// a torn tail it dropped.
	WALReport() wal.Report
	// WALReplayed is the number of records past what the tree holds.
	WALReplayed() int
}

// WAL is what the store's Open found in its write-ahead log.
type WAL struct {
	// Segments and Records count the segment files and intact records.
	Segments, Records int
	// Replay counts the records the tree does not hold yet: a read-write
	// Open applies them, a read-only one reads them into memory.
	Replay int
	// TornBytes and TornAt ("<segment file>@<offset>") say where a torn
	// tail was dropped; 0 and "" when none was.
	TornBytes int64
	TornAt    string
}

// CheckWAL returns what the store's Open found in its write-ahead log,
// and a Torn warning (Session "", Seq -1) when it dropped a torn tail: the
// last record, which a crash interrupted before it was synced and so
// before it was acknowledged. A damaged log is not a finding here: the
// store's Open refuses it (eventlog.ErrCorrupt, naming the segment and the
// offset). Run it once per store, next to CheckStore.
func CheckWAL(s WALReporter) (WAL, []Finding) {
	rep := s.WALReport()
	w := WAL{Segments: rep.Segments, Records: rep.Records, Replay: s.WALReplayed(), TornBytes: rep.TornBytes, TornAt: rep.TornAt}
	if rep.TornBytes == 0 {
		return w, nil
	}
	return w, []Finding{{Seq: -1, Kind: Torn, Warning: true,
		Message: fmt.Sprintf("write-ahead log: dropped a torn tail of %d bytes at %s (a write a crash interrupted, never acknowledged)",
			rep.TornBytes, rep.TornAt)}}
}
