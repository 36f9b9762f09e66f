package boltlog_test

import (
	"testing"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/eventlogtest"
)

var _ eventlog.Store = (*boltlog.Log)(nil)

// TestConformance runs the Store conformance suite against the bbolt Log:
// with the defaults, with a validator cache of one session and tiny import
// batches (so that states are evicted and rebuilt by replay, and imports
// and forks span many transactions), and without fsync.
func TestConformance(t *testing.T) {
	tests := []struct {
		name string
		opts eventlog.Options
	}{
		{name: "defaults"},
		{name: "tiny cache and batches", opts: eventlog.Options{ValidatorCache: 1, ImportBatch: 7}},
		{name: "nosync", opts: eventlog.Options{NoSync: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eventlogtest.Run(t, func(t *testing.T) eventlog.Store {
				o := tt.opts
				o.NewValidator = eventlogtest.NewValidator
				l, _ := openLog(t, &o)
				return l
			})
		})
	}
}
