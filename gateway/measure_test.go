package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sessionlog "github.com/sessionlog/sessionlog"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/gateway"
	"github.com/sessionlog/sessionlog/internal/ssegen"
	"github.com/sessionlog/sessionlog/wire/chunk"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// sseAnswer is a short streamed answer of its own text.
func sseAnswer(seed uint64, n int) []byte {
	var b bytes.Buffer
	text := ssegen.Text(seed, n)
	for len(text) > 0 {
		k := min(40, len(text))
		fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%s}}\n\n", strconv.Quote(text[:k]))
		text = text[k:]
	}
	return b.Bytes()
}

// TestGatewayStoredRatio: a 50-request session shaped like Claude
// Code's, and one like Codex's, through the gateway with a distinct
// answer each: what the store keeps (StoredBytes: the events' records,
// each compressed, as every backend counts them), against the bytes sent
// and answered. Each runs with two kinds of
// answer: "deltas", ~7.5 KB of 40-character text deltas (the first
// measure's), and "turns", one step of the API's own stream (text and a
// tool call in deltas of a few words; the Responses API repeats the text
// whole in its done events), as the agents receive them. Measured
// 2026-12-02, with deltas: 0.131 and 0.132 when chunk lists named each
// ~1 KiB chunk by its 64-hex digest and answers were cut like requests;
// 0.056 and 0.048 with lists of seq runs and answers kept in 64 KiB
// pieces; with every exchange also mapped into the conversation's events
// (which hold the prompts and answers a second time), 0.069 and 0.063
// with deltas, 0.081 and 0.081 with turns, against issue 20's target of
// 0.08; 0.068 and 0.062 with deltas, 0.078 and 0.077 with turns once
// records of 16 KiB and more were compressed at S2's better level
// (codec.BetterMin). The measure is deterministic (generated bodies, a
// seed per answer, compression that depends on the bytes only), so the
// bound here is the target itself (cmd/logbench's gateway section
// measures the turns, BENCHMARKS.md has them).
func TestGatewayStoredRatio(t *testing.T) {
	for _, tt := range []struct {
		name, path, header string
		bodies             [][]byte
		turn               func(seed uint64, text int) []byte
	}{
		{"claude-code", "/v1/messages", "X-Claude-Code-Session-Id", ssegen.ClaudeRequests(50), ssegen.AnthropicTurn},
		{"codex", "/v1/responses", "Session-Id", ssegen.CodexRequests(50), ssegen.ResponsesTurn},
	} {
		for _, answers := range []string{"deltas", "turns"} {
			t.Run(tt.name+"/"+answers, func(t *testing.T) {
				up := newUpstream(t, nil)
				var i atomic.Uint64
				up.hook = func(w http.ResponseWriter, r *http.Request) bool {
					w.Header().Set("Content-Type", "text/event-stream")
					if answers == "deltas" {
						w.Write(sseAnswer(1000+i.Add(1), 2000))
					} else {
						w.Write(tt.turn(1000+i.Add(1), 2000))
					}
					return true
				}
				r := newRig(t, gateway.Options{}, up)
				raw, answered := 0, 0
				for _, b := range tt.bodies {
					_, a, err := r.post(tt.path, map[string]string{tt.header: "s"}, b)
					if err != nil {
						t.Fatal(err)
					}
					raw += len(b) + len(a)
					answered += len(a)
				}
				r.gw.Wait()
				h, err := r.store.Head(context.Background(), r.sessions()[0])
				if err != nil {
					t.Fatal(err)
				}
				if _, probs := read(t, r.store, r.sessions()[0]); len(probs) != 0 {
					t.Fatalf("the session does not check: %v", probs)
				}
				if s := r.gw.Stats(); s.Unmapped != 0 || s.Recorded != int64(len(tt.bodies)) {
					t.Fatalf("stats %+v: every request is recorded and mapped", s)
				}
				ratio := float64(h.StoredBytes) / float64(raw)
				t.Logf("%d bytes sent and %d answered, %d stored in %d events: %.4f", raw-answered, answered, h.StoredBytes, h.Next, ratio)
				if ratio > 0.08 {
					t.Errorf("stored %.4f of the bytes; want at most issue 20's 0.08", ratio)
				}
			})
		}
	}
}

// BenchmarkGatewayFirstByte measures the time to the first answer byte of
// a 50 KB request, straight to the upstream and through the gateway (the
// log-first fsync included), and reports p50 and p99.
func BenchmarkGatewayFirstByte(b *testing.B) {
	bodies := ssegen.ClaudeRequests(64)
	up := newUpstream(&testing.T{}, []byte("event: message_start\ndata: {}\n\n"))
	defer up.Close()
	dir := b.TempDir()
	st := openSyncStore(b, filepath.Join(dir, "s.db"))
	defer st.Close()
	gw, err := gateway.New(gateway.Options{Store: st, Upstreams: []gateway.Upstream{{Name: "up", URL: up.URL2()}}})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptestServer(gw)
	defer srv.Close()
	for _, target := range []struct{ name, url string }{{"direct", up.URL}, {"gateway", srv.URL}} {
		b.Run(target.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			var ds []time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				resp, err := client.Post(target.url+"/v1/messages", "application/json", bytes.NewReader(bodies[i%len(bodies)]))
				if err != nil {
					b.Fatal(err)
				}
				one := make([]byte, 1)
				if _, err := io.ReadFull(resp.Body, one); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// TestGatewayMemory: clients stream large answers at once; when each has
// read half of its answer, the gateway's live heap has grown by at most
// half of what the answers sent so far hold: they are never held whole.
// GATEWAY_MEMORY=CLIENTSxMB sizes it: .ci/gateway.sh runs 16x16 (9–11 MB
// measured for the 128 MB sent), the test command a smaller 8x8 (256 MB
// streamed took 45 s of its budget under the race detector).
// (logtool's TestGatewayResident measures the process's resident memory.)
func TestGatewayMemory(t *testing.T) {
	clients, mb := 8, 8
	if v := os.Getenv("GATEWAY_MEMORY"); v != "" {
		c, m, _ := strings.Cut(v, "x")
		fmt.Sscan(c, &clients)
		fmt.Sscan(m, &mb)
	}
	answer := ssegen.Anthropic(mb << 20)
	up := newUpstream(t, answer)
	up.piece = 16 << 10
	// The store's unapplied tail is not the gateway's: bound it small, so
	// that an applier that lags on a loaded machine does not count as the
	// gateway holding answers.
	st, err := sessionlog.Open(context.Background(), filepath.Join(t.TempDir(), "sessions.db"), &eventlog.Options{NoSync: true},
		&sessionlog.DriverOptions{Bolt: boltlog.Options{WAL: boltlog.WALOptions{ApplyBytes: 1 << 20, MaxUnapplied: 4 << 20}}})
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, gateway.Options{Store: st}, up)
	// One exchange first: what the first one sets up once (the
	// transports, the codec's tables, the store's first pages) is no
	// answer held.
	_, warm, err := r.post("/v1/messages", map[string]string{"X-Claude-Code-Session-Id": "agent-warm"}, []byte(`{"n":-1}`))
	if err != nil || len(warm) != len(answer) {
		t.Fatalf("warm-up exchange: %d bytes, %v; want %d", len(warm), err, len(answer))
	}
	warm = nil
	r.gw.Wait()
	runtime.GC()
	base := liveHeap()
	var half, done sync.WaitGroup
	resume := make(chan struct{})
	for c := 0; c < clients; c++ {
		half.Add(1)
		done.Add(1)
		go func(c int) {
			defer done.Done()
			req, _ := http.NewRequest("POST", r.srv.URL+"/v1/messages", strings.NewReader(`{"n":`+strconv.Itoa(c)+`}`))
			req.Header.Set("X-Claude-Code-Session-Id", "agent-"+strconv.Itoa(c))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				half.Done()
				return
			}
			defer resp.Body.Close()
			n, err := io.CopyN(io.Discard, resp.Body, int64(len(answer)/2))
			half.Done()
			<-resume
			m, err2 := io.Copy(io.Discard, resp.Body)
			if err != nil || err2 != nil || n+m != int64(len(answer)) {
				t.Errorf("client %d: %d bytes, %v %v", c, n+m, err, err2)
			}
		}(c)
	}
	half.Wait()
	runtime.GC()
	mid := liveHeap()
	close(resume)
	done.Wait()
	r.gw.Wait()
	grew := (mid - base) >> 20
	t.Logf("%d clients each half way through a %d MB answer: the live heap grew by %d MB", clients, mb, grew)
	if limit := int64(clients * mb / 4); grew > limit {
		t.Errorf("the live heap grew by %d MB while %d MB of answers streamed; want at most %d", grew, clients*mb/2, limit)
	}
	if s := r.gw.Stats(); s.Recorded != int64(clients)+1 || s.Cut != 0 { // and the warm-up
		t.Errorf("stats %+v", s)
	}
}

// BenchmarkGatewayConcurrent runs 64 clients at once, each its own agent
// session, posting 50 KB bodies with short streamed answers, straight to
// the upstream and through the gateway (every append synced); it reports
// exchanges per second and the time to the first answer byte.
func BenchmarkGatewayConcurrent(b *testing.B) {
	bodies := ssegen.ClaudeRequests(20)
	up := newUpstream(&testing.T{}, []byte("event: message_start\ndata: {}\n\nevent: message_stop\ndata: {}\n\n"))
	defer up.Close()
	st := openSyncStore(b, filepath.Join(b.TempDir(), "s.db"))
	defer st.Close()
	gw, err := gateway.New(gateway.Options{Store: st, Upstreams: []gateway.Upstream{{Name: "up", URL: up.URL2()}}})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptestServer(gw)
	defer srv.Close()
	for _, target := range []struct{ name, url string }{{"direct", up.URL}, {"gateway", srv.URL}} {
		b.Run(target.name, func(b *testing.B) {
			const clients = 64
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
			var mu sync.Mutex
			var ds []time.Duration
			var next atomic.Int64
			start := time.Now()
			var wg sync.WaitGroup
			for c := 0; c < clients; c++ {
				wg.Add(1)
				go func(c int) {
					defer wg.Done()
					for i := 0; next.Add(1) <= int64(b.N); i++ {
						req, _ := http.NewRequest("POST", target.url+"/v1/messages", bytes.NewReader(bodies[i%len(bodies)]))
						req.Header.Set("X-Claude-Code-Session-Id", "bench-"+strconv.Itoa(c))
						t0 := time.Now()
						resp, err := client.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						one := make([]byte, 1)
						if _, err := io.ReadFull(resp.Body, one); err != nil {
							b.Error(err)
						}
						d := time.Since(t0)
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						mu.Lock()
						ds = append(ds, d)
						mu.Unlock()
					}
				}(c)
			}
			wg.Wait()
			elapsed := time.Since(start)
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			b.ReportMetric(float64(len(ds))/elapsed.Seconds(), "exchanges/s")
			b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// TestGatewayChunkRuns: a request's chunks are named by runs of seqs, a
// handful for a body of ~55 chunks that the session mostly holds; an
// answer is stored in pieces of at most chunk.PieceMax, one wire/chunk
// each (not ~1 KiB chunks), and an answer the session holds already (the
// same bytes again) adds no chunk.
func TestGatewayChunkRuns(t *testing.T) {
	answer := ssegen.Anthropic(150 << 10)
	up := newUpstream(t, answer)
	r := newRig(t, gateway.Options{}, up)
	bodies := ssegen.ClaudeRequests(3)
	for _, b := range bodies {
		if _, a, err := r.post("/v1/messages", map[string]string{"X-Claude-Code-Session-Id": "s"}, b); err != nil || !bytes.Equal(a, answer) {
			t.Fatalf("%v, answer equal %v", err, bytes.Equal(a, answer))
		}
	}
	r.gw.Wait()
	id := r.sessions()[0]
	s, probs := read(t, r.store, id)
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	it, err := r.store.Scan(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	sizes := map[int64]int{} // wire/chunk seq → bytes
	for {
		ev, err := it.Next()
		if err != nil {
			break
		}
		if ev.Type == recorded.TypeChunk {
			_, b, err := recorded.DecodeChunk(&ev)
			if err != nil {
				t.Fatal(err)
			}
			sizes[ev.Seq] = len(b)
		}
	}
	xs := s.Exchanges()
	for i, x := range xs {
		if got := body(t, s, x.Request.Chunks); !bytes.Equal(got, bodies[i]) {
			t.Errorf("exchange %d: the recorded request differs", x.N)
		}
		if got := body(t, s, x.Response.Chunks); !bytes.Equal(got, answer) {
			t.Errorf("exchange %d: the recorded answer differs", x.N)
		}
		n := int64(0)
		for _, run := range x.Request.Chunks {
			n += run.N
		}
		if i > 0 && (len(x.Request.Chunks) > 6 || n < 30) {
			t.Errorf("exchange %d: %d chunks in %d runs %v, want ~40 in a few", x.N, n, len(x.Request.Chunks), x.Request.Chunks)
		}
		var pieces []int
		for _, run := range x.Response.Chunks {
			for q := run.Seq; q < run.Seq+run.N; q++ {
				pieces = append(pieces, sizes[q])
			}
		}
		if len(pieces) != 3 || pieces[0] > chunk.PieceMax || pieces[0] < chunk.PieceMax-3 {
			t.Errorf("exchange %d: the answer of %d bytes is in %d pieces (the first %v), want 3 of up to %d", x.N, len(answer), len(pieces), pieces[:min(3, len(pieces))], chunk.PieceMax)
		}
		if i > 0 && !reflect.DeepEqual(x.Response.Chunks, xs[0].Response.Chunks) {
			t.Errorf("exchange %d: the same answer again is in chunks %v, not the first's %v", x.N, x.Response.Chunks, xs[0].Response.Chunks)
		}
	}
}

// liveHeap is the heap that the last collection found live: unlike
// MemStats.HeapAlloc, not what goroutines still streaming allocated
// after it.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}
