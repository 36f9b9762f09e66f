package boltlog_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
)

// TestClassesStdlib: the classes the conformance suite cannot reach
// through the Store interface (it tests the others), from this store,
// tested with the standard library's errors.Is, which a host that
// imports "errors" uses.
func TestClassesStdlib(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.db")
	l, err := boltlog.Open(path, &eventlog.Options{Unvalidated: true, NoSync: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Create(ctx, codec.NewSessionHeader("s", 1000, "", "", 0)); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, make([]byte, 8192), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		class error
		fn    func() error
	}{
		{"no validation", eventlog.ErrNoValidation, func() error {
			_, err := boltlog.Open(filepath.Join(dir, "new.db"), &eventlog.Options{}, nil)
			return err
		}},
		{"no store", eventlog.ErrNotFound, func() error {
			_, err := boltlog.Open(filepath.Join(dir, "missing.db"), &eventlog.Options{ReadOnly: true}, nil)
			return err
		}},
		{"locked", eventlog.ErrLocked, func() error {
			_, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, &boltlog.Options{LockTimeout: 20 * time.Millisecond})
			return err
		}},
		{"not a store", eventlog.ErrCorrupt, func() error {
			_, err := boltlog.Open(junk, &eventlog.Options{ReadOnly: true}, nil)
			return err
		}},
		{"read-only write", eventlog.ErrReadOnly, func() error {
			if err := l.Close(); err != nil {
				return err
			}
			ro, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
			if err != nil {
				return err
			}
			defer ro.Close()
			return ro.Create(ctx, codec.NewSessionHeader("t", 1000, "", "", 0))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.fn(); !errors.Is(err, tt.class) {
				t.Fatalf("error = %v, want one that the standard library's errors.Is finds %v in", err, tt.class)
			}
		})
	}
}
