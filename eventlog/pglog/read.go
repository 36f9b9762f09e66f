package pglog

import (
	"context"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
	"github.com/jackc/pgx/v5"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
)

// Reads go in pages: each page is one short query of at most pageRecords
// rows, of which the store keeps at most pageBytes bytes (but at least
// one record), so a scan holds a bounded number of events in memory and
// never keeps a transaction open between calls.
const (
	pageRecords = 256
	pageBytes   = 4 << 20
)

// headColumns are the columns of a session row that make its Head.
const headColumns = `id, header, next, turns, last_time, chain, stored`

// scanHead decodes one row of headColumns, checking it like bbolt's head
// record: the header record's frame and id, the chain's length, counts in
// range, a finite time. Damage is ErrCorrupt naming the session.
func scanHead(row pgx.Row) (eventlog.Head, error) {
	var (
		id          string
		headerRec   []byte
		chain       []byte
		h           eventlog.Head
		next, turns int64
	)
	if err := row.Scan(&id, &headerRec, &next, &turns, &h.LastTime, &chain, &h.StoredBytes); err != nil {
		return eventlog.Head{}, err
	}
	h.Next, h.Turns = next, turns
	payload, err := codec.DecodeRecord(headerRec)
	if err != nil {
		return eventlog.Head{}, errors.Wrapf(err, "session %q: header record", errors.Safe(id))
	}
	hdr, err := codec.DecodeSessionHeader(payload)
	if err != nil {
		return eventlog.Head{}, errors.Wrapf(engine.AsCorrupt(err), "session %q: header record", errors.Safe(id))
	}
	switch {
	case hdr.ID != id:
		return eventlog.Head{}, engine.Corruptf("session %q: header record names session %q", errors.Safe(id), errors.Safe(hdr.ID))
	case len(chain) != 32:
		return eventlog.Head{}, engine.Corruptf("session %q: chain hash of %d bytes", errors.Safe(id), errors.Safe(len(chain)))
	case h.Next < 0 || h.Turns < 0 || h.Turns > h.Next || h.StoredBytes < 0:
		return eventlog.Head{}, engine.Corruptf("session %q: head counts out of range (next %d, turns %d, stored %d)",
			errors.Safe(id), errors.Safe(h.Next), errors.Safe(h.Turns), errors.Safe(h.StoredBytes))
	case math.IsNaN(h.LastTime) || math.IsInf(h.LastTime, 0):
		return eventlog.Head{}, engine.Corruptf("session %q: head time is not finite", errors.Safe(id))
	}
	h.Header = hdr
	copy(h.Chain[:], chain)
	return h, nil
}

// head reads the session's head; ErrNotFound if the session does not
// exist or is not published.
func (s *Store) head(ctx context.Context, session string) (eventlog.Head, error) {
	if !holdable(session) {
		return eventlog.Head{}, engine.NotFound(session)
	}
	var h eventlog.Head
	err := s.read(ctx, func() error {
		var err error
		h, err = scanHead(s.pool.QueryRow(ctx,
			`SELECT `+headColumns+` FROM sessionlog_sessions WHERE id = $1 AND published`, session))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return eventlog.Head{}, engine.NotFound(session)
	}
	return h, err
}

// holdable reports whether a text column can hold id: PostgreSQL refuses
// NUL and invalid UTF-8 in a parameter, so no session has such an id
// here (eventlog.CheckHeader refuses it for new sessions everywhere, but
// a bbolt store may hold one from before that rule) and a read of one is
// ErrNotFound rather than the server's encoding error.
func holdable(id string) bool {
	return strings.IndexByte(id, 0) < 0 && utf8.ValidString(id)
}

// heads reads the heads of at most n published sessions whose ids sort
// after after (bytewise), ordered by id, in one query (the engine's
// SessionPage).
func (s *Store) heads(ctx context.Context, after string, n int) ([]eventlog.Head, error) {
	var heads []eventlog.Head
	err := s.read(ctx, func() error {
		heads = heads[:0]
		rows, err := s.pool.Query(ctx, `SELECT `+headColumns+` FROM sessionlog_sessions
			WHERE published AND id > $1 ORDER BY id LIMIT $2`, after, n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			h, err := scanHead(rows)
			if err != nil {
				return err
			}
			heads = append(heads, h)
		}
		rows.Close()
		return rows.Err()
	})
	return heads, errors.Wrap(err, "pglog: list sessions")
}

// SessionIDs returns the ids of all published sessions, ordered by id:
// for verify, which must list sessions whose head does not decode.
func (s *Store) SessionIDs(ctx context.Context) ([]string, error) {
	done, err := s.begin()
	if err != nil {
		return nil, err
	}
	defer done()
	var ids []string
	err = s.read(ctx, func() error {
		rows, err := s.pool.Query(ctx, `SELECT id FROM sessionlog_sessions WHERE published ORDER BY id`)
		if err != nil {
			return err
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return ids, errors.Wrap(err, "pglog: list sessions")
}

// HeaderRecord returns the stored header record of a published session:
// the framed record the chain hash starts from (eventlog.ChainStart).
func (s *Store) HeaderRecord(ctx context.Context, session string) ([]byte, error) {
	done, err := s.begin()
	if err != nil {
		return nil, err
	}
	defer done()
	if !holdable(session) {
		return nil, errors.Wrapf(engine.NotFound(session), "pglog: header of session %q", errors.Safe(session))
	}
	var rec []byte
	err = s.read(ctx, func() error {
		return s.pool.QueryRow(ctx, `SELECT header FROM sessionlog_sessions WHERE id = $1 AND published`, session).Scan(&rec)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		err = engine.NotFound(session)
	}
	return rec, errors.Wrapf(err, "pglog: header of session %q", errors.Safe(session))
}

// events reads one page of the session's events from seq from (below
// end): their payloads (frames checked) and their records as stored.
func (s *Store) events(ctx context.Context, session string, from, end int64) (payloads, recs [][]byte, err error) {
	want := from
	err = s.page(ctx, session, from, end, func(seq int64, rec []byte) error {
		if seq != want {
			return engine.Corruptf("pglog: session %q seq %d: record is missing (the next stored is seq %d)",
				errors.Safe(session), errors.Safe(want), errors.Safe(seq))
		}
		p, err := codec.Unframe(rec, codec.MaxRecord)
		if err != nil {
			return errors.Wrapf(err, "pglog: session %q seq %d", errors.Safe(session), errors.Safe(seq))
		}
		payloads, recs = append(payloads, p), append(recs, rec)
		want++
		return nil
	})
	if err != nil {
		return nil, nil, errors.Wrapf(err, "pglog: read session %q at seq %d", errors.Safe(session), errors.Safe(want))
	}
	return payloads, recs, nil
}

// page reads one page of the session's records with from <= seq < end
// (end < 0: no bound), in seq order, and calls fn with each (a copy it may
// keep). It stops after pageRecords rows or once pageBytes are read.
func (s *Store) page(ctx context.Context, session string, from, end int64, fn func(seq int64, rec []byte) error) error {
	if end < 0 {
		end = math.MaxInt64
	}
	type record struct {
		seq int64
		rec []byte
	}
	var recs []record
	// The page is read whole before fn sees it, so that a read the
	// database asks to retry (a serialization failure) is retried
	// without fn seeing a row twice, and no connection is held while fn
	// runs.
	err := s.read(ctx, func() error {
		recs = recs[:0]
		rows, err := s.pool.Query(ctx, `SELECT seq, rec FROM sessionlog_events
			WHERE session = $1 AND seq >= $2 AND seq < $3 ORDER BY seq LIMIT $4`, session, from, end, pageRecords)
		if err != nil {
			return err
		}
		defer rows.Close()
		size := 0
		for size < pageBytes && rows.Next() {
			var r record // rec is a fresh copy per row (pgx allocates for []byte)
			if err := rows.Scan(&r.seq, &r.rec); err != nil {
				return err
			}
			if len(r.rec) > codec.MaxRecord {
				return engine.Corruptf("session %q seq %d: record of %d bytes exceeds the %d byte cap",
					errors.Safe(session), errors.Safe(r.seq), errors.Safe(len(r.rec)), errors.Safe(codec.MaxRecord))
			}
			size += len(r.rec)
			recs = append(recs, r)
		}
		rows.Close()
		return rows.Err()
	})
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := fn(r.seq, r.rec); err != nil {
			return err
		}
	}
	return nil
}

// read runs fn, a read of the database, again while it fails retryably
// (SQLSTATE 40001 and kin: under SERIALIZABLE, as on CockroachDB, even a
// read may be asked to retry), up to maxRetries times. A statement past a
// bound is ErrLocked (bounded).
func (s *Store) read(ctx context.Context, fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil || attempt >= maxRetries || !retryable(err) || ctx.Err() != nil {
			return s.bounded(ctx, err)
		}
		s.obs.retried(ctx, err)
		time.Sleep(time.Duration(1<<attempt) * time.Millisecond)
	}
}

// Records calls fn with every record stored for the session from seq from
// on, in seq order, as stored: the framed record, not decoded. It does not
// stop at the head's next seq nor check that seqs are contiguous: that is
// verify's job. rec may be kept. An error from fn stops the walk and is
// returned as is. The walk reads in pages, one query each.
func (s *Store) Records(ctx context.Context, session string, from int64, fn func(seq int64, rec []byte) error) error {
	done, err := s.begin()
	if err != nil {
		return err
	}
	defer done()
	if from < 0 {
		return engine.Invalidf("pglog: records of session %q from seq %d", errors.Safe(session), errors.Safe(from))
	}
	if _, err := s.HeaderRecord(ctx, session); err != nil {
		return err
	}
	var fnErr error
	for {
		n := 0
		err := s.page(ctx, session, from, -1, func(seq int64, rec []byte) error {
			n++
			from = seq + 1
			if err := fn(seq, rec); err != nil {
				fnErr = err
				return err
			}
			return nil
		})
		if fnErr != nil {
			return fnErr
		}
		if err != nil {
			return errors.Wrapf(err, "pglog: records of session %q", errors.Safe(session))
		}
		if n == 0 {
			return nil
		}
	}
}
