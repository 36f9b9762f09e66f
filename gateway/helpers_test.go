package gateway_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/gateway"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// received is one request as the fake upstream saw it.
type received struct {
	method, uri string
	header      http.Header
	body        []byte
}

// upstream is a scripted model provider: it records what it receives and
// answers with script.
type upstream struct {
	*httptest.Server
	mu   sync.Mutex
	got  []received
	hook func(w http.ResponseWriter, r *http.Request) bool // true: answered
	// answer is the body streamed back, in pieces of piece bytes.
	answer []byte
	piece  int
	ctype  string
}

func newUpstream(t *testing.T, answer []byte) *upstream {
	u := &upstream{answer: answer, piece: 4096, ctype: "text/event-stream"}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.got = append(u.got, received{method: r.Method, uri: r.RequestURI, header: r.Header.Clone(), body: b})
		hook := u.hook
		u.mu.Unlock()
		if hook != nil && hook(w, r) {
			return
		}
		w.Header().Set("Content-Type", u.ctype)
		w.Header().Set("Request-Id", "req_123")
		w.WriteHeader(http.StatusOK)
		for off := 0; off < len(u.answer); off += u.piece {
			w.Write(u.answer[off:min(off+u.piece, len(u.answer))])
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(u.Close)
	return u
}

// URL2 is the upstream's base URL, parsed.
func (u *upstream) URL2() *url.URL {
	b, _ := url.Parse(u.URL)
	return b
}

func (u *upstream) requests() []received {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]received(nil), u.got...)
}

// rig is a gateway over a real bbolt store, served by httptest.
type rig struct {
	t     *testing.T
	path  string
	store eventlog.Store
	gw    *gateway.Gateway
	srv   *httptest.Server
}

func openStore(t *testing.T, path string) eventlog.Store {
	t.Helper()
	st, err := sessionlog.Open(context.Background(), path, &eventlog.Options{NoSync: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// openSyncStore opens a store that syncs every append, as the gateway's
// does.
func openSyncStore(tb testing.TB, path string) eventlog.Store {
	tb.Helper()
	st, err := sessionlog.Open(context.Background(), path, nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

func httptestServer(h http.Handler) *httptest.Server { return httptest.NewServer(h) }

func newRig(t *testing.T, opts gateway.Options, ups ...*upstream) *rig {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sessions.db")
	st := opts.Store
	if st == nil {
		st = openStore(t, path)
		opts.Store = st
	}
	if opts.Upstreams == nil {
		for i, u := range ups {
			base, _ := url.Parse(u.URL)
			name := "up"
			if i > 0 {
				name = "up" + string(rune('0'+i))
			}
			opts.Upstreams = append(opts.Upstreams, gateway.Upstream{Name: name, URL: base})
		}
	}
	gw, err := gateway.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, path: path, store: st, gw: gw, srv: httptest.NewServer(gw)}
	t.Cleanup(func() {
		r.srv.Close()
		gw.Wait()
		st.Close()
	})
	return r
}

// post sends a request through the gateway and returns the answer.
func (r *rig) post(path string, hdr map[string]string, body []byte) (*http.Response, []byte, error) {
	req, err := http.NewRequest("POST", r.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultTransport.(*http.Transport).Clone().RoundTrip(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// sessions returns the ids of the store's sessions.
func (r *rig) sessions() []string { return r.sessionsOf(r.store) }

func (r *rig) sessionsOf(st eventlog.Store) []string {
	heads, err := st.Sessions(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	var ids []string
	for _, h := range heads {
		ids = append(ids, h.Header.ID)
	}
	return ids
}

// read returns the session's recorded exchanges, and the problems its
// wire events have.
func read(t *testing.T, st eventlog.Store, id string) (*recorded.Session, []recorded.Problem) {
	t.Helper()
	it, err := st.Scan(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var s recorded.Session
	var probs []recorded.Problem
	for {
		ev, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		probs = append(probs, s.Add(&ev)...)
	}
	return &s, append(probs, s.End()...)
}

// body reassembles recorded chunks.
func body(t *testing.T, s *recorded.Session, runs []recorded.Run) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := s.WriteBody(&b, runs); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// exportAll returns every session of st as JSONL, as logtool export
// writes it: the decompressed text, where a key a compressed store file
// would hide shows.
func exportAll(t *testing.T, st eventlog.Store) []byte {
	t.Helper()
	ctx := context.Background()
	heads, err := st.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, h := range heads {
		if out, err = h.Header.AppendJSON(out); err != nil {
			t.Fatal(err)
		}
		out = append(out, '\n')
		it, err := st.Scan(ctx, h.Header.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		for {
			ev, err := it.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if out, err = ev.AppendJSON(out); err != nil {
				t.Fatal(err)
			}
			out = append(out, '\n')
		}
		it.Close()
	}
	return out
}
