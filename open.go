package sessionlog

import (
	"context"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/pglog"
	"github.com/sessionlog/sessionlog/rebuild"
)

// NewValidator is the default validation Open wires: the fold that
// rebuilds requests (rebuild.NewValidator, docs/rules.md#validation). A host that adds
// checks of its own composes them with it in Options.NewValidator.
func NewValidator(h codec.SessionHeader) eventlog.Validator { return rebuild.NewValidator(h) }

// DriverOptions are the options of each driver, of which Open uses the
// one its target selects. The zero value (or nil) means their defaults.
type DriverOptions struct {
	// Bolt are the bbolt store's (the wait for a held file, the
	// write-ahead log's sizes).
	Bolt boltlog.Options
	// Postgres are the PostgreSQL store's (the connection attempt's and
	// every statement's bounds).
	Postgres pglog.Options
}

// Open opens the store at target with the default validation: every
// append and import is checked with the fold that rebuilds requests
// (rebuild.NewValidator, docs/rules.md#validation), so a log the store accepts is a log
// that rebuilds. A target of the form postgres://… or postgresql://…
// selects the PostgreSQL store (package pglog, docs/rules.md#distribution), whose schema a
// writable open creates or upgrades; anything else is the path of a bbolt
// file (package boltlog), created unless opts.ReadOnly. ctx bounds the
// connection to PostgreSQL (a bbolt file's lock wait is
// drivers.Bolt.LockTimeout).
//
// opts and drivers may be nil. opts.NewValidator, when set, replaces the
// default; opts.Unvalidated opens a store that checks nothing beyond the
// event envelope (for tools that copy logs they have verified already).
func Open(ctx context.Context, target string, opts *eventlog.Options, drivers *DriverOptions) (eventlog.Store, error) {
	var o eventlog.Options
	if opts != nil {
		o = *opts
	}
	if o.NewValidator == nil && !o.Unvalidated {
		o.NewValidator = NewValidator
	}
	var d DriverOptions
	if drivers != nil {
		d = *drivers
	}
	if pglog.IsURL(target) {
		s, err := pglog.Open(ctx, target, &o, &d.Postgres)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	l, err := boltlog.Open(target, &o, &d.Bolt)
	if err != nil {
		return nil, err
	}
	return l, nil
}
