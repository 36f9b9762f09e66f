package verify_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/verify"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// wireEvents builds the events of a recorded session: each step is a
// chunk (its bytes), a request or a response naming bodies by their
// chunks' bytes (each the seq of the latest chunk of those bytes before
// it; bytes of no chunk name the record's own seq, which no run may); a
// digest override makes one lie.
type wireStep struct {
	typ     string
	bytes   []byte   // a chunk's
	parts   []string // a body's chunks
	request int64    // a response's request seq
	lie     bool     // the chunk's or body's digest is wrong
	// runs, when set, name the body's chunks instead of parts (whose
	// bytes still make size and digest).
	runs []recorded.Run
}

func wireSession(t *testing.T, steps []wireStep) []codec.Event {
	t.Helper()
	var evs []codec.Event
	at := map[string]int64{}
	for i, st := range steps {
		var o codec.Object
		var ds []recorded.Run
		var all []byte
		for _, p := range st.parts {
			seq, ok := at[p]
			if !ok {
				seq = int64(i)
			}
			ds = append(ds, recorded.Run{Seq: seq, N: 1})
			all = append(all, p...)
		}
		if st.runs != nil {
			ds = st.runs
		}
		sum := recorded.Sum(all)
		if st.lie {
			sum[0] ^= 1
		}
		switch st.typ {
		case recorded.TypeChunk:
			d := recorded.Sum(st.bytes)
			if st.lie {
				d[0] ^= 1
			}
			recorded.AppendChunk(&o, d, st.bytes)
			at[string(st.bytes)] = int64(i)
		case recorded.TypeRequest:
			q := recorded.Request{API: "openai-chat", Method: "POST", Path: "/v1/chat/completions", Chunks: ds, Size: int64(len(all)), Digest: sum}
			q.AppendData(&o)
		case recorded.TypeResponse:
			p := recorded.Response{Request: st.request, Status: 200, Body: true, Chunks: ds, Size: int64(len(all)), Digest: sum}
			p.AppendData(&o)
		}
		ev, err := codec.NewEvent(st.typ, int64(i), 1, o.Bytes(), codec.SurfaceOp{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// TestVerifyWire: verify checks a gateway session's recorded bytes, with
// findings that name the seq.
func TestVerifyWire(t *testing.T) {
	chunk := func(s string) wireStep { return wireStep{typ: recorded.TypeChunk, bytes: []byte(s)} }
	req := func(parts ...string) wireStep { return wireStep{typ: recorded.TypeRequest, parts: parts} }
	resp := func(at int64, parts ...string) wireStep {
		return wireStep{typ: recorded.TypeResponse, parts: parts, request: at}
	}
	tests := []struct {
		name  string
		steps []wireStep
		want  []string // findings and warnings, as "seq kind level"
	}{
		{"clean", []wireStep{chunk("ab"), chunk("\xff\xfe"), req("ab", "\xff\xfe", "ab"), chunk("cd"), resp(2, "cd", "ab")}, nil},
		{"chunk digest", []wireStep{func() wireStep { c := chunk("ab"); c.lie = true; return c }(), req()}, []string{"0 wire finding", "1 wire warning"}},
		// One run names both chunks; the order of the runs is the body's.
		{"runs", []wireStep{chunk("ab"), chunk("cd"), {typ: recorded.TypeRequest, parts: []string{"cd", "ab", "cd"},
			runs: []recorded.Run{{Seq: 1, N: 1}, {Seq: 0, N: 2}}}, resp(2, "ab")}, nil},
		// Seq 2 is a wire/response, not a chunk.
		{"missing chunk", []wireStep{chunk("ab"), req("ab"), resp(1, "ab"),
			{typ: recorded.TypeRequest, parts: []string{"ab", "zz"}, runs: []recorded.Run{{Seq: 0, N: 1}, {Seq: 2, N: 1}}}},
			[]string{"3 wire finding", "3 wire warning"}},
		{"run past its record", []wireStep{chunk("ab"), {typ: recorded.TypeRequest, parts: []string{"ab"}, runs: []recorded.Run{{Seq: 0, N: 2}}}},
			[]string{"1 wire finding", "0 wire finding", "1 wire warning"}},
		// The chunk after the unanswered request counts as its partial answer.
		{"chunk after its use", []wireStep{req("ab"), chunk("ab")}, []string{"0 wire finding", "0 wire warning", "0 wire warning"}},
		{"body digest", []wireStep{chunk("ab"), func() wireStep { r := req("ab"); r.lie = true; return r }()}, []string{"1 wire finding", "1 wire warning"}},
		{"unused chunk", []wireStep{chunk("ab"), chunk("cd"), req("ab"), resp(2, "ab")}, []string{"1 wire finding"}},
		{"answer of nothing", []wireStep{chunk("ab"), resp(0, "ab")}, []string{"1 wire finding"}},
		{"answered twice", []wireStep{chunk("ab"), req("ab"), resp(1, "ab"), resp(1, "ab")}, []string{"3 wire finding"}},
		{"crash mid-answer", []wireStep{chunk("ab"), req("ab"), chunk("partial")}, []string{"1 wire warning", "1 wire warning"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t)
			h := codec.NewSessionHeader("gw-1", 1, "", "", 0)
			if err := s.Create(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			if err := s.Append(context.Background(), "gw-1", wireSession(t, tt.steps)); err != nil {
				t.Fatal(err)
			}
			res := mustVerify(t, s, "gw-1", verify.Options{Strict: true})
			var got []string
			for _, f := range res.Findings {
				level := "finding"
				if f.Warning {
					level = "warning"
				}
				got = append(got, fmt.Sprintf("%d %s %s", f.Seq, f.Kind, level))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("findings %q, want %q\n%v", got, tt.want, res.Findings)
			}
			if res.Failed() != (len(tt.want) > 0 && !strings.HasSuffix(tt.want[0], "warning")) {
				t.Errorf("Failed() = %v", res.Failed())
			}
		})
	}
}

// TestVerifyRedactedRequest: a wire/request recorded with a redactor is
// checked against its redacted body, and its digest reported "not
// checkable (redacted content)": class redacted, a warning unless
// strict, never a wire finding.
func TestVerifyRedactedRequest(t *testing.T) {
	sent, rec := []byte(`{"k":"ghp_0123456789abcdefghijABCDEFGHIJ012345"}`), []byte(`{"k":"[REDACTED]"}`)
	for _, strict := range []bool{false, true} {
		s := openStore(t)
		h := codec.NewSessionHeader("gw-1", 1, "", "", 0)
		if err := s.Create(context.Background(), h); err != nil {
			t.Fatal(err)
		}
		var c, q codec.Object
		recorded.AppendChunk(&c, recorded.Sum(rec), rec)
		req := recorded.Request{API: "openai-chat", Method: "POST", Path: "/v1/chat/completions", Chunks: []recorded.Run{{Seq: 0, N: 1}},
			Size: int64(len(sent)), Digest: recorded.Sum(sent), Redacted: &recorded.Redaction{Spans: 1, Size: int64(len(rec)), Digest: recorded.Sum(rec)}}
		req.AppendData(&q)
		var evs []codec.Event
		for i, e := range []struct {
			typ  string
			data []byte
		}{{recorded.TypeChunk, c.Bytes()}, {recorded.TypeRequest, q.Bytes()}} {
			ev, err := codec.NewEvent(e.typ, int64(i), 1, e.data, codec.SurfaceOp{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
		}
		if err := s.Append(context.Background(), "gw-1", evs); err != nil {
			t.Fatal(err)
		}
		res := mustVerify(t, s, "gw-1", verify.Options{Strict: strict})
		var got []string
		for _, f := range res.Findings {
			got = append(got, fmt.Sprintf("%d %s %v", f.Seq, f.Kind, f.Warning))
			if f.Kind == verify.Redacted && !strings.Contains(f.String(), "digest not checkable (redacted content)") {
				t.Errorf("message: %s", f)
			}
		}
		want := []string{fmt.Sprintf("1 redacted %v", !strict), "1 wire true"} // and the exchange has no answer
		if strings.Join(got, "|") != strings.Join(want, "|") || res.Failed() != strict {
			t.Errorf("strict %v: findings %q, want %q; Failed %v", strict, got, want, res.Failed())
		}
	}
}
