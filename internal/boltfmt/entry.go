package boltfmt

import (
	"encoding/binary"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog/wal"
	"github.com/sessionlog/sessionlog/internal/errclass"
)

// The payload of a write-ahead log record: the writes of one group commit,
// in the order the committer took them. The wal package frames it (length,
// lsn, chain link, CRC32C); inside, the stored records keep their own
// frames (codec.EncodeEventRecord, each with its CRC).
//
//	entry   = version(1) uvarint(number of ops) op*
//	op      = kind id body
//	kind    = 'c' (create) | 'a' (append)
//	id      = uvarint(len) bytes
//	create  = bytes(header record) bytes(head record)
//	append  = uvarint(first seq) uvarint(n) bytes(event record)×n bytes(head record)
//	bytes   = uvarint(len) bytes
const entryVersion = 1

const (
	opCreate = 'c'
	opAppend = 'a'
)

// Op is one write of a write-ahead log record: a session's creation or
// an append to it.
type Op struct {
	ID string
	// HeaderRec is a creation's header record (nil for an append).
	HeaderRec []byte
	// First is the seq of an append's Recs[0]; Recs are its event records.
	First int64
	Recs  [][]byte
	// HeadRec is the session's head record after the write.
	HeadRec []byte
}

// Size is the number of record bytes the op holds.
func (op *Op) Size() int64 {
	n := int64(len(op.HeaderRec) + len(op.HeadRec))
	for _, r := range op.Recs {
		n += int64(len(r))
	}
	return n
}

// Entry is one write-ahead log record: the writes of one group commit.
type Entry struct {
	LSN  uint64
	Ops  []Op
	Size int64 // the ops' record bytes
}

// EncodeEntry appends the payload of ops to dst.
func EncodeEntry(dst []byte, ops []Op) []byte {
	dst = append(dst, entryVersion)
	dst = binary.AppendUvarint(dst, uint64(len(ops)))
	for i := range ops {
		op := &ops[i]
		if op.HeaderRec != nil {
			dst = append(dst, opCreate)
			dst = appendBytes(dst, []byte(op.ID))
			dst = appendBytes(dst, op.HeaderRec)
		} else {
			dst = append(dst, opAppend)
			dst = appendBytes(dst, []byte(op.ID))
			dst = binary.AppendUvarint(dst, uint64(op.First))
			dst = binary.AppendUvarint(dst, uint64(len(op.Recs)))
			for _, r := range op.Recs {
				dst = appendBytes(dst, r)
			}
		}
		dst = appendBytes(dst, op.HeadRec)
	}
	return dst
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// DecodeEntry decodes a payload written by EncodeEntry. The slices
// of the ops alias p (the caller passes a copy it keeps). The records are
// not checked here: the applier checks each session's seqs against the
// tree, and readers check every record they read.
func DecodeEntry(lsn uint64, p []byte) (Entry, error) {
	e := Entry{LSN: lsn}
	d := entryDecoder{p: p}
	if v := d.byte(); d.err == nil && v != entryVersion {
		return Entry{}, errors.WithHint(unsupportedf("eventlog: write-ahead log record %d has entry version %d (this program reads %d)",
			errors.Safe(lsn), errors.Safe(v), errors.Safe(entryVersion)), "use a newer logtool")
	}
	n := d.uvarint()
	if n > uint64(len(d.p)) {
		d.fail("op count out of range")
	}
	for ; d.err == nil && n > 0; n-- {
		var op Op
		kind := d.byte()
		op.ID = string(d.bytes())
		switch kind {
		case opCreate:
			op.HeaderRec = d.bytes()
		case opAppend:
			first := d.uvarint()
			n := d.uvarint()
			if first > 1<<62 || n > uint64(len(d.p)) {
				d.fail("append seqs out of range")
				break
			}
			op.First = int64(first)
			op.Recs = make([][]byte, n)
			for i := range op.Recs {
				op.Recs[i] = d.bytes()
			}
		default:
			d.fail("unknown op kind")
		}
		op.HeadRec = d.bytes()
		if d.err == nil && (op.ID == "" || len(op.HeadRec) == 0 || (kind == opCreate && len(op.HeaderRec) == 0)) {
			d.fail("empty field")
		}
		e.Ops = append(e.Ops, op)
		e.Size += op.Size()
	}
	if d.err == nil && len(d.p) > 0 {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return Entry{}, errors.Wrapf(d.err, "eventlog: write-ahead log record %d", errors.Safe(lsn))
	}
	return e, nil
}

// entryDecoder reads a WAL entry; the first failure sticks.
type entryDecoder struct {
	p   []byte
	err error
}

func (d *entryDecoder) fail(what string) {
	if d.err == nil {
		d.err = corruptf("eventlog: malformed entry: %s", errors.Safe(what))
	}
	d.p = nil
}

func (d *entryDecoder) byte() byte {
	if len(d.p) == 0 {
		d.fail("truncated")
		return 0
	}
	b := d.p[0]
	d.p = d.p[1:]
	return b
}

func (d *entryDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.p)
	if n <= 0 || n != uvarintLen(v) {
		d.fail("bad or non-canonical varint")
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *entryDecoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.p)) {
		d.fail("truncated")
		return nil
	}
	b := d.p[:n:n]
	d.p = d.p[n:]
	return b
}

// WALWrite is one write of the write-ahead log, as ReadWAL gives it to
// salvage and verify: a session's creation (HeaderRecord set) or an
// append. The slices are valid only during the callback.
type WALWrite struct {
	// LSN is the log record holding the write.
	LSN uint64
	// Session is the session's id.
	Session string
	// HeaderRecord is the created session's header record; nil for an
	// append.
	HeaderRecord []byte
	// First is the seq of an append's first event.
	First int64
	// Records are an append's event records (codec.EncodeEventRecord frames).
	Records [][]byte
	// HeadRecord is the session's head record after the write.
	HeadRecord []byte
}

// ReadWAL reads the write-ahead log of the store at path (WALDir) and
// calls fn for every write of the records after lsn `after`, in order,
// writing nothing. A missing log is empty. Damage is ErrCorrupt; a torn
// last record is dropped and reported in the Report.
func ReadWAL(path string, after uint64, fn func(WALWrite) error) (wal.Report, error) {
	dir := WALDir(path)
	rep, err := wal.Read(dir, after, func(lsn uint64, payload []byte) error {
		e, err := DecodeEntry(lsn, payload)
		if err != nil {
			return err
		}
		for i := range e.Ops {
			op := &e.Ops[i]
			if err := fn(WALWrite{LSN: lsn, Session: op.ID, HeaderRecord: op.HeaderRec, First: op.First,
				Records: op.Recs, HeadRecord: op.HeadRec}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return rep, WALError(err, dir)
	}
	return rep, nil
}

// WALDir is the directory of the store's write-ahead log segments: the
// store's path with "-wal" appended. It exists while the store is open
// for writing, and after a crash until the next read-write Open.
func WALDir(path string) string { return path + "-wal" }

// WALError classifies an error of the wal package reading the log in dir:
// damage is ErrCorrupt.
func WALError(err error, dir string) error {
	if errors.Is(err, wal.ErrCorrupt) {
		return errors.WithHint(errclass.Mark(errors.Wrapf(err, "eventlog: write-ahead log %s", errors.Safe(dir)), codec.ErrCorrupt),
			"'logtool verify' names the damage, 'logtool salvage' copies out what still verifies")
	}
	return errors.Wrapf(err, "eventlog: write-ahead log %s", errors.Safe(dir))
}

// uvarintLen is the length of v's canonical uvarint encoding.
func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}
