package boltfmt

import (
	"bytes"
	"math"

	"github.com/cockroachdb/errors"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/errclass"
)

// Engine records: the store's own records (meta/format, meta/wal, a
// session's head), msgpack maps framed as version 1 records.

// MaxEngineRecord bounds an engine record's size when decoding.
const MaxEngineRecord = 1 << 16

// EncodeEngineRecord encodes v (MetaRecord, WALRecord or HeadRecord) with msgpack and
// frames it as a record.
func EncodeEngineRecord(v interface{}) ([]byte, error) {
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
	p, err := codec.Unframe(rec, MaxEngineRecord)
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
		return 0, errclass.Mark(errors.Wrap(err, "eventlog: engine record is not a map"), codec.ErrCorrupt)
	}
	r.Reset(payload)
	dec.Reset(r)
	dec.DisallowUnknownFields(strict)
	if err := dec.Decode(v); err != nil {
		return 0, errclass.Mark(errors.Wrap(err, "eventlog: decode engine record"), codec.ErrCorrupt)
	}
	if r.Len() != 0 {
		return 0, corruptf("eventlog: %d trailing bytes after the engine record", errors.Safe(r.Len()))
	}
	return n, nil
}

// DecodeMeta decodes meta/format, the one reader of that record (the
// store's and salvage's). Failures are ErrCorrupt (ErrUnsupported for a
// newer record version). Unknown fields are allowed (a newer
// format may add some): the version decides.
func DecodeMeta(rec []byte) (MetaRecord, error) {
	payload, err := engineRecordPayload(rec)
	if err != nil {
		return MetaRecord{}, err
	}
	var m MetaRecord
	if _, err := decodeStrict(payload, &m, false); err != nil {
		return MetaRecord{}, err
	}
	return m, nil
}

// DecodeWAL decodes meta/wal strictly.
func DecodeWAL(rec []byte) (WALRecord, error) {
	payload, err := engineRecordPayload(rec)
	if err != nil {
		return WALRecord{}, err
	}
	var w WALRecord
	if _, err := decodeStrict(payload, &w, true); err != nil {
		return WALRecord{}, err
	}
	if w.Applied < 0 {
		return WALRecord{}, corruptf("eventlog: meta/wal position %d is negative", errors.Safe(w.Applied))
	}
	return w, nil
}

// DecodeHead decodes a session's head record strictly: the frame, exactly
// its fields, values in range. It is the one reader of that record, the
// store's and salvage's. Failures are ErrCorrupt (ErrUnsupported for a
// newer record version).
func DecodeHead(rec []byte) (HeadRecord, error) {
	payload, err := engineRecordPayload(rec)
	if err != nil {
		return HeadRecord{}, err
	}
	var h HeadRecord
	n, err := decodeStrict(payload, &h, true)
	if err != nil {
		return HeadRecord{}, err
	}
	switch {
	case n != HeadRecordFields:
		return HeadRecord{}, corruptf("eventlog: head record has %d fields (want %d)", errors.Safe(n), errors.Safe(HeadRecordFields))
	case len(h.Chain) != 32:
		return HeadRecord{}, corruptf("eventlog: head record chain hash of %d bytes", errors.Safe(len(h.Chain)))
	case h.Next < 0 || h.Turns < 0 || h.Turns > h.Next || h.Stored < 0:
		return HeadRecord{}, corruptf("eventlog: head record counts out of range (next %d, turns %d, stored %d)",
			errors.Safe(h.Next), errors.Safe(h.Turns), errors.Safe(h.Stored))
	case math.IsNaN(h.LastTime) || math.IsInf(h.LastTime, 0):
		return HeadRecord{}, corruptf("eventlog: head record time is not finite")
	}
	return h, nil
}

// ToHead is the Head of a session whose decoded head record is h and
// whose header is hdr.
func ToHead(h HeadRecord, hdr codec.SessionHeader) eventlog.Head {
	out := eventlog.Head{Header: hdr, Next: h.Next, Turns: h.Turns, LastTime: h.LastTime, StoredBytes: h.Stored}
	copy(out.Chain[:], h.Chain)
	return out
}

// FromHead is the head record of hd.
func FromHead(hd *eventlog.Head) HeadRecord {
	return HeadRecord{Next: hd.Next, Turns: hd.Turns, LastTime: hd.LastTime, Chain: hd.Chain[:], Stored: hd.StoredBytes}
}
