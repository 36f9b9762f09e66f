package pglog_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/pglog"
	"github.com/sessionlog/sessionlog/internal/pgtest"
)

// TestClassesStdlib: the classes the conformance suite cannot reach
// through the Store interface (it tests the others), from this store,
// tested with the standard library's errors.Is, which a host that
// imports "errors" uses.
func TestClassesStdlib(t *testing.T) {
	ctx := context.Background()
	u, _ := pgtest.Schema(t)
	empty, _ := pgtest.Schema(t)
	s := openAt(t, u, unvalidated)
	if err := s.Create(ctx, codec.NewSessionHeader("s", 1000, "", "", 0)); err != nil {
		t.Fatal(err)
	}
	ro := openAt(t, u, eventlog.Options{ReadOnly: true})
	tests := []struct {
		name  string
		class error
		fn    func() error
	}{
		{"no validation", eventlog.ErrNoValidation, func() error {
			_, err := pglog.Open(ctx, u, &eventlog.Options{}, nil)
			return err
		}},
		{"read-only write", eventlog.ErrReadOnly, func() error { return ro.Create(ctx, codec.NewSessionHeader("t", 1000, "", "", 0)) }},
		{"no store", eventlog.ErrNotFound, func() error {
			_, err := pglog.Open(ctx, empty, &eventlog.Options{ReadOnly: true}, nil)
			return err
		}},
		{"locked", eventlog.ErrLocked, func() error {
			l, err := pglog.Open(ctx, u, &eventlog.Options{ReadOnly: true}, &pglog.Options{LockTimeout: 100 * time.Millisecond})
			if err == nil {
				defer l.Close()
				release := pgtest.Lock(t, u, "sessionlog_sessions")
				defer release()
				_, err = l.Sessions(ctx)
			}
			return err
		}},
		{"damaged head", eventlog.ErrCorrupt, func() error {
			pgtest.Exec(t, u, `UPDATE sessionlog_sessions SET chain = '\x0102' WHERE id = 's'`)
			_, err := s.Sessions(ctx)
			return err
		}},
		{"newer format", eventlog.ErrUnsupported, func() error {
			pgtest.Exec(t, u, `UPDATE sessionlog_meta SET value = 99 WHERE name = 'format'`)
			_, err := pglog.Open(ctx, u, &eventlog.Options{ReadOnly: true}, nil)
			return err
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
