package boltfmt

import (
	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
)

// A session's events bucket holds values, each under the seq of the last
// event it holds: a pack of consecutive events (codec.AppendPack), which
// is all this code writes, or one event's record, which stores written
// before format 3 hold. Keying a value by its last seq makes a seek for
// any seq land on the value that holds it, never past it (onto a page
// that may be damaged).

// PutEvents writes the events of recs, their records as the log holds
// them (codec.EncodeEventRecord), from seq first on, into the session's
// events bucket, in packs of up to codec.PackTarget bytes. The bucket's
// last value, when it is a pack with room left, is re-opened and filled
// first. It checks that the bucket ends at seq first-1.
func PutEvents(eb *bolt.Bucket, session string, first int64, recs [][]byte) error {
	eb.FillPercent = 1.0 // append-only: full pages
	var open [][]byte    // payloads of the pack being filled
	size := 0            // their codec.PackSize
	start := first       // seq of open[0]
	k, v := eb.Cursor().Last()
	switch {
	case k == nil && first == 0:
	case k == nil:
		return corruptf("eventlog: session %q: appending seq %d to an empty events bucket", errors.Safe(session), errors.Safe(first))
	default:
		last, err := ParseSeqKey(k)
		if err != nil {
			return errors.Wrapf(err, "eventlog: session %q: the last event key", errors.Safe(session))
		}
		if last != first-1 {
			return corruptf("eventlog: session %q: appending seq %d after stored seq %d", errors.Safe(session), errors.Safe(first), errors.Safe(last))
		}
		if codec.IsPack(v) && len(v) < codec.PackTarget {
			payloads, err := codec.DecodePack(v)
			if err != nil {
				return errors.Wrapf(err, "eventlog: session %q: the pack ending at seq %d", errors.Safe(session), errors.Safe(last))
			}
			for _, p := range payloads {
				size += codec.PackSize(p)
			}
			if size < codec.PackTarget {
				open, start = payloads, last-int64(len(payloads))+1
				if err := eb.Delete(k); err != nil {
					return errors.Wrapf(err, "eventlog: session %q seq %d", errors.Safe(session), errors.Safe(last))
				}
			} else {
				size = 0
			}
		}
	}
	var raw []byte
	flush := func() error {
		if len(open) == 0 {
			return nil
		}
		// bbolt keeps the value until the transaction ends: a new buffer each.
		var pack []byte
		pack, raw = codec.AppendPack(nil, raw, open)
		last := start + int64(len(open)) - 1
		if err := eb.Put(SeqKey(last), pack); err != nil {
			return errors.Wrapf(err, "eventlog: session %q seq %d", errors.Safe(session), errors.Safe(last))
		}
		start, open, size = last+1, open[:0], 0
		return nil
	}
	for i, rec := range recs {
		p, err := codec.Unframe(rec, codec.MaxRecord)
		if err != nil {
			return errors.Wrapf(err, "eventlog: session %q seq %d", errors.Safe(session), errors.Safe(first+int64(i)))
		}
		if len(open) > 0 && size+codec.PackSize(p) > codec.PackTarget {
			if err := flush(); err != nil {
				return err
			}
		}
		open = append(open, p)
		size += codec.PackSize(p)
	}
	return flush()
}

// Unpack returns the payloads of the value v stored under key last, and
// the seq of the first: a pack's events, or one record's. Frames are
// checked (codec.DecodePack, codec.Unframe); payloads are not. A pack's
// payloads are a new buffer; a record's aliases v.
func Unpack(last int64, v []byte) (first int64, payloads [][]byte, err error) {
	if codec.IsPack(v) {
		payloads, err = codec.DecodePack(v)
		if err != nil {
			return 0, nil, err
		}
		if int64(len(payloads))-1 > last {
			return 0, nil, corruptf("eventlog: a pack of %d events under key seq %d", errors.Safe(len(payloads)), errors.Safe(last))
		}
		return last - int64(len(payloads)) + 1, payloads, nil
	}
	p, err := codec.Unframe(v, codec.MaxRecord)
	if err != nil {
		return 0, nil, err
	}
	return last, [][]byte{p}, nil
}

// ValueRecords calls fn with the event records that the value v of a
// session's events bucket, stored under key seq last, holds, from seq
// from on: a pack's events, each framed as a version 1 record
// (codec.EncodeRecord), at their seqs; one event's record as it is, at
// last. A pack that does not decode is passed whole, for the caller's
// codec.DecodeRecord to refuse (ErrCorrupt), at from when from <= last
// (a walk's next seq, which the pack holds when it is whole), else at
// last. It is how Records and salvage read a value: the records they
// pass on are the events', as verify checks them. fn's error is
// returned as is.
func ValueRecords(last int64, v []byte, from int64, fn func(seq int64, rec []byte) error) error {
	if !codec.IsPack(v) {
		return fn(last, v)
	}
	first, payloads, err := Unpack(last, v)
	if err != nil {
		return fn(min(max(from, 0), last), v)
	}
	var rec []byte
	for i, p := range payloads {
		if seq := first + int64(i); seq >= from {
			rec = codec.EncodeRecord(rec[:0], p)
			if err := fn(seq, rec); err != nil {
				return err
			}
		}
	}
	return nil
}
