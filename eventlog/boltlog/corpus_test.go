package boltlog_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/corpus"
)

// TestCorpusRoundTrip imports every DSH session log of the corpus that DSH
// itself accepts and whose header has a version, then reads it back:
// header and events, written as JSON, are the input's bytes exactly (up to
// the torn tail, for the logs that have one: docs/format.md#torn-tails), and the head
// record matches a recomputation.
func TestCorpusRoundTrip(t *testing.T) {
	dirs := corpus.Cases(t)
	ctx := context.Background()
	imported, torn := 0, 0
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "error.expected.txt")); err == nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, "session.jsonl"))
		if err != nil {
			continue // not a case directory
		}
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			sc := codec.NewScanner(bytes.NewReader(data), codec.Limits{})
			h, err := sc.Header()
			if errors.Is(err, codec.ErrUnsupported) {
				t.Skipf("header without a version: %v", err)
			}
			if err != nil {
				t.Fatalf("Header = %v", err)
			}
			// Several cases share a session id: one store per case.
			l, _ := openLog(t, &eventlog.Options{NoSync: true, ImportBatch: 16})
			n, err := l.Import(ctx, h, sc)
			if err != nil {
				t.Fatalf("Import = %v", err)
			}
			imported++
			want := data
			if tr := sc.Torn(); tr.FirstLine != 0 {
				torn++
				want = firstLines(data, tr.FirstLine-1)
			}
			got, err := export(l, h.ID)
			if err != nil {
				t.Fatalf("export = %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("export of %d events differs from the input (%d bytes, want %d)", n, len(got), len(want))
			}
			if err := verifySession(l, h.ID); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Logf("imported %d logs (%d with a torn tail)", imported, torn)
	if imported == 0 {
		t.Fatalf("no corpus log was imported")
	}
}

// export writes a stored session as JSONL: its header line, then one line
// per event.
func export(l *boltlog.Log, id string) ([]byte, error) {
	ctx := context.Background()
	head, err := l.Head(ctx, id)
	if err != nil {
		return nil, err
	}
	out, err := head.Header.AppendJSON(nil)
	if err != nil {
		return nil, err
	}
	out = append(out, '\n')
	it, err := l.Scan(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for {
		ev, err := it.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var n int
		if out, n, err = codec.ToJSON(out, ev.Raw); err != nil {
			return nil, err
		} else if n != len(ev.Raw) {
			return nil, errors.Newf("seq %d: trailing bytes", ev.Seq)
		}
		out = append(out, '\n')
	}
}

// firstLines returns the first n lines of data, newlines included.
func firstLines(data []byte, n int) []byte {
	off := 0
	for i := 0; i < n; i++ {
		j := bytes.IndexByte(data[off:], '\n')
		if j < 0 {
			return data
		}
		off += j + 1
	}
	return data[:off]
}
