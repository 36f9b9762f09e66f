package pglog_test

import (
	"context"
	"testing"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/eventlogtest"
	"github.com/sessionlog/sessionlog/eventlog/pglog"
	"github.com/sessionlog/sessionlog/internal/pgtest"
)

// open opens a store in a new schema of its own, closed at the end.
func open(t *testing.T, o eventlog.Options) *pglog.Store {
	t.Helper()
	u, _ := pgtest.Schema(t)
	s, err := pglog.Open(context.Background(), u, &o, nil)
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs the Store conformance suite, unchanged, against
// PostgreSQL: with the defaults, and with a validator cache of one
// session and tiny import batches (states evicted and rebuilt by replay,
// imports and forks spanning many transactions).
func TestConformance(t *testing.T) {
	tests := []struct {
		name string
		opts eventlog.Options
	}{
		{name: "defaults"},
		{name: "tiny cache and batches", opts: eventlog.Options{ValidatorCache: 1, ImportBatch: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eventlogtest.Run(t, func(t *testing.T) eventlog.Store {
				o := tt.opts
				o.NewValidator = eventlogtest.NewValidator
				return open(t, o)
			})
		})
	}
}
