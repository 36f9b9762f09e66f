package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/gateway"
	"github.com/sessionlog/sessionlog/internal/ssegen"
	"github.com/sessionlog/sessionlog/rebuild"
)

// gatewayTarget is issue 20's bound on stored ÷ sent and answered.
const gatewayTarget = 0.08

// gatewayRequests is the length of a measured session (issue 20's 50).
const gatewayRequests = 50

// gatewayResult is what the store keeps of one agent-shaped session
// recorded through the gateway.
type gatewayResult struct {
	agent            string
	requests         int
	sent, answered   int64
	stored, inUse    int64 // StoredBytes; the bbolt file's pages after close
	events           int64
	answerKB, bodyKB float64 // mean answer, mean request
}

func (g gatewayResult) ratio() float64 { return float64(g.stored) / float64(g.sent+g.answered) }

// measureGateway records a 50-request session shaped like Claude Code's
// and one like Codex's (package ssegen) through an in-process gateway
// into a store of its own, each step answered by a stream of the API's
// own events, and compares what the store keeps with the bytes sent and
// answered.
func measureGateway(ctx context.Context, work string, p progress) ([]gatewayResult, error) {
	var out []gatewayResult
	for _, shape := range []struct {
		agent, path, header string
		bodies              [][]byte
		turn                func(seed uint64, text int) []byte
	}{
		{"Claude Code", "/v1/messages", "X-Claude-Code-Session-Id", ssegen.ClaudeRequests(gatewayRequests), ssegen.AnthropicTurn},
		{"Codex", "/v1/responses", "Session-Id", ssegen.CodexRequests(gatewayRequests), ssegen.ResponsesTurn},
	} {
		r, err := recordThroughGateway(ctx, filepath.Join(work, "gateway-"+strings.ReplaceAll(strings.ToLower(shape.agent), " ", "-")+".db"),
			shape.path, shape.header, shape.bodies, shape.turn)
		if err != nil {
			return nil, errors.Wrapf(err, "%s", errors.Safe(shape.agent))
		}
		r.agent = shape.agent
		p.printf("  %s: %d requests, %s KB sent and %s KB answered, %s KB stored: %.4f", r.agent, r.requests,
			num(float64(r.sent)/1000), num(float64(r.answered)/1000), num(float64(r.stored)/1000), r.ratio())
		out = append(out, r)
	}
	return out, nil
}

// recordThroughGateway sends bodies through a gateway over a fresh store
// at path, each answered by turn with a seed of its own.
func recordThroughGateway(ctx context.Context, path, apiPath, header string, bodies [][]byte,
	turn func(seed uint64, text int) []byte) (res gatewayResult, err error) {
	var seed atomic.Uint64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(turn(1000+seed.Add(1), 2000))
	}))
	defer up.Close()
	base, err := url.Parse(up.URL)
	if err != nil {
		return res, errors.Wrap(err, "logbench: upstream URL")
	}
	st, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		return res, err
	}
	closed := false
	defer func() {
		if !closed {
			err = errors.CombineErrors(err, st.Close())
		}
	}()
	gw, err := gateway.New(gateway.Options{Store: st, Upstreams: []gateway.Upstream{{Name: "up", URL: base}}})
	if err != nil {
		return res, err
	}
	srv := httptest.NewServer(gw)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer client.CloseIdleConnections()
	for _, b := range bodies {
		req, err := http.NewRequestWithContext(ctx, "POST", srv.URL+apiPath, bytes.NewReader(b))
		if err != nil {
			return res, errors.Wrap(err, "logbench: request")
		}
		req.Header.Set(header, "logbench")
		resp, err := client.Do(req)
		if err != nil {
			return res, errors.Wrap(err, "logbench: through the gateway")
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return res, errors.Newf("logbench: through the gateway: status %d, %v", errors.Safe(resp.StatusCode), err)
		}
		res.requests++
		res.sent += int64(len(b))
		res.answered += n
	}
	gw.Wait()
	heads, err := st.Sessions(ctx)
	if err != nil {
		return res, err
	}
	if len(heads) != 1 || heads[0].Next == 0 {
		return res, errors.Newf("logbench: the gateway recorded %d sessions, want one", errors.Safe(len(heads)))
	}
	res.stored, res.events = heads[0].StoredBytes, heads[0].Next
	closed = true
	if err := st.Close(); err != nil {
		return res, err
	}
	if res.inUse, err = highWater(path); err != nil {
		return res, err
	}
	res.answerKB = float64(res.answered) / float64(res.requests) / 1000
	res.bodyKB = float64(res.sent) / float64(res.requests) / 1000
	return res, os.Remove(path)
}

// writeGateway writes the section on the recording gateway's storage.
func (r *report) writeGateway(b *strings.Builder) {
	if len(r.gateway) == 0 {
		return
	}
	b.WriteString("## Recording gateway storage\n\n")
	fmt.Fprintf(b, "A %d-request session shaped like Claude Code's (a 54 KB fixed part after a growing message list, a\n"+
		"cache marker that moves every request) and one shaped like Codex's (an append-only input, a re-ordered\n"+
		"map at the end), generated by `internal/ssegen`, sent through an in-process `logtool gateway` to a local\n"+
		"upstream that answers each step with a stream of the API's own events (a text of ~2,000 characters in\n"+
		"deltas of one to four words, then a tool call). \"stored\" is the session's StoredBytes: its events'\n"+
		"records, each compressed, as every backend counts them; \"bbolt pages\" the store file's pages in use\n"+
		"once closed (events in packs, plus the tree's own pages). The target is stored ÷ (sent + answered)\n"+
		"≤ %.2f (issue 20).\n\n", gatewayRequests, gatewayTarget)
	t := newTable("agent", "requests", "mean request KB", "mean answer KB", "events", "stored KB", "stored ÷ (sent + answered)", "bbolt pages ÷ (sent + answered)")
	t.align[0] = false
	for _, g := range r.gateway {
		raw := float64(g.sent + g.answered)
		t.add(g.agent, fmt.Sprint(g.requests), num(g.bodyKB), num(g.answerKB), fmt.Sprint(g.events),
			num(float64(g.stored)/1000), fmt.Sprintf("%.4f", g.ratio()), fmt.Sprintf("%.4f", float64(g.inUse)/raw))
	}
	t.write(b)
}
