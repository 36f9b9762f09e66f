package eventlog_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
)

// TestCheckMeta: a flipped byte in either meta page is reported as
// corruption, although bbolt opens the store on the other one.
func TestCheckMeta(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	l, err := eventlog.Open(path, &eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Create(ctx, codec.NewSessionHeader("s", 1, "", "", 0)); err != nil {
		t.Fatal(err)
	}
	if err := l.CheckMeta(); err != nil {
		t.Fatalf("intact store: CheckMeta = %v", err)
	}
	l.Close()
	intact, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	for _, off := range []int{16, 16 + 48, 16 + 60, page + 16, page + 16 + 50} {
		damaged := append([]byte(nil), intact...)
		damaged[off] ^= 0x10
		if err := os.WriteFile(path, damaged, 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := eventlog.Open(path, &eventlog.Options{ReadOnly: true})
		if err != nil {
			continue // bbolt refused it: not silent either
		}
		err = l.CheckMeta()
		l.Close()
		if !errors.Is(err, eventlog.ErrCorrupt) {
			t.Errorf("byte %d flipped: CheckMeta = %v, want ErrCorrupt", off, err)
		}
	}
}

// TestCheckStructure: bbolt's structure check passes on an intact store
// and reports a damaged branch page, which leaves every record whole.
func TestCheckStructure(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	l, err := eventlog.Open(path, &eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Create(ctx, codec.NewSessionHeader("s", 1, "", "", 0)); err != nil {
		t.Fatal(err)
	}
	var evs []codec.Event
	for i := 0; i < 400; i++ {
		ev, err := codec.ParseEvent([]byte(`{"type":"x/y","seq":`+strconv.Itoa(i)+`,"time":0,"data":{"pad":"`+strings.Repeat("p", 300)+`"}}`), codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if err := l.Append(ctx, "s", evs); err != nil {
		t.Fatal(err)
	}
	if err := l.CheckStructure(); err != nil {
		t.Fatalf("intact store: CheckStructure = %v", err)
	}
	l.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	damaged := false
	for off := 2 * page; off+page <= len(data) && !damaged; off += page {
		flags := binary.LittleEndian.Uint16(data[off+8:])
		count := binary.LittleEndian.Uint16(data[off+10:])
		if flags == 0x01 && count > 2 { // a branch page
			ksize := off + 16 + 16 + 4 // element 1's key size
			binary.LittleEndian.PutUint32(data[ksize:], 3)
			damaged = true
		}
	}
	if !damaged {
		t.Skip("no branch page in the store")
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err = eventlog.Open(path, &eventlog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.CheckStructure(); !errors.Is(err, eventlog.ErrCorrupt) {
		t.Fatalf("damaged branch page: CheckStructure = %v, want ErrCorrupt", err)
	}
}
