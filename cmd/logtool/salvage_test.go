package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/internal/boltfmt/bolttest"
)

// TestSalvage runs testdata/salvage with the directives of TestCLI, and:
//
//	flip PATH NEEDLE     flip one bit in the middle of every occurrence of
//	                     NEEDLE in the file, as damage on disk would; prints
//	                     the number of occurrences
//	break-page PATH ID   damage the page id in the header of the root page
//	                     of session ID's bucket: bbolt panics reading it
//	unpack PATH          store every event of the closed store at PATH as
//	                     one record under its seq, as stores before format
//	                     3 do (bolttest.UnpackStore), so that a marker
//	                     is in one record's text, uncompressed
//	flip-meta PATH       flip a bit of the txid of the newest bbolt meta
//	                     page: bbolt opens the store one commit back
//
// Every logtool salvage run is checked to leave the store it reads (--db,
// else $DB) byte-identical.
func TestSalvage(t *testing.T) {
	s := newScript(t)
	defer s.unlock(t)
	datadriven.RunTest(t, "testdata/salvage", func(t *testing.T, td *datadriven.TestData) string {
		switch td.Cmd {
		case "flip":
			return flipDirective(t, td, s.expand(td.CmdArgs[0].String()), td.CmdArgs[1].String())
		case "flip-meta":
			return flipMetaDirective(t, td, s.expand(td.CmdArgs[0].String()))
		case "unpack":
			bolttest.UnpackStore(t, s.expand(td.CmdArgs[0].String()))
			return "unpacked\n"
		case "break-page":
			return breakPageDirective(t, td, s, s.expand(td.CmdArgs[0].String()), td.CmdArgs[1].String())
		case "logtool":
			db, salvaging := s.db, false
			for i, a := range td.CmdArgs {
				switch {
				case a.String() == "salvage":
					salvaging = true
				case a.String() == "--db" && i+1 < len(td.CmdArgs):
					db = s.expand(td.CmdArgs[i+1].String())
				}
			}
			before := fileState(t, db)
			out := s.run(t, td)
			if after := fileState(t, db); salvaging && after != before {
				t.Errorf("%s: salvage changed the store it read: %s, then %s", td.Pos, before, after)
			}
			return out
		}
		return s.run(t, td)
	})
}

// flipDirective flips one bit in the middle of every occurrence of needle
// in the file at path.
func flipDirective(t *testing.T, td *datadriven.TestData, path, needle string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: flip: %v", td.Pos, err)
	}
	n := 0
	for off := 0; ; {
		i := bytes.Index(b[off:], []byte(needle))
		if i < 0 {
			break
		}
		b[off+i+len(needle)/2] ^= 0x04
		off += i + len(needle)
		n++
	}
	if n == 0 {
		t.Fatalf("%s: flip: %q is not in %s", td.Pos, needle, path)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatalf("%s: flip: %v", td.Pos, err)
	}
	return fmt.Sprintf("flipped %d %s\n", n, plural(n, "occurrence", "occurrences"))
}

// breakPageDirective damages the page id in the header of the root page of
// session id's bucket.
func breakPageDirective(t *testing.T, td *datadriven.TestData, s *script, path, id string) string {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("%s: break-page: %v", td.Pos, err)
	}
	var root int64
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("sessions")).Bucket([]byte(id))
		if b == nil {
			return errors.Newf("no session %s", id)
		}
		root = int64(b.Root())
		return nil
	})
	ps := int64(db.Info().PageSize)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil || root == 0 {
		t.Fatalf("%s: break-page: root %d: %v", td.Pos, root, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: break-page: %v", td.Pos, err)
	}
	b[root*ps+2] ^= 0x5a
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatalf("%s: break-page: %v", td.Pos, err)
	}
	// Which page holds the bucket depends on the order of the store's
	// transactions, which its applier's timing changes: outputs name it
	// $BROKEN.
	s.subst = append(s.subst, fmt.Sprintf("bbolt page %d:", root), "bbolt page $BROKEN:",
		fmt.Sprintf("it says it is page %d", root^0x5a0000), "it says it is page $BROKEN^0x5a0000")
	return "broke the root page of session " + id + "\n"
}

// flipMetaDirective flips a bit of the txid of the newest meta page.
func flipMetaDirective(t *testing.T, td *datadriven.TestData, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: flip-meta: %v", td.Pos, err)
	}
	// The meta follows a 16-byte page header: magic, version, page size,
	// flags (4 bytes each), root (16), freelist, pgid, txid (8 each).
	ps := int(binary.LittleEndian.Uint32(b[16+8:]))
	txid := func(page int) uint64 { return binary.LittleEndian.Uint64(b[page*ps+16+48:]) }
	newest := 0
	if txid(1) > txid(0) {
		newest = 1
	}
	b[newest*ps+16+48] ^= 0x01
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatalf("%s: flip-meta: %v", td.Pos, err)
	}
	return fmt.Sprintf("flipped the txid of meta page %d\n", newest)
}
