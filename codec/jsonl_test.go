package codec_test

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

const hdr = `{"type":"session","version":0,"id":"s","createdAt":0}`

// evLine writes a small valid event line of the given type and seq.
func evLine(seq int, typ string) string {
	switch typ {
	case codec.TypeTurnStart:
		return fmt.Sprintf(`{"type":"turn/start","seq":%d,"time":0,"data":{"turn":1}}`, seq)
	case codec.TypeTurnEnd:
		return fmt.Sprintf(`{"type":"turn/end","seq":%d,"time":0,"data":{"turn":1,"reason":{"kind":"completed"}}}`, seq)
	case codec.TypeUserMessage:
		return fmt.Sprintf(`{"type":"user/message","seq":%d,"time":0,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}`, seq)
	}
	return fmt.Sprintf(`{"type":%q,"seq":%d,"time":0,"data":{}}`, typ, seq)
}

// file joins lines, each ending in a newline.
func file(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

type scanResult struct {
	seqs []int64
	err  error
	torn codec.Torn
}

func scanAll(t *testing.T, in io.Reader, lim codec.Limits) (codec.SessionHeader, scanResult, error) {
	t.Helper()
	s := codec.NewScanner(in, lim)
	h, err := s.Header()
	if err != nil {
		return h, scanResult{}, err
	}
	var res scanResult
	for i := 0; ; i++ {
		if i > 1e6 {
			t.Fatal("Scanner.Next does not end")
		}
		ev, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			res.err = err
			// Errors are sticky.
			if _, again := s.Next(); again != err {
				t.Errorf("Next after error = %v, want the same error %v", again, err)
			}
			break
		}
		res.seqs = append(res.seqs, ev.Seq)
	}
	res.torn = s.Torn()
	return h, res, nil
}

// TestScanner checks the crash-tail rule of docs/format.md#torn-tails.
func TestScanner(t *testing.T) {
	ts, te, um := codec.TypeTurnStart, codec.TypeTurnEnd, codec.TypeUserMessage
	torn := `{"type":"turn/start","seq":3,"ti`
	tests := []struct {
		name      string
		in        string
		lim       codec.Limits
		wantSeqs  int // events returned: seqs 0..wantSeqs-1
		wantErr   string
		errNames  string // substring the error must contain
		tornLine  int
		tornLines int
		tornBytes int64
	}{
		{name: "clean", in: file(hdr, evLine(0, ts), evLine(1, um), evLine(2, te)), wantSeqs: 3, wantErr: "ok"},
		{name: "header only", in: file(hdr), wantSeqs: 0, wantErr: "ok"},
		{name: "torn tail after last turn/end", in: file(hdr, evLine(0, ts), evLine(1, te), torn), wantSeqs: 2, wantErr: "ok",
			tornLine: 4, tornLines: 1, tornBytes: int64(len(torn) + 1)},
		{name: "torn tail of several lines", in: file(hdr, evLine(0, ts), evLine(1, te), evLine(2, ts), torn, evLine(4, um), "garbage"), wantSeqs: 3, wantErr: "ok",
			tornLine: 5, tornLines: 3, tornBytes: int64(len(torn) + 1 + len(evLine(4, um)) + 1 + len("garbage") + 1)},
		{name: "bad line before a later turn/end", in: file(hdr, evLine(0, ts), torn, evLine(2, te)), wantErr: "corrupt", errNames: "line 3", wantSeqs: 1},
		{name: "bad line long before a later turn/end", in: file(hdr, evLine(0, ts), "{", evLine(2, um), evLine(3, um), evLine(4, te), torn), wantErr: "corrupt", errNames: "line 3", wantSeqs: 1},
		{name: "seq gap before last turn/end", in: file(hdr, evLine(0, ts), evLine(2, um), evLine(3, te)), wantErr: "corrupt", errNames: "line 3", wantSeqs: 1},
		{name: "seq repeat before last turn/end", in: file(hdr, evLine(0, ts), evLine(0, um), evLine(2, te)), wantErr: "corrupt", errNames: "line 3", wantSeqs: 1},
		{name: "turn/end with wrong seq", in: file(hdr, evLine(0, ts), evLine(5, te)), wantErr: "corrupt", errNames: "line 3", wantSeqs: 1},
		{name: "first event not seq 0", in: file(hdr, evLine(1, ts), evLine(2, te)), wantErr: "corrupt", errNames: "line 2"},
		{name: "seq gap after last turn/end", in: file(hdr, evLine(0, ts), evLine(1, te), evLine(3, ts), evLine(4, um)), wantSeqs: 2, wantErr: "ok",
			tornLine: 4, tornLines: 2, tornBytes: int64(len(evLine(3, ts)) + len(evLine(4, um)) + 2)},
		{name: "last line without newline ignored", in: file(hdr, evLine(0, ts), evLine(1, te)) + evLine(2, ts), wantSeqs: 2, wantErr: "ok",
			tornLine: 4, tornLines: 1, tornBytes: int64(len(evLine(2, ts)))},
		{name: "unterminated turn/end is not L", in: file(hdr, evLine(0, ts), "{bad") + evLine(2, te), wantSeqs: 1, wantErr: "ok",
			tornLine: 3, tornLines: 2, tornBytes: int64(len("{bad") + 1 + len(evLine(2, te)))},
		{name: "no turn/end keeps everything before the damage", in: file(hdr, evLine(0, ts), evLine(1, um), torn, evLine(3, um)), wantSeqs: 2, wantErr: "ok",
			tornLine: 4, tornLines: 2, tornBytes: int64(len(torn) + len(evLine(3, um)) + 2)},
		{name: "invalid UTF-8 line before turn/end", in: file(hdr, evLine(0, ts), "{\"type\":\"x\",\"seq\":1,\"time\":0,\"data\":{\"s\":\"\xff\"}}", evLine(2, te)), wantErr: "corrupt", errNames: "line 3", wantSeqs: 1},
		{name: "invalid UTF-8 line after turn/end", in: file(hdr, evLine(0, ts), evLine(1, te), "{\"type\":\"x\",\"seq\":2,\"time\":0,\"data\":{\"s\":\"\xff\"}}"), wantSeqs: 2, wantErr: "ok",
			tornLine: 4, tornLines: 1, tornBytes: int64(len("{\"type\":\"x\",\"seq\":2,\"time\":0,\"data\":{\"s\":\"\xff\"}}") + 1)},
		{name: "NUL bytes before turn/end", in: file(hdr, evLine(0, ts), "\x00\x00\x00\x00", evLine(2, te)), wantErr: "corrupt", errNames: "line 3", wantSeqs: 1},
		{name: "NUL bytes after turn/end", in: file(hdr, evLine(0, ts), evLine(1, te), "\x00\x00\x00\x00"), wantSeqs: 2, wantErr: "ok", tornLine: 4, tornLines: 1, tornBytes: 5},
		{name: "NUL in a string", in: file(hdr, "{\"type\":\"x\",\"seq\":0,\"time\":0,\"data\":{\"s\":\"a\x00b\"}}", evLine(1, te)), wantErr: "corrupt", errNames: "line 2"},
		{name: "empty line before turn/end", in: file(hdr, evLine(0, ts), "", evLine(2, te)), wantErr: "corrupt", errNames: "line 3", wantSeqs: 1},
		{name: "duplicate keys", in: file(hdr, evLine(0, ts), `{"type":"x","seq":1,"seq":1,"time":0,"data":{}}`), wantErr: "invalid", errNames: "line 3", wantSeqs: 1},
		{name: "duplicate keys after turn/end", in: file(hdr, evLine(0, ts), evLine(1, te), `{"type":"x","seq":2,"time":0,"data":{"a":1,"a":1}}`), wantErr: "invalid", errNames: "line 4", wantSeqs: 2},
		{name: "envelope rule broken", in: file(hdr, evLine(0, ts), `{"type":"x","seq":1,"time":0,"data":{},"surfaceOp":"append"}`), wantErr: "invalid", errNames: "line 3", wantSeqs: 1},
		{name: "line over the limit", in: file(hdr, evLine(0, ts), `{"type":"x","seq":1,"time":0,"data":{"s":"`+strings.Repeat("a", 200)+`"}}`, evLine(2, te)),
			lim: codec.Limits{MaxLine: 128}, wantErr: "invalid", errNames: "line 3", wantSeqs: 1},
		{name: "line exactly at the limit", in: file(hdr, evLine(0, ts)), lim: codec.Limits{MaxLine: len(evLine(0, ts))}, wantSeqs: 1, wantErr: "ok"},
		{name: "depth over the limit", in: file(hdr, `{"type":"x","seq":0,"time":0,"data":{"a":[[1]]}}`), lim: codec.Limits{MaxDepth: 3}, wantErr: "invalid", errNames: "line 2"},
		{name: "turn/end inside the torn tail only counts when it parses", in: file(hdr, evLine(0, ts), torn, `{"type":"turn/end","seq":3`), wantSeqs: 1, wantErr: "ok",
			tornLine: 3, tornLines: 2, tornBytes: int64(len(torn) + len(`{"type":"turn/end","seq":3`) + 2)},
		{name: "turn/end text in a string is not a turn/end", in: file(hdr, evLine(0, ts), torn, `{"type":"x","seq":9,"note":"\"type\":\"turn/end\""}`), wantSeqs: 1, wantErr: "ok",
			tornLine: 3, tornLines: 2, tornBytes: int64(len(torn) + len(`{"type":"x","seq":9,"note":"\"type\":\"turn/end\""}`) + 2)},
		{name: "nested turn/end type is not a turn/end", in: file(hdr, evLine(0, ts), torn, `{"data":{"type":"turn/end"}}`), wantSeqs: 1, wantErr: "ok",
			tornLine: 3, tornLines: 2, tornBytes: int64(len(torn) + len(`{"data":{"type":"turn/end"}}`) + 2)},
		{name: "unparseable turn/end of a later turn still counts", in: file(hdr, evLine(0, ts), torn, `{"type":"turn/end","seq":99,"time":0,"data":{}}`), wantErr: "corrupt", errNames: "line 3", wantSeqs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, res, err := scanAll(t, strings.NewReader(tt.in), tt.lim)
			if err != nil {
				t.Fatalf("Header() = %v", err)
			}
			if got := class(res.err); got != tt.wantErr {
				t.Fatalf("Next error = %v (class %s), want %s", res.err, got, tt.wantErr)
			}
			if res.err != nil && !strings.Contains(res.err.Error(), tt.errNames) {
				t.Errorf("Next error %q does not name %q", res.err, tt.errNames)
			}
			if len(res.seqs) != tt.wantSeqs {
				t.Errorf("read seqs %v, want 0..%d", res.seqs, tt.wantSeqs-1)
			}
			for i, s := range res.seqs {
				if s != int64(i) {
					t.Errorf("event %d has seq %d", i, s)
				}
			}
			if res.err != nil {
				return
			}
			tr := res.torn
			if tr.FirstLine != tt.tornLine || tr.Lines != tt.tornLines || tr.Bytes != tt.tornBytes {
				t.Errorf("Torn() = {FirstLine %d Lines %d Bytes %d}, want {%d %d %d}", tr.FirstLine, tr.Lines, tr.Bytes, tt.tornLine, tt.tornLines, tt.tornBytes)
			}
			if (tr.FirstLine != 0) != (tr.Cause != nil) {
				t.Errorf("Torn().Cause = %v with FirstLine %d", tr.Cause, tr.FirstLine)
			}
		})
	}
}

// TestScannerHeader checks the refusals of line 1.
func TestScannerHeader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		lim  codec.Limits
		want string
	}{
		{name: "good", in: file(hdr), want: "ok"},
		{name: "empty file", in: "", want: "invalid"},
		{name: "header without newline", in: hdr, want: "invalid"},
		{name: "not JSON", in: file(`{"type":"session"`), want: "corrupt"},
		{name: "invalid UTF-8", in: file("{\"type\":\"session\",\"version\":0,\"id\":\"\xff\",\"createdAt\":0}"), want: "corrupt"},
		{name: "event as first line", in: file(evLine(0, codec.TypeTurnStart)), want: "invalid"},
		{name: "missing version", in: file(`{"type":"session","id":"s","createdAt":0}`), want: "unsupported"},
		{name: "version 1", in: file(`{"type":"session","version":1,"id":"s","createdAt":0}`), want: "unsupported"},
		{name: "over the line limit", in: file(hdr), lim: codec.Limits{MaxLine: 10}, want: "invalid"},
		{name: "duplicate key", in: file(`{"type":"session","type":"session","version":0,"id":"s","createdAt":0}`), want: "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := codec.NewScanner(strings.NewReader(tt.in), tt.lim).Header()
			if got := class(err); got != tt.want {
				t.Fatalf("Header() = %v (class %s), want %s", err, got, tt.want)
			}
			if err != nil && !strings.Contains(err.Error(), "line 1") {
				t.Errorf("Header() error %q does not name line 1", err)
			}
		})
	}
}

// TestScannerReadError checks that a read error is returned, not taken
// for the end of the file.
func TestScannerReadError(t *testing.T) {
	boom := io.ErrUnexpectedEOF
	r := io.MultiReader(strings.NewReader(file(hdr, evLine(0, codec.TypeTurnStart))), errReader{boom})
	s := codec.NewScanner(r, codec.Limits{})
	if _, err := s.Header(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); err == nil || err == io.EOF {
		t.Fatalf("Next after a read error = %v, want the read error", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// fillReader yields n copies of one byte without holding them in memory.
type fillReader struct {
	n int64
	b byte
}

func (f *fillReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), f.n)
	for i := range p[:k] {
		p[i] = f.b
	}
	f.n -= k
	return int(k), nil
}

// hugeLine returns a file whose line 2 is a syntactically valid event
// with a string of size bytes, followed by a turn/end.
func hugeLine(size int64) io.Reader {
	return io.MultiReader(
		strings.NewReader(hdr+"\n"+`{"type":"x","seq":0,"time":0,"data":{"s":"`),
		&fillReader{n: size, b: 'a'},
		strings.NewReader(`"}}`+"\n"+evLine(1, codec.TypeTurnEnd)+"\n"),
	)
}

// scanAlloc scans r and returns the scan result and the bytes allocated.
func scanAlloc(t *testing.T, r io.Reader, lim codec.Limits) (scanResult, uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, res, err := scanAll(t, r, lim)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("Header() = %v", err)
	}
	return res, after.TotalAlloc - before.TotalAlloc
}

// TestScannerHugeLine feeds a 100 MB line: it is refused as invalid, and
// memory is bounded by the line limit, not by the line.
func TestScannerHugeLine(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 100 MB")
	}
	const size = 100 << 20
	t.Run("1 MiB limit", func(t *testing.T) {
		// The scanner holds at most a few copies of the limit, whatever
		// the length of the line.
		res, alloc := scanAlloc(t, hugeLine(size), codec.Limits{MaxLine: 1 << 20})
		if class(res.err) != "invalid" || !strings.Contains(res.err.Error(), "line 2") {
			t.Fatalf("Next on a 100 MB line = %v, want invalid naming line 2", res.err)
		}
		t.Logf("refusing a %d MB line with a 1 MiB limit allocated %.1f MB", size>>20, float64(alloc)/(1<<20))
		if alloc > 16<<20 {
			t.Errorf("refusing a %d byte line allocated %d bytes, want at most %d", size, alloc, 16<<20)
		}
	})
	t.Run("default limit", func(t *testing.T) {
		// With the default 64 MiB limit, what is allocated depends on the
		// limit only: a 100 MB line costs what a 70 MB line costs.
		res, alloc := scanAlloc(t, hugeLine(size), codec.Limits{})
		if class(res.err) != "invalid" || !strings.Contains(res.err.Error(), "line 2") {
			t.Fatalf("Next on a 100 MB line = %v, want invalid naming line 2", res.err)
		}
		_, alloc70 := scanAlloc(t, hugeLine(70<<20), codec.Limits{})
		t.Logf("refusing a 100 MB line allocated %.1f MB, a 70 MB line %.1f MB (limit 64 MiB)",
			float64(alloc)/(1<<20), float64(alloc70)/(1<<20))
		if alloc > alloc70+(8<<20) {
			t.Errorf("refusing a 100 MB line allocated %d bytes, a 70 MB line %d: allocation grows with the line", alloc, alloc70)
		}
	})
}

// TestScannerExport checks that Scanner + AppendJSON reproduces a canonical
// file byte for byte.
func TestScannerExport(t *testing.T) {
	in := file(hdr, evLine(0, codec.TypeTurnStart), evLine(1, codec.TypeUserMessage), evLine(2, "hook/x"), evLine(3, codec.TypeTurnEnd))
	out := exportFile(t, []byte(in))
	if string(out) != in {
		t.Errorf("export(import(file)) =\n%s\nwant\n%s", out, in)
	}
}

// exportFile reads a whole session file with Scanner and writes it back.
func exportFile(t testing.TB, in []byte) []byte {
	t.Helper()
	s := codec.NewScanner(bytes.NewReader(in), codec.Limits{})
	h, err := s.Header()
	if err != nil {
		t.Fatalf("Header() = %v", err)
	}
	out, err := h.AppendJSON(nil)
	if err != nil {
		t.Fatalf("header AppendJSON = %v", err)
	}
	out = append(out, '\n')
	for {
		ev, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Next() = %v", err)
		}
		if out, err = ev.AppendJSON(out); err != nil {
			t.Fatalf("AppendJSON(seq %d) = %v", ev.Seq, err)
		}
		out = append(out, '\n')
	}
	if tr := s.Torn(); tr.FirstLine != 0 {
		t.Fatalf("Torn() = %+v, want nothing dropped", tr)
	}
	return out
}
