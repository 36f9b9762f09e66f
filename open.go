package sessionlog

import (
	"context"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/pglog"
	"github.com/sessionlog/sessionlog/rebuild"
)

// NewValidator is the default validation Open wires: the fold that
// rebuilds requests (rebuild.NewValidator, docs/rules.md#validation). A host that adds
// checks of its own composes them with it in Options.NewValidator.
func NewValidator(h codec.SessionHeader) eventlog.Validator { return rebuild.NewValidator(h) }

// Open opens the store at target with the default validation: every
// append and import is checked with the fold that rebuilds requests
// (rebuild.NewValidator, docs/rules.md#validation), so a log the store accepts is a log
// that rebuilds. A target of the form postgres://… or postgresql://…
// selects the PostgreSQL store (package pglog, docs/rules.md#distribution), whose schema a
// writable open creates or upgrades; anything else is the path of a bbolt
// file, created unless opts.ReadOnly. opts.LockTimeout bounds the wait
// for a held bbolt file, or the connection attempt to PostgreSQL.
//
// opts may be nil. Its NewValidator, when set, replaces the default;
// opts.Unvalidated opens a store that checks nothing beyond the event
// envelope (for tools that copy logs they have verified already).
func Open(target string, opts *eventlog.Options) (eventlog.Store, error) {
	var o eventlog.Options
	if opts != nil {
		o = *opts
	}
	if o.NewValidator == nil && !o.Unvalidated {
		o.NewValidator = NewValidator
	}
	if pglog.IsURL(target) {
		s, err := pglog.Open(context.Background(), target, &o)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	l, err := eventlog.Open(target, &o)
	if err != nil {
		return nil, err
	}
	return l, nil
}
