package rebuild

import (
	"bytes"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

// TestFoldMessage: a fold that derives messages hands out each surface
// node's message, the bytes Project gives, so that a caller can share
// them instead of projecting a long answer again; one that does not
// derive has none; a seq off the surface is not found.
func TestFoldMessage(t *testing.T) {
	lines := []string{
		`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`,
		`{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
		`{"type":"context/message","seq":2,"time":3,"data":{"content":[{"type":"text","text":"ctx"}],"source":{"kind":"host"},"envelope":"raw"},"surfaceOp":"append"}`,
	}
	derived, plain := NewFold(true), NewFold(false)
	var evs []codec.Event
	for _, l := range lines {
		ev, err := codec.ParseEvent([]byte(l), codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if err := derived.Add(&ev); err != nil {
			t.Fatal(err)
		}
		if err := plain.Add(&ev); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	for _, seq := range []int64{1, 2} {
		msg, ok := derived.Message(seq)
		if want := Project(&evs[seq]); !ok || want == nil || !bytes.Equal(msg, want) {
			t.Errorf("seq %d: message %q, %v; want %q", seq, msg, ok, want)
		}
		if msg, ok := plain.Message(seq); !ok || msg != nil {
			t.Errorf("seq %d without derived messages: %q, %v", seq, msg, ok)
		}
	}
	if msg, ok := derived.Message(0); ok || msg != nil {
		t.Errorf("turn/start, off the surface: %q, %v", msg, ok)
	}
}
