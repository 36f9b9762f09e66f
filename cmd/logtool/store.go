package main

import (
	"context"
	"io/fs"
	"os"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/pglog"
	"github.com/sessionlog/sessionlog/internal/errclass"
	"github.com/sessionlog/sessionlog/internal/printable"
)

// store is an open eventlog store.
type store = eventlog.Store

// openMode says how a command opens the store.
type openMode uint8

const (
	// openRead opens an existing store read-only; a missing one is
	// ErrNoStore and nothing is created.
	openRead openMode = iota
	// openWrite opens an existing store for writing; a missing one is
	// ErrNoStore.
	openWrite
	// openCreate opens the store for writing and creates it if missing.
	openCreate
)

// open opens the store at --db: a bbolt file, or a PostgreSQL database
// when --db is a postgres:// URL (docs/rules.md#distribution). A store that bbolt opened
// one commit back, because its newest meta page is damaged, is warned
// about on stderr (once per command; verify reports it as a finding
// instead).
func (g *globalOptions) open(mode openMode) (store, error) {
	path := g.db
	if pglog.IsURL(path) {
		return g.openURL(mode)
	}
	if err := g.checkPath(mode != openCreate); err != nil {
		return nil, err
	}
	wait := g.lockTimeout
	if wait == 0 {
		wait = time.Nanosecond // one attempt; boltlog reads 0 as its default
	}
	// Writes are checked against every rule of the log: sessionlog.Open
	// wires the rebuild fold as the validator (docs/rules.md#validation).
	o := &eventlog.Options{ReadOnly: mode == openRead}
	st, err := sessionlog.Open(context.Background(), path, o, &sessionlog.DriverOptions{Bolt: boltlog.Options{LockTimeout: wait}})
	switch {
	case err == nil:
		g.warnMeta(st)
		return st, nil
	case mode != openCreate && errors.Is(err, eventlog.ErrNotFound):
		return nil, errclass.Mark(err, ErrNoStore)
	case errors.Is(err, eventlog.ErrLocked):
		return nil, g.locked(err)
	}
	return nil, err // eventlog's errors name the path
}

// checkPath refuses a --db that names a directory, and, when mustExist, one
// that names nothing: every command says the same.
func (g *globalOptions) checkPath(mustExist bool) error {
	if keywordDSN(g.db) {
		// Never a file of that name: the string may hold a password.
		return errors.WithHint(usagef("%s %s is a keyword/value connection string", errors.Safe(g.flag()), errors.Safe(g.name())),
			g.flag()+" takes a bbolt file path or a postgres://USER@HOST:PORT/DATABASE URL (./"+"NAME for a file whose name starts with a keyword and '=')")
	}
	fi, err := os.Stat(g.db)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if mustExist {
			return g.noStore()
		}
	case err != nil:
		return errors.Wrapf(err, "store %s", errors.Safe(g.name()))
	case fi.IsDir():
		return errors.WithHint(
			errors.Newf("store %s is a directory", errors.Safe(g.name())),
			g.flag()+" names the store file itself")
	}
	return nil
}

// locked is the error for a store another process holds, err being the
// store's ErrLocked.
func (g *globalOptions) locked(err error) error {
	if g.lockTimeout == 0 {
		// The store waited the one nanosecond that stands for "do not
		// wait"; its "(waited 1ns)" would mislead.
		return errors.WithHint(
			errclass.Mark(errors.Newf("store %s is locked by another process", errors.Safe(g.name())), eventlog.ErrLocked),
			"another logtool or host holds it; --lock-timeout 0 tried once, --lock-timeout DURATION waits for it")
	}
	return errors.WithHintf(err, "--lock-timeout (now %s) sets how long to wait", errors.Safe(g.lockTimeout))
}

// metaChecker is a store that can tell that bbolt opened it one commit
// back; *boltlog.Log is one.
type metaChecker interface {
	CheckMeta() error
}

// warnMeta warns on stderr, once per command, when st's newest meta page
// is damaged. It reads the two meta pages (two small reads).
func (g *globalOptions) warnMeta(st store) {
	mc, ok := st.(metaChecker)
	if !ok || g.metaChecked || g.noMetaWarning {
		return
	}
	g.metaChecked = true
	if err := mc.CheckMeta(); err != nil {
		g.warn(err)
	}
}

// warn writes err on stderr as a warning, with its hints.
func (g *globalOptions) warn(err error) {
	if g.stderr == nil {
		return
	}
	printWithHints(g.stderr, "logtool: warning: ", err)
}

// openURL opens the PostgreSQL store at --db. A read command's store runs
// read-only transactions and never creates the schema; a write command's
// creates it when missing. The connection attempt waits up to
// --lock-timeout, but never less than pglog.DefaultConnectTimeout: a
// database is not a file lock, and a busy server answers late.
func (g *globalOptions) openURL(mode openMode) (store, error) {
	o := &eventlog.Options{ReadOnly: mode == openRead}
	st, err := sessionlog.Open(context.Background(), g.db, o,
		&sessionlog.DriverOptions{Postgres: pglog.Options{ConnectTimeout: max(g.lockTimeout, pglog.DefaultConnectTimeout)}})
	if err != nil && errors.Is(err, eventlog.ErrNotFound) {
		return nil, errclass.Mark(err, ErrNoStore)
	}
	return st, err
}

// flag is the flag that names the store, for hints.
func (g *globalOptions) flag() string {
	if g.dbFlag == "" {
		return "--db"
	}
	return g.dbFlag
}

// name is --db for messages: printable, and a URL without its password
// (storeName).
func (g *globalOptions) name() string { return storeName(g.db) }

// noStore is the error for a missing store at --db (or copy's --from).
func (g *globalOptions) noStore() error {
	hint := "import a session first ('logtool import FILE', 'logtool demo'), or name the store with --db PATH or $LOGTOOL_DB"
	if g.dbFlag != "" {
		hint = g.dbFlag + " names an existing store: a bbolt file or a postgres:// URL"
	}
	return errors.WithHint(noStoref("no store at %s", errors.Safe(g.name())), hint)
}

// closeStore closes st and joins a close failure to *errp.
func closeStore(st store, errp *error) {
	*errp = errors.CombineErrors(*errp, st.Close())
}

// sessionHead returns the head of session id, with a hint when there is
// no such session.
func sessionHead(ctx context.Context, st store, db, id string) (eventlog.Head, error) {
	h, err := st.Head(ctx, id)
	if errors.Is(err, eventlog.ErrNotFound) {
		return h, errors.WithHint(
			errclass.Mark(errors.Newf("no session %s in %s", errors.Safe(printable.ID(id)), errors.Safe(db)), eventlog.ErrNotFound),
			"'logtool ls' lists the sessions in the store")
	}
	return h, errors.Wrapf(err, "session %s", errors.Safe(printable.ID(id)))
}
