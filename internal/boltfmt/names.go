package boltfmt

import (
	"encoding/binary"
	"math"

	"github.com/cockroachdb/errors"
)

// FormatVersion is the store format this code reads and writes, recorded
// under meta/format. Part of the on-disk format. A store with a newer
// version is refused with ErrUnsupported, never misread (docs/format.md#format-versions).
//
// Format 2 added the write-ahead log (meta/wal and the directory beside
// the file, see WALDir) and compressed event records (codec record
// version 2). Format 3 stores events in packs (codec record version 3),
// each under the seq of its last event (values.go). A read-write Open
// upgrades a format 1 or 2 store in place, by its meta/format alone: it
// has no log to replay, or one this code replays, and its records, one
// event each under that event's seq, stay readable as they are.
const FormatVersion = 3

// PageSize is the bbolt page size of the stores this code creates
// (bolt.Options.PageSize; an existing store keeps its own). Each session
// has buckets of its own, whose last pages are partly empty: measured
// (2026-12-01) on the DSH corpus, 133 sessions of 93 events on average in
// packs, the pages took 0.44× the sessions' JSONL with 1 KiB pages, 0.53×
// with 2 KiB and 0.68× with 4 KiB (the OS page size here).
const PageSize = 1024

// Bucket names and keys. Strings, so that nobody can change them; the
// []byte copies below are what bbolt takes.
const (
	// Meta is the top-level bucket of the store's own records.
	Meta = "meta"
	// Format is the key of the format record (MetaRecord) in Meta.
	Format = "format"
	// WAL is the key of the write-ahead log record (WALRecord) in Meta:
	// the position up to which the log's records are applied. Absent
	// until the first apply (format 2 on).
	WAL = "wal"
	// Sessions is the top-level bucket holding one bucket per session,
	// named by the session id.
	Sessions = "sessions"
	// Events is a session bucket's sub-bucket of event records, keyed by
	// SeqKey.
	Events = "events"
	// Header is the key of a session's header-line record.
	Header = "header"
	// Head is the key of a session's head record (HeadRecord); its
	// presence publishes the session.
	Head = "head"
	// Staging marks a session bucket an Import or Fork is still filling;
	// the publishing transaction deletes it as it writes the head. A
	// bucket with neither is damaged, never "unpublished".
	Staging = "staging"
)

// The bucket names and keys as bbolt takes them. Never modified.
var (
	BucketMeta     = []byte(Meta)
	BucketSessions = []byte(Sessions)
	BucketEvents   = []byte(Events)
	KeyFormat      = []byte(Format)
	KeyHeader      = []byte(Header)
	KeyHead        = []byte(Head)
	KeyStaging     = []byte(Staging)
	KeyWAL         = []byte(WAL)
)

// SeqKeyLen is the length of an event key: the seq as a big-endian
// uint64, so that bbolt's byte order is seq order.
const SeqKeyLen = 8

// AppendSeqKey appends the key of seq to b.
func AppendSeqKey(b []byte, seq int64) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(seq))
}

// SeqKey returns the key of seq, in a new slice.
func SeqKey(seq int64) []byte {
	return AppendSeqKey(make([]byte, 0, SeqKeyLen), seq)
}

// ParseSeqKey decodes an event key, checking its length and range; a bad
// key is ErrCorrupt.
func ParseSeqKey(k []byte) (int64, error) {
	if len(k) != SeqKeyLen {
		return 0, corruptf("eventlog: event key of %d bytes (want %d)", errors.Safe(len(k)), errors.Safe(SeqKeyLen))
	}
	v := binary.BigEndian.Uint64(k)
	if v > math.MaxInt64 {
		return 0, corruptf("eventlog: event key %#x is out of range", errors.Safe(k))
	}
	return int64(v), nil
}

// MetaRecord is the store's own record, under meta/format, framed as a
// record (codec.EncodeRecord) around msgpack. Tags are permanent.
type MetaRecord struct {
	// Format is the store format version.
	Format int64 `msgpack:"f"`
}

// WALRecord is the store's write-ahead log position, under meta/wal,
// framed as a record around msgpack. Tags are permanent.
type WALRecord struct {
	// Applied is the lsn of the last write-ahead log record whose writes
	// the tree holds; the log's records after it are replayed on open.
	Applied int64 `msgpack:"a"`
}

// HeadRecord is a session's head, under sessions/<id>/head, framed as a
// record around msgpack. Tags are permanent.
type HeadRecord struct {
	// Next is the seq of the next event (= number of events stored).
	Next int64 `msgpack:"n"`
	// Turns counts turn/start events.
	Turns int64 `msgpack:"t"`
	// LastTime is the time of the last event, createdAt when there is none.
	LastTime float64 `msgpack:"l"`
	// Chain is the running chain hash (docs/rules.md#chain-hash), 32 bytes.
	Chain []byte `msgpack:"c"`
	// Stored is the sum of the sizes of the stored event records.
	Stored int64 `msgpack:"b"`
}

// HeadRecordFields is the number of fields of HeadRecord: a stored head
// has exactly these.
const HeadRecordFields = 5
