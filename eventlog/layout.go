package eventlog

import (
	"bytes"
	"math"

	"github.com/cockroachdb/errors"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog/layout"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// Bucket names and keys, as bbolt takes them: package layout's frozen
// names (see the package doc).
var (
	bucketMeta     = []byte(layout.Meta)
	bucketSessions = []byte(layout.Sessions)
	bucketEvents   = []byte(layout.Events)
	keyFormat      = []byte(layout.Format)
	keyHeader      = []byte(layout.Header)
	keyHead        = []byte(layout.Head)
	keyStaging     = []byte(layout.Staging)
	keyWAL         = []byte(layout.WAL)
)

// FormatVersion is the store format this code reads and writes, recorded
// under meta/format. Part of the on-disk format. A store with a newer
// version is refused with ErrUnsupported, never misread (SPEC §8.4).
//
// Format 2 added the write-ahead log (meta/wal and the directory beside
// the file, see WALDir) and compressed event records (codec record
// version 2). Format 3 stores events in packs (codec record version 3),
// each under the seq of its last event (pack.go). A read-write Open
// upgrades a format 1 or 2 store in place, by its meta/format alone: it
// has no log to replay, or one this code replays, and its records, one
// event each under that event's seq, stay readable as they are.
const FormatVersion = 3

// walRecord is the write-ahead log position under meta/wal.
type walRecord = layout.WALRecord

// MaxSessionID bounds the length of a session id in bytes (it is a bbolt
// key, whose own limit is 32 KiB).
const MaxSessionID = 1024

// seqKeyLen is the length of an event key.
const seqKeyLen = layout.SeqKeyLen

// seqKey returns the key of seq (layout.AppendSeqKey).
func seqKey(seq int64) []byte {
	return layout.AppendSeqKey(make([]byte, 0, seqKeyLen), seq)
}

// parseSeqKey decodes an event key, checking its length and range.
func parseSeqKey(k []byte) (int64, error) {
	if len(k) != seqKeyLen {
		return 0, corruptf("eventlog: event key of %d bytes (want %d)", errors.Safe(len(k)), errors.Safe(seqKeyLen))
	}
	seq, ok := layout.ParseSeqKey(k)
	if !ok {
		return 0, corruptf("eventlog: event key %#x is out of range", errors.Safe(k))
	}
	return seq, nil
}

// metaRecord is the store's own record, under meta/format.
type metaRecord = layout.MetaRecord

// headRecord is a session's head, under sessions/<id>/head. Its presence
// publishes the session.
type headRecord = layout.HeadRecord

// maxEngineRecord bounds an engine record's size when decoding.
const maxEngineRecord = 1 << 16

// headRecordFields is the number of fields of headRecord: a stored head
// must have exactly these.
const headRecordFields = layout.HeadRecordFields

// encodeEngineRecord encodes v (metaRecord or headRecord) with msgpack and
// frames it as a record.
func encodeEngineRecord(v interface{}) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		return nil, errors.Wrap(err, "eventlog: encode engine record")
	}
	return codec.EncodeRecord(nil, buf.Bytes()), nil
}

// engineRecordPayload checks the frame of an engine record (the layout
// of codec.EncodeRecord) and returns its payload. Engine records hold
// msgpack kinds (binary) that codec.DecodeRecord refuses for events, so
// only the frame is checked (codec.Unframe).
func engineRecordPayload(rec []byte) ([]byte, error) {
	p, err := codec.Unframe(rec, maxEngineRecord)
	return p, errors.Wrap(err, "eventlog: engine record")
}

// decodeStrict decodes exactly one msgpack value from payload into v,
// refusing trailing bytes and (when strict) unknown fields, and returns
// the value's top-level map length. Failures are marked ErrCorrupt.
func decodeStrict(payload []byte, v interface{}, strict bool) (int, error) {
	r := bytes.NewReader(payload)
	dec := msgpack.NewDecoder(r)
	n, err := dec.DecodeMapLen()
	if err != nil {
		return 0, errclass.Mark(errors.Wrap(err, "eventlog: engine record is not a map"), ErrCorrupt)
	}
	r.Reset(payload)
	dec.Reset(r)
	dec.DisallowUnknownFields(strict)
	if err := dec.Decode(v); err != nil {
		return 0, errclass.Mark(errors.Wrap(err, "eventlog: decode engine record"), ErrCorrupt)
	}
	if r.Len() != 0 {
		return 0, corruptf("eventlog: %d trailing bytes after the engine record", errors.Safe(r.Len()))
	}
	return n, nil
}

// decodeMeta decodes meta/format. Unknown fields are allowed (a newer
// format may add some): the version decides.
func decodeMeta(rec []byte) (metaRecord, error) {
	payload, err := engineRecordPayload(rec)
	if err != nil {
		return metaRecord{}, err
	}
	var m metaRecord
	if _, err := decodeStrict(payload, &m, false); err != nil {
		return metaRecord{}, err
	}
	return m, nil
}

// decodeWAL decodes meta/wal strictly.
func decodeWAL(rec []byte) (walRecord, error) {
	payload, err := engineRecordPayload(rec)
	if err != nil {
		return walRecord{}, err
	}
	var w walRecord
	if _, err := decodeStrict(payload, &w, true); err != nil {
		return walRecord{}, err
	}
	if w.Applied < 0 {
		return walRecord{}, corruptf("eventlog: meta/wal position %d is negative", errors.Safe(w.Applied))
	}
	return w, nil
}

// decodeHead decodes a head record strictly: exactly the five fields,
// values in range.
func decodeHead(rec []byte) (headRecord, error) {
	payload, err := engineRecordPayload(rec)
	if err != nil {
		return headRecord{}, err
	}
	var h headRecord
	n, err := decodeStrict(payload, &h, true)
	if err != nil {
		return headRecord{}, err
	}
	switch {
	case n != headRecordFields:
		return headRecord{}, corruptf("eventlog: head record has %d fields (want %d)", errors.Safe(n), errors.Safe(headRecordFields))
	case len(h.Chain) != 32:
		return headRecord{}, corruptf("eventlog: head record chain hash of %d bytes", errors.Safe(len(h.Chain)))
	case h.Next < 0 || h.Turns < 0 || h.Turns > h.Next || h.Stored < 0:
		return headRecord{}, corruptf("eventlog: head record counts out of range (next %d, turns %d, stored %d)",
			errors.Safe(h.Next), errors.Safe(h.Turns), errors.Safe(h.Stored))
	case math.IsNaN(h.LastTime) || math.IsInf(h.LastTime, 0):
		return headRecord{}, corruptf("eventlog: head record time is not finite")
	}
	return h, nil
}

// toHead converts a decoded head record and header to the API's Head.
func toHead(h headRecord, hdr codec.SessionHeader) Head {
	out := Head{Header: hdr, Next: h.Next, Turns: h.Turns, LastTime: h.LastTime, StoredBytes: h.Stored}
	copy(out.Chain[:], h.Chain)
	return out
}

// fromHead is the head record of hd.
func fromHead(hd *Head) headRecord {
	return headRecord{Next: hd.Next, Turns: hd.Turns, LastTime: hd.LastTime, Chain: hd.Chain[:], Stored: hd.StoredBytes}
}
