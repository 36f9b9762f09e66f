package fuzz

import (
	"bytes"
	"io"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

// FuzzScanner feeds arbitrary multi-line input to Scanner: it never panics
// and never loops; every refusal is classified; errors are sticky; and on
// success the kept events are the contiguous lines 2…n+1 with seqs 0…n-1,
// and Torn accounts for exactly the rest of the input.
func FuzzScanner(f *testing.F) {
	hdr := `{"type":"session","version":0,"id":"s","createdAt":0}` + "\n"
	f.Add([]byte(hdr))
	f.Add([]byte(hdr + `{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}` + "\n" + `{"type":"turn/end","seq":1,"time":0,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n"))
	f.Add([]byte(hdr + `{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}` + "\n" + `{"type":"turn/e`))
	f.Add([]byte(hdr + "{\n" + `{"type":"turn/end","seq":1,"time":0,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n"))
	f.Add([]byte(hdr + `{"type":"x","seq":1,"time":0,"data":{}}` + "\n\x00\x00\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := codec.NewScanner(bytes.NewReader(data), codec.Limits{MaxLine: 1 << 16, MaxDepth: 64})
		h, err := s.Header()
		if err != nil {
			checkClass(t, "Header", err, codec.ErrCorrupt, codec.ErrInvalid, codec.ErrUnsupported)
			return
		}
		if _, err := h.AppendJSON(nil); err != nil {
			t.Fatalf("header AppendJSON = %v", err)
		}
		maxEvents := bytes.Count(data, []byte("\n"))
		var n int
		for {
			ev, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				checkClass(t, "Next", err, codec.ErrCorrupt, codec.ErrInvalid)
				if _, again := s.Next(); again != err {
					t.Fatalf("Next after %v = %v, want the same error", err, again)
				}
				return
			}
			if ev.Seq != int64(n) {
				t.Fatalf("event %d has seq %d", n, ev.Seq)
			}
			if _, err := ev.AppendJSON(nil); err != nil {
				t.Fatalf("AppendJSON(seq %d) = %v", ev.Seq, err)
			}
			n++
			if n > maxEvents {
				t.Fatalf("Scanner returned %d events from %d lines", n, maxEvents)
			}
		}
		if _, err := s.Next(); err != io.EOF {
			t.Fatalf("Next after io.EOF = %v, want io.EOF", err)
		}
		// The header and n events are the first n+1 lines; the torn tail
		// is everything after them.
		kept := 0
		for i := 0; i <= n; i++ {
			j := bytes.IndexByte(data[kept:], '\n')
			if j < 0 {
				t.Fatalf("%d events kept but only %d complete lines", n, i)
			}
			kept += j + 1
		}
		rest := data[kept:]
		torn := s.Torn()
		if torn.Bytes != int64(len(rest)) {
			t.Fatalf("Torn().Bytes = %d, want %d (input %d bytes, %d kept)", torn.Bytes, len(rest), len(data), kept)
		}
		wantLines := bytes.Count(rest, []byte("\n"))
		if len(rest) > 0 && rest[len(rest)-1] != '\n' {
			wantLines++
		}
		if torn.Lines != wantLines {
			t.Fatalf("Torn().Lines = %d, want %d", torn.Lines, wantLines)
		}
		switch {
		case len(rest) == 0 && (torn.FirstLine != 0 || torn.Cause != nil):
			t.Fatalf("nothing dropped but Torn() = %+v", torn)
		case len(rest) > 0 && (torn.FirstLine != n+2 || torn.Cause == nil):
			t.Fatalf("Torn() = %+v, want FirstLine %d and a cause", torn, n+2)
		}
	})
}
