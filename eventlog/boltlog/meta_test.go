package boltlog_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/rebuild"
)

// TestCheckMeta: a flipped byte in either meta page is reported as
// corruption, although bbolt opens the store on the other one.
func TestCheckMeta(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	l, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
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
	page := int(binary.LittleEndian.Uint32(intact[16+8:])) // the page size meta page 0 records
	for _, off := range []int{16, 16 + 48, 16 + 60, page + 16, page + 16 + 50} {
		damaged := append([]byte(nil), intact...)
		damaged[off] ^= 0x10
		if err := os.WriteFile(path, damaged, 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
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
