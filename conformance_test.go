package sessionlog_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/sessionlog/sessionlog"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/eventlogtest"
)

// both is a validator that passes an event to first, then to second.
type both struct{ first, second eventlog.Validator }

func (b both) Validate(ev *codec.Event) error {
	if err := b.first.Validate(ev); err != nil {
		return err
	}
	return b.second.Validate(ev)
}

// TestConformanceDefaultWiring runs the Store conformance suite on a store
// opened by sessionlog.Open with the default validation (the rebuild fold)
// in force, composed after the suite's own validator: every log the suite
// writes must pass the fold that guards real stores, and the suite's
// refusal and ordering probes still reach their validator. Counting the
// fold's calls proves it saw the suite's events.
func TestConformanceDefaultWiring(t *testing.T) {
	var folded counter
	eventlogtest.Run(t, func(t *testing.T) eventlog.Store {
		path := filepath.Join(t.TempDir(), "s.db")
		s, err := sessionlog.Open(context.Background(), path, &eventlog.Options{NoSync: true,
			NewValidator: func(h codec.SessionHeader) eventlog.Validator {
				return both{eventlogtest.NewValidator(h), counting{sessionlog.NewValidator(h), &folded}}
			}}, nil)

		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		})
		return s
	})
	if folded.n.Load() < 1000 {
		t.Fatalf("the default fold validated %d events: the suite did not run through it", folded.n.Load())
	}
}

type counter struct{ n atomic.Int64 }

// counting passes events to v and counts them.
type counting struct {
	v eventlog.Validator
	c *counter
}

func (c counting) Validate(ev *codec.Event) error {
	c.c.n.Add(1)
	return c.v.Validate(ev)
}
