package boltlog_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
)

// TestCompressedExport stores events that codec compresses (record
// version 2), from a few bytes to 4 MB of repeated text, by Append and by
// Import, and checks that export gives the input's bytes exactly, that the
// head's StoredBytes is the sum of the compressed records the log holds,
// and that the store's file really holds them compressed.
func TestCompressedExport(t *testing.T) {
	ctx := context.Background()
	text := func(n int) string {
		return strings.Repeat("The build failed: \\\"go vet\\\" found <3> issues & a \u2028 — ", n)
	}
	var lines []string
	for seq, n := range []int{0, 1, 3, 30, 300, 3000, 60000} {
		lines = append(lines, fmt.Sprintf(`{"type":"tool/result","seq":%d,"time":%d,"data":{"turn":1,"step":1,"callId":"c1","content":[{"type":"text","text":"%s"}],"isError":false},"surfaceOp":"append"}`,
			seq, 1767225600000+seq, text(n)))
	}
	l, path := openLog(t, &eventlog.Options{NoSync: true, Unvalidated: true})
	for _, how := range []string{"append", "import"} {
		t.Run(how, func(t *testing.T) {
			h := header(how)
			var evs []codec.Event
			want := append(h.Raw[:0:0], mustJSON(t, h)...)
			raw := int64(0)
			for _, line := range lines {
				ev := parse(t, line)
				evs = append(evs, ev)
				want = append(append(want, line...), '\n')
				raw += int64(len(ev.Raw) + 5)
			}
			if how == "append" {
				if err := l.Create(ctx, h); err != nil {
					t.Fatal(err)
				}
				for _, ev := range evs {
					if err := l.Append(ctx, h.ID, []codec.Event{ev}); err != nil {
						t.Fatal(err)
					}
				}
			} else if _, err := l.Import(ctx, h, &sliceSource{evs: evs}); err != nil {
				t.Fatal(err)
			}
			got, err := export(l, h.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("export of %d bytes differs from the %d bytes of input", len(got), len(want))
			}
			head, err := l.Head(ctx, h.ID)
			if err != nil {
				t.Fatal(err)
			}
			// The tree holds packs (record version 3), compressed: the
			// file, every page it has, is a fraction of the text.
			if err := l.Checkpoint(); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size()*4 > raw || head.StoredBytes*10 > raw {
				t.Fatalf("a file of %d bytes and %d stored record bytes for %d uncompressed: compression did not happen",
					fi.Size(), head.StoredBytes, raw)
			}
			if err := verifySession(l, h.ID); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func mustJSON(t *testing.T, h codec.SessionHeader) []byte {
	t.Helper()
	b, err := h.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}
