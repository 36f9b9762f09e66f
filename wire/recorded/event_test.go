package recorded_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

func event(t *testing.T, typ string, fill func(o *codec.Object)) codec.Event {
	t.Helper()
	var o codec.Object
	fill(&o)
	ev, err := codec.NewEvent(typ, 7, 1, o.Bytes(), codec.SurfaceOp{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestRoundTrip: what AppendChunk and AppendData write, the decoders read
// back; a chunk that is not UTF-8 is base64; an answer without a body is
// chunks null.
func TestRoundTrip(t *testing.T) {
	for _, b := range [][]byte{[]byte("plain ✓ text"), {0xff, 0x00, 0xed, 0xa0, 0x80}} {
		d := recorded.Sum(b)
		ev := event(t, recorded.TypeChunk, func(o *codec.Object) { recorded.AppendChunk(o, d, b) })
		gd, gb, err := recorded.DecodeChunk(&ev)
		if err != nil || gd != d || !bytes.Equal(gb, b) {
			t.Errorf("chunk %q: %v %x %q", b, err, gd, gb)
		}
	}
	q := recorded.Request{API: "openai-chat", Method: "POST", Path: "/v1/chat/completions?x=1",
		Headers: []recorded.Field{{Name: "content-type", Value: "application/json"}},
		Chunks:  []recorded.Run{{Seq: 0, N: 1}, {Seq: 3, N: 4}}, Size: 2, Digest: recorded.Sum([]byte("ab"))}
	ev := event(t, recorded.TypeRequest, q.AppendData)
	if got, err := recorded.DecodeRequest(&ev); err != nil || !reflect.DeepEqual(got, q) {
		t.Errorf("request: %v\n got %+v\nwant %+v", err, got, q)
	}
	q.Redacted = &recorded.Redaction{Spans: 2, Size: 1, Digest: recorded.Sum([]byte("a"))}
	ev = event(t, recorded.TypeRequest, q.AppendData)
	if got, err := recorded.DecodeRequest(&ev); err != nil || !reflect.DeepEqual(got, q) {
		t.Errorf("redacted request: %v\n got %+v\nwant %+v", err, got, q)
	}
	if size, d := q.Recorded(); size != 1 || d != recorded.Sum([]byte("a")) {
		t.Errorf("Recorded: %d %s", size, d)
	}
	for _, p := range []recorded.Response{
		{Request: 3, Status: 200, Headers: []recorded.Field{{Name: "request-id", Value: "r1"}}, Body: true,
			Chunks: []recorded.Run{{Seq: 6, N: 1}}, Size: 1, Digest: recorded.Sum([]byte("x")), Streamed: true, Cut: recorded.CutClient},
		{Request: 4, Digest: recorded.Sum(nil), Cut: recorded.CutUpstream},
	} {
		ev := event(t, recorded.TypeResponse, p.AppendData)
		got, err := recorded.DecodeResponse(&ev)
		if p.Headers == nil {
			p.Headers = got.Headers // an empty object reads back as no fields
		}
		if err != nil || !reflect.DeepEqual(got, p) {
			t.Errorf("response: %v\n got %+v\nwant %+v", err, got, p)
		}
	}
}

// runsOf fills a wire/request whose chunks member is the JSON list.
func runsOf(list string) func(o *codec.Object) {
	return func(o *codec.Object) {
		o.Str("api", "x").Str("method", "POST").Str("path", "/")
		o.Value("headers", codec.AppendMapHeader(nil, 0))
		mp, err := codec.FromJSON(nil, []byte(list), codec.Limits{})
		if err != nil {
			panic(err)
		}
		o.Value("chunks", mp)
		o.Int("size", 0).Str("digest", recorded.Sum(nil).String())
	}
}

// TestAppendRun: consecutive seqs make one run; a seq that does not
// follow (earlier, repeated or later) starts another.
func TestAppendRun(t *testing.T) {
	var runs []recorded.Run
	for _, q := range []int64{4, 5, 6, 2, 3, 3, 9} {
		runs = recorded.AppendRun(runs, q)
	}
	want := []recorded.Run{{Seq: 4, N: 3}, {Seq: 2, N: 2}, {Seq: 3, N: 1}, {Seq: 9, N: 1}}
	if !reflect.DeepEqual(runs, want) {
		t.Errorf("runs %v, want %v", runs, want)
	}
}

// TestDecodeRefuses: events without their members, or with members of the
// wrong kind, are refused (codec.ErrInvalid), never a panic.
func TestDecodeRefuses(t *testing.T) {
	for _, tt := range []struct {
		typ  string
		fill func(o *codec.Object)
	}{
		{recorded.TypeChunk, func(o *codec.Object) { o.Str("text", "x") }},
		{recorded.TypeChunk, func(o *codec.Object) { o.Str("digest", "ABC").Str("text", "x") }},
		{recorded.TypeChunk, func(o *codec.Object) {
			o.Str("digest", recorded.Sum(nil).String()).Str("base64", "!!")
		}},
		{recorded.TypeChunk, func(o *codec.Object) { o.Str("digest", recorded.Sum(nil).String()).Str("text", "") }},
		{recorded.TypeRequest, func(o *codec.Object) { o.Str("api", "x") }},
		{recorded.TypeRequest, func(o *codec.Object) {
			q := recorded.Request{}
			q.AppendData(o)
			o.Int("size", -1)
		}},
		{recorded.TypeResponse, func(o *codec.Object) { o.Int("request", 1).Str("status", "200") }},
		{recorded.TypeRequest, func(o *codec.Object) {
			q := recorded.Request{}
			q.AppendData(o)
			var red codec.Object
			red.Int("spans", 1).Int("size", 3)
			o.Value("redacted", red.Bytes())
		}},
		{recorded.TypeRequest, func(o *codec.Object) {
			q := recorded.Request{}
			q.AppendData(o)
			o.Str("redacted", "yes")
		}},
		// Chunk lists: runs of [seq,n] before the record (at seq 7).
		{recorded.TypeRequest, runsOf(`["` + recorded.Sum(nil).String() + `"]`)}, // a digest list
		{recorded.TypeRequest, runsOf(`[[1]]`)},
		{recorded.TypeRequest, runsOf(`[[1,2,3]]`)},
		{recorded.TypeRequest, runsOf(`[[1,0]]`)},
		{recorded.TypeRequest, runsOf(`[[-1,2]]`)},
		{recorded.TypeRequest, runsOf(`[[7,1]]`)},
		{recorded.TypeRequest, runsOf(`[[6,2]]`)},
		{recorded.TypeRequest, runsOf(`[[1,9223372036854775807]]`)},
		{recorded.TypeRequest, runsOf(`[["1",1]]`)},
		{recorded.TypeResponse, func(o *codec.Object) {
			p := recorded.Response{Body: true, Chunks: []recorded.Run{{Seq: 5, N: 3}}}
			p.AppendData(o)
		}},
	} {
		ev := event(t, tt.typ, tt.fill)
		var err error
		switch tt.typ {
		case recorded.TypeChunk:
			_, _, err = recorded.DecodeChunk(&ev)
		case recorded.TypeRequest:
			_, err = recorded.DecodeRequest(&ev)
		default:
			_, err = recorded.DecodeResponse(&ev)
		}
		if err == nil {
			t.Errorf("%s %x: decoded", tt.typ, ev.Raw)
		}
	}
}
