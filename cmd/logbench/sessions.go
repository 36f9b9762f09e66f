package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/loggen"
)

// sessionSeed is the loggen seed of every generated session.
const sessionSeed = 7

// sessionOptions are the generated sessions' options: realistic steps
// (a dozen chunks, a paragraph per reply), compacted about every 3,000
// events, as a long-running host compacts.
func sessionOptions(events int) loggen.Options {
	return loggen.Options{Events: events, CompactEvery: 3000, Realistic: true}
}

// benchSession is a generated session imported alone into its own store.
type benchSession struct {
	path   string
	st     *boltlog.Log
	header codec.SessionHeader
	events int64
	// jsonl is the size of the session's JSONL file (header line and
	// event lines, each with its newline).
	jsonl int64
}

func (s *benchSession) close() {
	if s.st != nil {
		s.st.Close()
		s.st = nil
	}
}

// buildSessions generates a realistic session of each size and imports
// each into a store of its own, as logtool import does (every rule
// checked); fsync is off, since these stores measure reads and space.
func buildSessions(ctx context.Context, c config, work string, p progress) ([]*benchSession, error) {
	var out []*benchSession
	for _, n := range c.sizes {
		s, err := buildSession(ctx, work, n)
		if err != nil {
			for _, s := range out {
				s.close()
			}
			return nil, errors.Wrapf(err, "session of %d events", errors.Safe(n))
		}
		out = append(out, s)
		p.printf("  generated and imported %s events (%s MiB of JSONL)", group(s.events), mib(float64(s.jsonl)))
	}
	return out, nil
}

func buildSession(ctx context.Context, work string, n int) (*benchSession, error) {
	var evs []codec.Event
	s := &benchSession{path: filepath.Join(work, fmt.Sprintf("sessions-%d.db", n))}
	first := true
	err := loggen.Generate(sessionSeed, sessionOptions(n), func(line []byte) error {
		s.jsonl += int64(len(line)) + 1
		if first {
			first = false
			var err error
			s.header, err = codec.ParseSessionHeader(line, codec.Limits{})
			return err
		}
		ev, err := codec.ParseEvent(line, codec.Limits{})
		if err != nil {
			return errors.Wrapf(err, "generated line %d", errors.Safe(len(evs)+2))
		}
		evs = append(evs, ev)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.st, err = boltlog.Open(s.path, &eventlog.Options{NoSync: true, NewValidator: validator}, nil)
	if err != nil {
		return nil, err
	}
	s.events, err = s.st.Import(ctx, s.header, &eventSource{evs: evs})
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// eventSource is an eventlog.Source over decoded events.
type eventSource struct{ evs []codec.Event }

func (e *eventSource) Next() (codec.Event, error) {
	if len(e.evs) == 0 {
		return codec.Event{}, io.EOF
	}
	ev := e.evs[0]
	e.evs[0] = codec.Event{} // let the imported events go
	e.evs = e.evs[1:]
	return ev, nil
}

// readAll scans a session's events from its store.
func (s *benchSession) readAll(ctx context.Context) ([]codec.Event, error) {
	it, err := s.st.Scan(ctx, s.header.ID, 0)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	evs := make([]codec.Event, 0, s.events)
	for {
		ev, err := it.Next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	}
}
