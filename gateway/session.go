package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/transcript"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// agentHeaders are the headers agents name their session with
// (docs/gateway.md#sessions), in the order they are tried.
var agentHeaders = []string{"X-Claude-Code-Session-Id", "Session-Id", "Thread-Id"}

// maxAgentID bounds an agent's session id; a longer one (or one that is
// not UTF-8) is ignored.
const maxAgentID = 256

// agentID returns the agent's session id of a request and where it was
// found ("" when none): a header, else the body's top-level
// prompt_cache_key (read from x's parsed body when it has one: a body is
// parsed once).
func (g *Gateway) agentID(h http.Header, x *exchange) (id, from string) {
	names := agentHeaders
	if g.opts.SessionHeader != "" {
		names = append([]string{g.opts.SessionHeader}, names...)
	}
	for _, n := range names {
		if v := h.Get(n); v != "" && len(v) <= maxAgentID && utf8.ValidString(v) {
			return v, http.CanonicalHeaderKey(n)
		}
	}
	var v string
	if x.req != nil {
		v = x.req.PromptCacheKey()
	} else { // an API that is not mapped, or a body its mapping refused
		v = promptCacheKey(x.rec)
	}
	if v != "" && len(v) <= maxAgentID && utf8.ValidString(v) {
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
// session holds. A session that is a lane (api and root set) also holds
// the lane's mapping state (docs/gateway.md#sessions and docs/gateway.md#what-is-recorded).
type session struct {
	id     string
	header codec.SessionHeader
	// api and root name the session's lane; both "" for a session that
	// records bytes alone (requests with no conversation root).
	api, root string

	// users counts the exchanges using the writer, lastUse is when one
	// last began (both guarded by Gateway.mu): an idle writer may be
	// dropped, and is read back from the store when needed again. A lane
	// with users is busy: a parallel request of its root goes to another
	// lane session.
	users   int
	lastUse time.Time

	mu     sync.Mutex
	loaded bool
	next   int64
	// have maps the digest of each chunk the session holds to its
	// wire/chunk's seq.
	have map[recorded.Digest]int64
	n    int // exchanges recorded so far
	// lane maps the session's exchanges (nil: no mapping); read says the
	// writer was loaded once (a reload, after a conflict or a refused
	// mapping, closes no turn: exchanges of the lane may be in flight).
	lane *transcript.Lane
	read bool
}

// maxLanes bounds the lane sessions one root of one agent opens for
// requests that overlap in time; past it, they share the last one (and
// an answer that is no longer its lane's open one is recorded unmapped).
const maxLanes = 16

// session returns the writer of the session a request belongs to
// (docs/gateway.md#sessions), creating its state (not its store record) on first use.
// The agent's (or, without an agent id, this gateway run's) first
// session of an upstream is its base: the lane of the first request with
// a conversation root, and where requests without a root are recorded.
// A request whose root is not the base's goes to the lane session of its
// api and root, whose header names the base as parentSession; one whose
// lane is busy (an exchange of it in flight) to the next lane session of
// that root that is not.
func (g *Gateway) session(up *Upstream, agent, from, api, root string) (*session, error) {
	kind, key := "agent", agent
	var gw codec.Object
	gw.Str("upstream", up.Name)
	if agent != "" {
		gw.Str("agentSession", agent).Str("from", from)
	} else {
		kind, key = "run", g.runID
		gw.Str("run", g.runID)
	}
	base := sessionID(kind, key, up.Name)
	g.mu.Lock()
	defer g.mu.Unlock()
	bapi, broot, err := g.baseLane(base)
	if err != nil {
		return nil, err
	}
	if bapi == "" && broot == "" && root != "" && g.isNew(base) {
		bapi, broot = api, root // the base is new: this request's lane is its
	}
	if root == "" || (bapi == api && broot == root) {
		id, parent := base, ""
		if root != "" {
			id, parent = g.freeLane(base, kind, key, up.Name, api, root, base)
		}
		if bapi != "" {
			gw.Str("api", bapi).Str("root", broot)
		}
		return g.writer(id, parent, gw, bapi, broot)
	}
	id, _ := g.freeLane(sessionID(kind, key, up.Name, "lane", api, root), kind, key, up.Name, api, root, base)
	gw.Str("api", api).Str("root", root)
	return g.writer(id, base, gw, api, root)
}

// freeLane returns first, the lane session of a root, when no exchange of
// it is in flight, else the first of its next lane sessions that has
// none (the last one past maxLanes), and the parent the chosen one names
// ("" for first when it is base). g.mu is held.
func (g *Gateway) freeLane(first, kind, key, up, api, root, base string) (string, string) {
	id, parent := first, ""
	if first != base {
		parent = base
	}
	for i := 1; i < maxLanes; i++ {
		s, ok := g.sessions[id]
		if !ok || s.users == 0 {
			break
		}
		id, parent = sessionID(kind, key, up, "lane", api, root, strconv.Itoa(i)), base
	}
	return id, parent
}

// isNew reports whether the base session is neither held nor stored
// (baseLane read the store). g.mu is held.
func (g *Gateway) isNew(base string) bool {
	_, held := g.sessions[base]
	_, known := g.bases[base]
	return !held && !known
}

// baseLane returns the lane of the base session ("", "" when it has none
// or does not exist). g.mu is held.
func (g *Gateway) baseLane(base string) (api, root string, err error) {
	if s, ok := g.sessions[base]; ok {
		return s.api, s.root, nil
	}
	if l, ok := g.bases[base]; ok {
		api, root, _ = strings.Cut(l, "\x00")
		return api, root, nil
	}
	head, err := g.opts.Store.Head(context.Background(), base)
	switch {
	case errors.Is(err, eventlog.ErrNotFound):
		return "", "", nil
	case err != nil:
		return "", "", errors.Wrapf(err, "gateway: session %s", errors.Safe(base))
	}
	api, root = recorded.HeaderLane(head.Header.Raw)
	if len(g.bases) >= maxBases {
		clear(g.bases)
	}
	g.bases[base] = api + "\x00" + root
	return api, root, nil
}

// maxBases bounds the remembered lanes of base sessions whose writers
// were dropped (each is read back from the store's header when needed).
const maxBases = 4096

// writer returns the writer of session id, creating its state when it
// has none. g.mu is held.
func (g *Gateway) writer(id, parent string, gw codec.Object, api, root string) (*session, error) {
	if s, ok := g.sessions[id]; ok {
		s.users++
		s.lastUse = g.now()
		return s, nil
	}
	var o codec.Object
	o.Str("type", "session").Int("version", 0).Str("id", id).Number("createdAt", g.millis())
	if parent != "" {
		o.Str("parentSession", parent).Int("seedLength", 0)
	}
	o.Value(recorded.HeaderKey, gw.Bytes())
	h, err := codec.DecodeSessionHeader(o.Bytes())
	if err != nil {
		return nil, err
	}
	s := &session{id: id, header: h, api: api, root: root, users: 1, lastUse: g.now()}
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
// when it is new. A lane's mapping state is rebuilt from the session's
// events (transcript.LaneFrom, one event at a time); a lane whose last
// request has no answer mapped (the gateway stopped, or crashed, while
// it streamed: no exchange of it is in flight when its writer is loaded)
// is closed: turn/end "interrupted" is appended. s.mu is held.
func (s *session) load(ctx context.Context, g *Gateway) error {
	if s.loaded {
		return nil
	}
	st := g.opts.Store
	s.have, s.n, s.next, s.lane = map[recorded.Digest]int64{}, 0, 0, nil
	if s.api != "" {
		l, err := transcript.NewLane(s.api)
		if err != nil {
			return err
		}
		s.lane = l
	}
	head, err := st.Head(ctx, s.id)
	switch {
	case errors.Is(err, eventlog.ErrNotFound):
		if err := st.Create(ctx, s.header); err != nil {
			return errors.Wrapf(err, "gateway: create session %s", errors.Safe(s.id))
		}
		s.loaded, s.read = true, true
		return nil
	case err != nil:
		return errors.Wrapf(err, "gateway: session %s", errors.Safe(s.id))
	}
	it, err := st.Scan(ctx, s.id, 0)
	if err != nil {
		return errors.Wrapf(err, "gateway: read session %s", errors.Safe(s.id))
	}
	defer it.Close()
	lastReq, open := int64(-1), int64(-1)
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
			lastReq = ev.Seq
		case codec.TypeStepStart:
			open = lastReq
		}
		if s.lane != nil {
			if err := s.lane.Resume(&ev); err != nil {
				g.log.Warn("a lane's events could not be read back; its exchanges are recorded unmapped until a restart", "session", s.id, "seq", ev.Seq)
				s.lane = nil
			}
		}
	}
	s.next, s.loaded = head.Next, true
	first := !s.read
	s.read = true
	if first && s.lane != nil && s.lane.Awaiting() {
		evs, err := s.lane.Close("interrupted", open, s.next, g.millis())
		if err == nil {
			err = s.appendEvents(ctx, st, evs)
		}
		switch {
		case err == nil:
			g.log.Info("closed the turn an earlier gateway left open (its answer was lost)", "session", s.id, "request", open)
		case errors.Is(err, codec.ErrInvalid):
			// A refusal changes nothing in the store, but Close moved
			// the lane on: record the session unmapped until its writer
			// is read back.
			g.log.Warn("the store refused the closing of a lane's interrupted turn", "session", s.id)
			s.loaded, s.lane = true, nil
		default:
			return err
		}
	}
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
