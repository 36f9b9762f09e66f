package rebuild_test

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/rebuild"
)

func build(t testing.TB, h codec.SessionHeader, evs []codec.Event, opts rebuild.BuilderOptions) []rebuild.Step {
	t.Helper()
	var out []rebuild.Step
	b := rebuild.NewBuilder(h, opts, func(s rebuild.Step) error {
		out = append(out, s)
		return nil
	})
	for i := range evs {
		if err := b.Add(&evs[i]); err != nil {
			t.Fatalf("Add(seq %d) = %v", i, err)
		}
	}
	if err := b.End(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBuilderMatchesFromScratch is the property the Builder lives by: on
// every step of generated logs, its request and digest equal the
// from-scratch fold's, with and without full requests.
func TestBuilderMatchesFromScratch(t *testing.T) {
	for seed := int64(0); seed < 60; seed++ {
		h, evs := genLog(rand.New(rand.NewSource(seed)), 150+int(seed)*5)
		want, err := rebuild.Steps(h, evs)
		if err != nil {
			t.Fatalf("seed %d: Steps: %v", seed, err)
		}
		full := build(t, h, evs, rebuild.BuilderOptions{Requests: true})
		lean := build(t, h, evs, rebuild.BuilderOptions{})
		odd := build(t, h, evs, rebuild.BuilderOptions{Requests: true, Keep: func(start int64) bool { return start%2 == 1 }})
		if len(full) != len(want) || len(lean) != len(want) || len(odd) != len(want) {
			t.Fatalf("seed %d: %d/%d/%d steps, want %d", seed, len(full), len(lean), len(odd), len(want))
		}
		for i := range want {
			w, f, l := want[i], full[i], lean[i]
			if f.Start != w.Start || f.Null != w.Null || !bytes.Equal(f.Request, w.Request) {
				t.Fatalf("seed %d step %d (seq %d): builder request differs\n got %s\nwant %s", seed, i, w.Start, f.Request, w.Request)
			}
			if f.Digest != w.Digest || l.Digest != w.Digest || l.Null != w.Null {
				t.Fatalf("seed %d step %d (seq %d): digest differs", seed, i, w.Start)
			}
			if f.Request != nil && !bytes.Equal(rebuild.AppendRequest(nil, &f.Header, f.History, h.ID), f.Request) {
				t.Fatalf("seed %d step %d (seq %d): History does not rebuild the request", seed, i, w.Start)
			}
			if l.Request != nil {
				t.Fatalf("seed %d step %d: digest-only builder kept the request", seed, i)
			}
			// Keep narrows the full requests to the steps it names.
			if o := odd[i]; o.Digest != w.Digest || (w.Start%2 == 1) != (o.Request != nil) && !w.Null ||
				o.Request != nil && !bytes.Equal(o.Request, w.Request) {
				t.Fatalf("seed %d step %d (seq %d): Keep builder differs", seed, i, w.Start)
			}
		}
	}
}
