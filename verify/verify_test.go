package verify_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/corpus"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/scenario"
	"github.com/sessionlog/sessionlog/verify"
)

func openStore(t *testing.T) *boltlog.Log {
	t.Helper()
	l, err := boltlog.Open(filepath.Join(t.TempDir(), "s.db"), &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

const demo = `{"session":"root","system":"Be brief.","tools":[{"name":"read","description":"Read","parameters":{"type":"object"}}],
 "prefix":[[{"role":"user","content":[{"type":"text","text":"notes"}]}]],
 "turns":[{"prompt":"read it","replies":[[{"type":"tool-call","id":"c1","name":"read","arguments":"{}"}],[{"type":"text","text":"done"}]],
   "toolResults":{"c1":{"content":[{"type":"text","text":"data"}]}}},
  {"prompt":"again","system":"Be very brief.","replies":[[{"type":"text","text":"ok"}]]}]}`

func runScenario(t *testing.T, s loop.Store, js, session string) {
	t.Helper()
	sc, err := scenario.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scenario.Run(context.Background(), s, sc, scenario.Options{Session: session}); err != nil {
		t.Fatal(err)
	}
}

func mustVerify(t *testing.T, s verify.Store, id string, opts verify.Options) verify.Result {
	t.Helper()
	res, err := verify.Session(context.Background(), s, id, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestLoopSessionsVerifyClean(t *testing.T) {
	s := openStore(t)
	runScenario(t, s, demo, "root")
	res := mustVerify(t, s, "root", verify.Options{Strict: true})
	if len(res.Findings) != 0 || res.Steps != 3 || res.Digests != 3 {
		t.Fatalf("result %+v", res)
	}
}

// A fork child's inherited digests were computed with its parent's id;
// verify checks them with that id, and reports them unverifiable (not a
// finding) when the parent is gone.
func TestInheritedDigests(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	runScenario(t, s, demo, "root")
	head, _ := s.Head(ctx, "root")
	child := codec.NewSessionHeader("child", 2, "", "root", head.Next)
	if err := s.Fork(ctx, "root", head.Next-1, child); err != nil {
		t.Fatal(err)
	}
	runScenario(t, s, `{"turns":[{"prompt":"more","replies":[[{"type":"text","text":"sure"}]]}]}`, "child")
	res := mustVerify(t, s, "child", verify.Options{Strict: true})
	if len(res.Findings) != 0 || res.Digests != 4 || res.Inherited != 0 {
		t.Fatalf("child: %+v", res)
	}

	// The same child, copied into a store without its parent.
	lonely := openStore(t)
	exp := exportSession(t, s, "child")
	sc := codec.NewScanner(strings.NewReader(exp), codec.Limits{})
	h, err := sc.Header()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lonely.Import(ctx, h, sc); err != nil {
		t.Fatal(err)
	}
	res = mustVerify(t, lonely, "child", verify.Options{Strict: true})
	if len(res.Findings) != 0 || res.Inherited != 3 || res.Digests != 1 {
		t.Fatalf("lonely child: %+v", res)
	}
}

func exportSession(t *testing.T, s *boltlog.Log, id string) string {
	t.Helper()
	ctx := context.Background()
	head, err := s.Head(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := head.Header.AppendJSON(nil)
	out = append(out, '\n')
	it, err := s.Scan(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for {
		ev, err := it.Next()
		if err != nil {
			break
		}
		out, _ = ev.AppendJSON(out)
		out = append(out, '\n')
	}
	return string(out)
}

func appendJSON(t *testing.T, s *boltlog.Log, id string, lines ...string) {
	t.Helper()
	var evs []codec.Event
	for _, l := range lines {
		ev, err := codec.ParseEvent([]byte(l), codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if err := s.Append(context.Background(), id, evs); err != nil {
		t.Fatal(err)
	}
}

func TestDigestFindings(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	if err := s.Create(ctx, codec.NewSessionHeader("s", 1, "", "", 0)); err != nil {
		t.Fatal(err)
	}
	zero := strings.Repeat("0", 64)
	appendJSON(t, s, "s",
		`{"type":"request/digest","seq":0,"time":1,"data":{"turn":1,"step":1,"sha256":"`+zero+`"}}`,
		`{"type":"turn/start","seq":1,"time":1,"data":{"turn":1}}`,
		`{"type":"user/message","seq":2,"time":1,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
		`{"type":"step/start","seq":3,"time":1,"data":{"turn":1,"step":1}}`,
		`{"type":"request/digest","seq":4,"time":1,"data":{"turn":1,"step":1,"sha256":"`+zero+`"}}`,
		`{"type":"step/end","seq":5,"time":1,"data":{"turn":1,"step":1}}`,
		`{"type":"step/start","seq":6,"time":1,"data":{"turn":1,"step":2}}`,
		`{"type":"request/header","seq":7,"time":1,"data":{"header":{"config":{"model":"m"}},"reason":"initial"}}`,
		`{"type":"request/digest","seq":8,"time":1,"data":{"turn":1,"step":2,"sha256":"`+zero+`"}}`,
		`{"type":"step/end","seq":9,"time":1,"data":{"turn":1,"step":2}}`,
		`{"type":"turn/end","seq":10,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
	)
	res := mustVerify(t, s, "s", verify.Options{})
	var got []string
	for _, f := range res.Findings {
		if !f.Warning {
			got = append(got, f.Kind.String()+"@"+itoa(f.Seq))
		}
	}
	// seq 0: outside any step; seq 4: on a null step; seq 8: mismatch.
	if strings.Join(got, ",") != "digest@4,digest@8,digest@0" {
		t.Fatalf("findings %v (%v)", got, res.Findings)
	}
}

func itoa(n int64) string {
	if n < 0 {
		return "-"
	}
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		n /= 10
		if n == 0 {
			return s
		}
	}
}

func TestStructureWarningsAndStrict(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	if err := s.Create(ctx, codec.NewSessionHeader("s", 1, "", "", 0)); err != nil {
		t.Fatal(err)
	}
	appendJSON(t, s, "s",
		`{"type":"turn/start","seq":0,"time":1,"data":{"turn":2}}`,
		`{"type":"turn/end","seq":1,"time":1,"data":{"turn":2,"reason":{"kind":"completed"}}}`)
	res := mustVerify(t, s, "s", verify.Options{})
	if res.Failed() || len(res.Findings) != 1 || !res.Findings[0].Warning {
		t.Fatalf("lenient: %+v", res.Findings)
	}
	res = mustVerify(t, s, "s", verify.Options{Strict: true})
	if !res.Failed() {
		t.Fatalf("strict: %+v", res.Findings)
	}
}

// damaged serves one record with a flipped byte.
type damaged struct {
	*boltlog.Log
	seq int64
}

func (d damaged) Records(ctx context.Context, id string, from int64, fn func(int64, []byte) error) error {
	return d.Log.Records(ctx, id, from, func(seq int64, rec []byte) error {
		if seq == d.seq {
			rec = append([]byte(nil), rec...)
			rec[len(rec)/2] ^= 0x40
		}
		return fn(seq, rec)
	})
}

func TestDamagedRecordIsCorruptAtItsSeq(t *testing.T) {
	s := openStore(t)
	runScenario(t, s, demo, "root")
	res := mustVerify(t, damaged{Log: s, seq: 5}, "root", verify.Options{})
	if !res.Failed() {
		t.Fatal("damage went unnoticed")
	}
	f := res.Findings[0]
	if f.Kind != verify.Corrupt || f.Seq != 5 {
		t.Fatalf("first finding %v", f)
	}
}

// Every DSH log the engine accepts verifies without findings (its
// fixtures break the turn structure, which is a warning).
func TestCorpusVerifies(t *testing.T) {
	files := corpus.Files(t)
	s := openStore(t)
	ctx := context.Background()
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := codec.NewScanner(strings.NewReader(string(data)), codec.Limits{})
		h, err := sc.Header()
		if err != nil {
			continue
		}
		// Cases share ids: store each under its case name.
		h = codec.NewSessionHeader(filepath.Base(filepath.Dir(f)), h.CreatedAt, h.Cwd, h.ParentSession, h.SeedLength)
		if _, err := s.Import(ctx, h, sc); err != nil {
			continue
		}
		n++
		res := mustVerify(t, s, h.ID, verify.Options{})
		if res.Failed() {
			t.Errorf("%s: %v", h.ID, res.Findings)
		}
	}
	if n < 100 {
		t.Fatalf("only %d corpus logs imported", n)
	}
}
