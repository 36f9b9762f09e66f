package fuzz

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

// FuzzRecord checks DecodeRecord on arbitrary bytes: no panics; a record it
// accepts decodes (DecodeEvent, DecodeSessionHeader) without panicking and
// transcodes to JSON; and decode → ToJSON → FromJSON → EncodeRecord (and
// EncodeEventRecord, which may compress: record version 2) → DecodeRecord
// is stable (the second round equals the first). Each input
// is also checked with its CRC recomputed, so that mutations reach the
// payload checks behind the CRC.
func FuzzRecord(f *testing.F) {
	for _, s := range jsonSeeds {
		if r := record([]byte(s)); r != nil {
			f.Add(r)
		}
		if r := eventRecord([]byte(s)); r != nil {
			f.Add(r)
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0x01, 0xc0, 0x00, 0x00, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, rec []byte) {
		checkRecord(t, rec)
		if len(rec) >= 5 {
			fixed := bytes.Clone(rec)
			binary.BigEndian.PutUint32(fixed[len(fixed)-4:], crc32.Checksum(fixed[:len(fixed)-4], castagnoli))
			checkRecord(t, fixed)
		}
	})
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checkRecord checks the properties of FuzzRecord for one record.
func checkRecord(t *testing.T, rec []byte) {
	t.Helper()
	payload, err := codec.DecodeRecord(rec)
	if err != nil {
		checkClass(t, "DecodeRecord", err, codec.ErrCorrupt, codec.ErrUnsupported)
		return
	}
	if ev, err := codec.DecodeEvent(payload); err != nil {
		checkClass(t, "DecodeEvent", err, codec.ErrInvalid, codec.ErrCorrupt)
	} else if out, err := ev.AppendJSON(nil); err != nil {
		t.Fatalf("AppendJSON(DecodeEvent(%x)) = %v", payload, err)
	} else if _, err := codec.ParseEvent(out, storedLimits); err != nil {
		t.Fatalf("ParseEvent(export of a valid stored event %x) = %v; line %q", payload, err, out)
	}
	if _, err := codec.DecodeSessionHeader(payload); err != nil {
		checkClass(t, "DecodeSessionHeader", err, codec.ErrInvalid, codec.ErrCorrupt, codec.ErrUnsupported)
	}

	js, n, err := codec.ToJSON(nil, payload)
	if err != nil || n != len(payload) {
		t.Fatalf("ToJSON(DecodeRecord(%x)) = %v, read %d of %d", rec, err, n, len(payload))
	}
	rec1, js1 := storeRound(t, js)
	rec2, js2 := storeRound(t, js1)
	if !bytes.Equal(rec2, rec1) || !bytes.Equal(js2, js1) {
		t.Fatalf("store round trip of %x is not stable:\nround 1 %x %q\nround 2 %x %q", rec, rec1, js1, rec2, js2)
	}
	if !bytes.Equal(js1, js) {
		t.Fatalf("JSON of %x changed through a store round: %q then %q", rec, js, js1)
	}
}

// storeRound stores a JSON text as a record, decodes it and exports it.
func storeRound(t *testing.T, js []byte) (rec, out []byte) {
	t.Helper()
	mp, err := codec.FromJSON(nil, js, storedLimits)
	if err != nil {
		t.Fatalf("FromJSON(ToJSON of a valid record) = %v; text %.200q", err, js)
	}
	if ev := codec.EncodeEventRecord(nil, mp); !bytes.Equal(ev, codec.EncodeRecord(nil, mp)) {
		p, err := codec.DecodeRecord(ev)
		if err != nil || !bytes.Equal(p, mp) {
			t.Fatalf("DecodeRecord(EncodeEventRecord(FromJSON(%.200q))) = %v, payload equal %v", js, err, bytes.Equal(p, mp))
		}
	}
	rec = codec.EncodeRecord(nil, mp)
	payload, err := codec.DecodeRecord(rec)
	if err != nil {
		t.Fatalf("DecodeRecord(EncodeRecord(FromJSON(%.200q))) = %v", js, err)
	}
	out, n, err := codec.ToJSON(nil, payload)
	if err != nil || n != len(payload) {
		t.Fatalf("ToJSON(stored %.200q) = %v, read %d of %d", js, err, n, len(payload))
	}
	return rec, out
}
