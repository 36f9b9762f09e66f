package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// agentHeaders are the headers agents name their session with (SPEC
// §15.2), in the order they are tried.
var agentHeaders = []string{"X-Claude-Code-Session-Id", "Session-Id", "Thread-Id"}

// maxAgentID bounds an agent's session id; a longer one (or one that is
// not UTF-8) is ignored.
const maxAgentID = 256

// agentID returns the agent's session id of a request and where it was
// found ("" when none): a header, else the body's top-level
// prompt_cache_key.
func (g *Gateway) agentID(h http.Header, body []byte) (id, from string) {
	names := agentHeaders
	if g.opts.SessionHeader != "" {
		names = append([]string{g.opts.SessionHeader}, names...)
	}
	for _, n := range names {
		if v := h.Get(n); v != "" && len(v) <= maxAgentID && utf8.ValidString(v) {
			return v, http.CanonicalHeaderKey(n)
		}
	}
	if v := promptCacheKey(body); v != "" && len(v) <= maxAgentID {
		return v, "prompt_cache_key"
	}
	return "", ""
}

// promptCacheKey reads the top-level prompt_cache_key string of a JSON
// body with codec's reader ("" when the body is no JSON object or has
// none).
func promptCacheKey(body []byte) string {
	if !bytes.Contains(body, []byte(`"prompt_cache_key"`)) {
		return ""
	}
	mp, err := codec.FromJSON(nil, body, codec.Limits{})
	if err != nil {
		return ""
	}
	var key string
	f := codec.NewFields(mp, codec.PrefixCodec)
	_ = f.Object("body", func(k []byte) error {
		if string(k) == "prompt_cache_key" {
			s, err := f.Str("prompt_cache_key")
			if err == nil {
				key = s
			}
			return err
		}
		return f.Skip()
	})
	return key
}

// sessionID is the store's id of a recorded session: "gw-" and the first
// 16 hex digits of the SHA-256 of what names it and the upstream's name,
// joined by NUL bytes.
func sessionID(parts ...string) string {
	h := sha256.New()
	for i, p := range parts {
		if i > 0 {
			h.Write([]byte{0})
		}
		io.WriteString(h, p)
	}
	return "gw-" + hex.EncodeToString(h.Sum(nil)[:8])
}

// session is one recorded session's writer: it serialises the session's
// appends (concurrent exchanges of one session take turns, and their
// events may interleave), and knows the next seq and the chunks the
// session holds.
type session struct {
	id     string
	header codec.SessionHeader

	// users counts the exchanges using the writer, lastUse is when one
	// last began (both guarded by Gateway.mu): an idle writer may be
	// dropped, and is read back from the store when needed again.
	users   int
	lastUse time.Time

	mu     sync.Mutex
	loaded bool
	next   int64
	// have maps the digest of each chunk the session holds to its
	// wire/chunk's seq.
	have map[recorded.Digest]int64
	n    int // exchanges recorded so far
}

// session returns the writer of the session a request belongs to,
// creating its state (not its store record) on first use.
func (g *Gateway) session(up *Upstream, agent, from string) (*session, error) {
	var id string
	var gw codec.Object
	gw.Str("upstream", up.Name)
	if agent != "" {
		id = sessionID("agent", agent, up.Name)
		gw.Str("agentSession", agent).Str("from", from)
	} else {
		id = sessionID("run", g.runID, up.Name)
		gw.Str("run", g.runID)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if s, ok := g.sessions[id]; ok {
		s.users++
		s.lastUse = g.now()
		return s, nil
	}
	var o codec.Object
	o.Str("type", "session").Int("version", 0).Str("id", id).Number("createdAt", g.millis()).Value("gateway", gw.Bytes())
	h, err := codec.DecodeSessionHeader(o.Bytes())
	if err != nil {
		return nil, err
	}
	s := &session{id: id, header: h, users: 1, lastUse: g.now()}
	g.sessions[id] = s
	return s, nil
}

// maxIdleSessions bounds the writers kept while no exchange uses them:
// each holds the digests of its session's chunks.
const maxIdleSessions = 128

// release ends an exchange's use of s, and drops the least recently used
// idle writers past maxIdleSessions.
func (g *Gateway) release(s *session) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s.users--
	if len(g.sessions) <= maxIdleSessions {
		return
	}
	var idle []*session
	for _, t := range g.sessions {
		if t.users == 0 {
			idle = append(idle, t)
		}
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i].lastUse.Before(idle[j].lastUse) })
	for _, t := range idle[:max(0, len(idle)-maxIdleSessions)] {
		delete(g.sessions, t.id)
	}
}

// load reads the session's state from the store, creating the session
// when it is new. s.mu is held.
func (s *session) load(ctx context.Context, st eventlog.Store) error {
	if s.loaded {
		return nil
	}
	s.have, s.n, s.next = map[recorded.Digest]int64{}, 0, 0
	head, err := st.Head(ctx, s.id)
	switch {
	case errors.Is(err, eventlog.ErrNotFound):
		if err := st.Create(ctx, s.header); err != nil {
			return errors.Wrapf(err, "gateway: create session %s", errors.Safe(s.id))
		}
		s.loaded = true
		return nil
	case err != nil:
		return errors.Wrapf(err, "gateway: session %s", errors.Safe(s.id))
	}
	it, err := st.Scan(ctx, s.id, 0)
	if err != nil {
		return errors.Wrapf(err, "gateway: read session %s", errors.Safe(s.id))
	}
	defer it.Close()
	for {
		ev, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return errors.Wrapf(err, "gateway: read session %s", errors.Safe(s.id))
		}
		switch ev.Type {
		case recorded.TypeChunk:
			d, _, err := recorded.DecodeChunk(&ev)
			if err != nil {
				return errors.Wrapf(err, "gateway: read session %s", errors.Safe(s.id))
			}
			if _, ok := s.have[d]; !ok {
				s.have[d] = ev.Seq
			}
		case recorded.TypeRequest:
			s.n++
		}
	}
	s.next, s.loaded = head.Next, true
	return nil
}

// appendEvents stores evs, whose first seq is s.next, atomically at the
// end of the session. s.mu is held.
// A conflict (another writer appended) makes the next use reload.
func (s *session) appendEvents(ctx context.Context, st eventlog.Store, evs []codec.Event) error {
	if len(evs) == 0 {
		return nil
	}
	if err := st.Append(ctx, s.id, evs); err != nil {
		s.loaded = false
		return errors.Wrapf(err, "gateway: append to session %s", errors.Safe(s.id))
	}
	s.next += int64(len(evs))
	return nil
}
