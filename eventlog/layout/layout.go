package layout

import (
	"encoding/binary"
	"math"
)

// Bucket names and keys. Strings, so that nobody can change them; callers
// keep []byte copies for bbolt.
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

// SeqKeyLen is the length of an event key: the seq as a big-endian
// uint64, so that bbolt's byte order is seq order.
const SeqKeyLen = 8

// AppendSeqKey appends the key of seq to b.
func AppendSeqKey(b []byte, seq int64) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(seq))
}

// ParseSeqKey decodes an event key; ok is false for a key of the wrong
// length or out of the int64 range.
func ParseSeqKey(k []byte) (seq int64, ok bool) {
	if len(k) != SeqKeyLen {
		return 0, false
	}
	v := binary.BigEndian.Uint64(k)
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
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
	// Chain is the running chain hash (SPEC §8.2), 32 bytes.
	Chain []byte `msgpack:"c"`
	// Stored is the sum of the sizes of the stored event records.
	Stored int64 `msgpack:"b"`
}

// HeadRecordFields is the number of fields of HeadRecord: a stored head
// has exactly these.
const HeadRecordFields = 5
