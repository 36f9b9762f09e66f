package header

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/corpus"
)

// TestCorpus folds the header events of every DSH case, and checks that
// each expected request's system prompt, tools and model appear in one of
// the headers the fold produced. The exact per-step check is rebuild's.
func TestCorpus(t *testing.T) {
	dirs := corpus.Cases(t)
	var cases, headers, deltas, requests, refusals int
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, "session.jsonl"))
		if err != nil {
			continue // INDEX.tsv and the like
		}
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			lines := completeLines(data)
			if len(lines) == 0 {
				t.Skip("no complete header line")
			}
			if _, err := codec.ParseSessionHeader(lines[0], codec.Limits{}); err != nil {
				t.Skipf("header line refused: %v", err)
			}
			// expectErr: DSH refused the log for a delta before any
			// snapshot, which the fold must refuse too. refused: DSH refused
			// it for another reason; the fold may refuse it as well (the
			// R-era python-sdk fixtures carry tools as bare strings, which
			// docs/rules.md#epochheader does not allow), but only as invalid.
			expectErr, refused := false, false
			if msg, err := os.ReadFile(filepath.Join(dir, "error.expected.txt")); err == nil {
				m := string(msg)
				expectErr = strings.Contains(m, "before any request/header") ||
					strings.Contains(m, "header-delta") && strings.Contains(m, "snapshot")
				refused = !expectErr
			}
			cases++
			var f Fold
			var seen []Snapshot
			for i, line := range lines[1:] {
				ev, err := codec.ParseEvent(line, codec.Limits{})
				if err != nil {
					continue // a damaged or torn line: the importer's business
				}
				switch ev.Type {
				case codec.TypeRequestHeader:
					headers++
				case codec.TypeHeaderDelta:
					deltas++
				default:
					continue
				}
				if err := f.Add(&ev); err != nil {
					switch {
					case expectErr && errors.Is(err, ErrInvalid):
						return
					case refused && errors.Is(err, ErrInvalid):
						refusals++
						t.Logf("line %d: refused, as DSH refused the log: %v", i+2, err)
						return
					}
					t.Fatalf("line %d: Add = %v", i+2, err)
				}
				s, _ := f.Current()
				checkSnapshotRoundTrip(t, s)
				seen = append(seen, s)
			}
			if expectErr {
				t.Fatalf("DSH refused this log for a header delta, but the fold accepted it")
			}
			want, err := os.ReadFile(filepath.Join(dir, "requests.expected.jsonl"))
			if err != nil {
				return
			}
			for i, line := range completeLines(want) {
				req, ok := expectedRequest(t, line)
				if !ok {
					continue
				}
				requests++
				if !anyMatches(seen, req) {
					t.Errorf("requests.expected.jsonl line %d: no folded header has its system, tools and model", i+1)
				}
			}
		})
	}
	t.Logf("%d cases: %d snapshots, %d deltas folded; %d requests matched; %d logs DSH refused also refused",
		cases, headers, deltas, requests, refusals)
	if cases == 0 || headers == 0 || deltas == 0 || requests == 0 {
		t.Fatalf("the corpus check covered nothing")
	}
}

// completeLines returns the lines that end in "\n" (docs/format.md#torn-tails).
func completeLines(data []byte) [][]byte {
	var out [][]byte
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return out
		}
		out = append(out, data[:i])
		data = data[i+1:]
	}
}

// wantRequest is what the cross-check compares: the request's model,
// system (hasSystem tells absent from empty) and tools JSON (nil when
// absent).
type wantRequest struct {
	model     string
	system    string
	hasSystem bool
	tools     []byte
}

// expectedRequest reads the request of one requests.expected.jsonl line;
// ok is false for "request":null.
func expectedRequest(t *testing.T, line []byte) (wantRequest, bool) {
	t.Helper()
	mp, err := codec.FromJSON(nil, line, codec.Limits{})
	if err != nil {
		t.Fatalf("expected request line: %v", err)
	}
	var w wantRequest
	found := false
	f := codec.NewFields(mp, codec.PrefixHeader)
	err = f.Object("line", func(key []byte) error {
		if string(key) != "request" {
			return f.Skip()
		}
		raw, err := f.Raw("line.request")
		if errors.Is(err, codec.ErrInvalid) {
			return nil // null: no request expected
		}
		if err != nil {
			return err
		}
		found = true
		g := codec.NewFields(raw, codec.PrefixHeader)
		return g.Object("request", func(k []byte) error {
			key := string(k)
			var err error
			switch key {
			case "model":
				w.model, err = g.Str(key)
			case "system":
				w.hasSystem = true
				w.system, err = g.Str(key)
			case "tools":
				var v []byte
				if v, err = g.Raw(key); err == nil {
					w.tools, _, err = codec.ToJSON(nil, v)
				}
			default:
				err = g.Skip()
			}
			return err
		})
	})
	if err != nil {
		t.Fatalf("expected request line: %v", err)
	}
	return w, found
}

func anyMatches(seen []Snapshot, w wantRequest) bool {
	for _, s := range seen {
		if s.Config.Model != w.model || (s.System != "") != w.hasSystem || s.System != w.system {
			continue
		}
		if (len(s.Tools) > 0) != (w.tools != nil) {
			continue
		}
		if w.tools != nil && !bytes.Equal(s.AppendToolsJSON(nil), w.tools) {
			continue
		}
		return true
	}
	return false
}
