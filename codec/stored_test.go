package codec

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/benchevents"
)

// errClass names the class of err for comparisons.
func errClass(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrCorrupt):
		return "corrupt"
	case errors.Is(err, ErrInvalid):
		return "invalid"
	case errors.Is(err, ErrUnsupported):
		return "unsupported"
	}
	return "unclassified"
}

// twoStep is what DecodeStoredEvent must equal: the reference validator
// (ValidateValue before the one-pass decoder), then DecodeEvent.
func twoStep(p []byte) (Event, error) {
	if err := refValidateValue(p); err != nil {
		return Event{}, err
	}
	return DecodeEvent(p)
}

// checkStored compares, on one payload, ValidateValue with the reference
// validator and DecodeStoredEvent with the two steps: the same verdict,
// error class and text, and the same Event; and that the one-pass path
// alone accepts exactly what the two steps accept.
func checkStored(t *testing.T, p []byte) {
	t.Helper()
	if got, want := ValidateValue(p), refValidateValue(p); errClass(got) != errClass(want) || errText(got) != errText(want) {
		t.Fatalf("ValidateValue(%x) = %v (%s), reference %v (%s)", p, got, errClass(got), want, errClass(want))
	}
	want, wantErr := twoStep(p)
	got, gotErr := DecodeStoredEvent(p)
	if errClass(gotErr) != errClass(wantErr) || errText(gotErr) != errText(wantErr) {
		t.Fatalf("DecodeStoredEvent(%x) = %v (%s), two steps %v (%s)", p, gotErr, errClass(gotErr), wantErr, errClass(wantErr))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeStoredEvent(%x) = %+v, two steps %+v", p, got, want)
	}
	e := Event{Raw: p, Seq: -1}
	if fast := e.decode(true); (fast == nil) != (wantErr == nil) {
		t.Fatalf("one pass over %x = %v, two steps %v", p, fast, wantErr)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// storedSeeds are event lines whose payloads seed the differential tests:
// every kind of value the one-pass decoder reads in place or skips.
var storedSeeds = []string{
	benchevents.Message,
	benchevents.Chunk,
	`{"type":"turn/start","seq":0,"time":1783352209707,"data":{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}}`,
	`{"type":"turn/end","seq":9,"time":5,"data":{"turn":1,"reason":{"kind":"completed","x":[1,2.5,"é"]}}}`,
	`{"type":"step/start","seq":2,"time":1,"data":{"turn":1,"step":0}}`,
	`{"type":"step/end","seq":3,"time":1,"data":{"turn":1,"step":0,"finish":"stop"}}`,
	`{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","text":"héllo \ud83d\ude00 \ud800"}],"source":{"kind":"user"}},"surfaceOp":"append","sourceEventSeqs":[0]}`,
	`{"type":"prompt/blocked","seq":1,"time":2,"data":{"content":[{"type":"image","url":"x"}],"source":{"kind":"plugin","plugin":"p"}}}`,
	`{"type":"context/message","seq":4,"time":2,"data":{"content":[{"type":"text","text":"c"}],"source":{"kind":"user"},"envelope":"raw"},"surfaceOp":"append","sourceEventSeqs":[1,3]}`,
	`{"type":"steering/message","seq":5,"time":2,"data":{"turn":1,"content":[],"source":{"kind":"user"}},"surfaceOp":{"op":"replace","start":0,"end":2},"sourceEventSeqs":[4,2]}`,
	`{"type":"assistant/message","seq":6,"time":2,"data":{"turn":1,"step":0,"content":[{"type":"reasoning","text":"r"},{"type":"tool-call","id":"c1","name":"read","arguments":"{}"}],"provenance":{"provider":"p","model":"m"},"usage":{"inputTokens":1}},"surfaceOp":"append"}`,
	`{"type":"tool/call","seq":7,"time":2,"data":{"turn":1,"step":0,"callId":"c1","name":"read","arguments":"{\"a\":1}"}}`,
	`{"type":"tool/result","seq":8,"time":2,"data":{"turn":1,"step":0,"callId":"c1","content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"x"}],"isError":false},{"type":"x","text":1}],"isError":true,"error":{"m":"x"},"meta":{}},"surfaceOp":"append","sourceEventSeqs":[7]}`,
	`{"type":"request/header","seq":9,"time":2,"data":{"header":{"system":"s","tools":[{"name":"a"}]},"reason":"initial"}}`,
	`{"type":"request/header-delta","seq":10,"time":2,"data":{"a":1,"b":{"c":[null,true,false]}}}`,
	`{"type":"request/digest","seq":11,"time":2,"data":{"turn":1,"step":0,"sha256":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}}`,
	`{"type":"compact/start","seq":12,"time":2,"data":{"turn":1}}`,
	`{"type":"compact/summary","seq":13,"time":2,"data":{"summary":[{"type":"text","text":"s"}]}}`,
	`{"type":"compact/end","seq":14,"time":2,"data":{"turn":1,"error":"e"}}`,
	`{"type":"hook/invoked","seq":2,"time":1.5,"data":{"2":"two","10":"ten","z":-1,"a":{"y":[],"b":{}},"n":{"d":{"e":[[[{}]]]}},"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6}}`,
	`{"data":{"turn":3},"seq":1,"time":0,"type":"turn/start"}`,
	`{"type":"assistant/chunk","seq":1,"time":0,"data":{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","id":{"x":["a"]},"text":"` + strings.Repeat("long text ", 20) + `"}}}`,
}

// TestDecodeStoredEventSeeds runs the differential check on the seeds and
// on payloads the one-pass path must refuse where the two steps do.
func TestDecodeStoredEventSeeds(t *testing.T) {
	for _, line := range storedSeeds {
		p, err := FromJSON(nil, []byte(line), Limits{})
		if err != nil {
			t.Fatalf("FromJSON(%s) = %v", line, err)
		}
		checkStored(t, p)
		if _, err := DecodeStoredEvent(p); err != nil {
			t.Errorf("DecodeStoredEvent(%s) = %v, want success", line, err)
		}
	}
	chunk := string(mustFromJSON(t, benchevents.Chunk))
	i := strings.Index(chunk, "\xa4time\xcf") + 5
	inf := chunk[:i] + "\xcb\x7f\xf0\x00\x00\x00\x00\x00\x00" + chunk[i+9:]
	tests := []struct {
		name, payload, class string
	}{
		// A fixstr key spelled again as str8 is the same key.
		{"duplicate key", strings.Replace(chunk, "\xa4time", "\xd9\x04type", 1), "corrupt"},
		{"duplicate data key", strings.Replace(chunk, "\xa4step", "\xa4turn", 1), "corrupt"},
		{"bad UTF-8 text", strings.Replace(chunk, " the", " t\xffe", 1), "corrupt"},
		{"bad UTF-8 in a skipped string", strings.Replace(chunk, "\xa5index", "\xa5ind\xc0x", 1), "corrupt"},
		{"surrogate pair in WTF-8", strings.Replace(chunk, " the", "\xed\xa0\xbd\xed\xb8", 1)[:len(chunk)+1], "corrupt"},
		{"lone surrogate", strings.Replace(chunk, " the", "\xed\xa0\xbd ", 1), "ok"},
		{"trailing byte", chunk + "\xc0", "corrupt"},
		{"non-finite float", inf, "corrupt"},
		{"binary", strings.Replace(chunk, "\xa5index\x00", "\xa5index\xc4", 1), "corrupt"},
		{"envelope key", strings.Replace(chunk, "\xa4time", "\xa4tim_", 1), "invalid"},
		{"invalid then corrupt", strings.Replace(strings.Replace(chunk, "\xa4time", "\xa4tim_", 1), " the", " t\xffe", 1), "corrupt"},
	}
	for _, tt := range tests {
		p := []byte(tt.payload)
		checkStored(t, p)
		if _, err := DecodeStoredEvent(p); errClass(err) != tt.class {
			t.Errorf("%s: DecodeStoredEvent = %v, want %s", tt.name, err, tt.class)
		}
	}
	deep := func(n int) []byte {
		p := append([]byte(nil), "\x84\xa4type\xa9turn/start\xa3seq\x00\xa4time\x00\xa4data\x82\xa4turn\x01\xa1x"...)
		for range n {
			p = append(p, 0x91)
		}
		return append(p, 0xc0)
	}
	for _, n := range []int{maxStoredDepth - 3, maxStoredDepth - 2, maxStoredDepth - 1, maxStoredDepth} {
		checkStored(t, deep(n))
	}
}

func mustFromJSON(t testing.TB, line string) []byte {
	t.Helper()
	p, err := FromJSON(nil, []byte(line), Limits{})
	if err != nil {
		t.Fatalf("FromJSON(%s) = %v", line, err)
	}
	return p
}

// FuzzDecodeStoredEvent checks that DecodeStoredEvent and ValidateValue
// agree with the two-step reference on any payload (checkStored). Seeds
// are the payloads of storedSeeds and testdata/fuzz/FuzzDecodeStoredEvent.
func FuzzDecodeStoredEvent(f *testing.F) {
	for _, line := range storedSeeds {
		f.Add(mustFromJSON(f, line))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		checkStored(t, p)
	})
}

// TestValidateMapKeys checks duplicate keys in maps of every size class of
// smallKeys: compared pairwise (up to 8 pairs), in the keySet it spills
// into on the ninth key (its array, then its map past 32), with the
// duplicate before and after the spill, in ValidateValue and in the
// one-pass path.
func TestValidateMapKeys(t *testing.T) {
	object := func(n, dupOf, dupAt int) []byte {
		p := AppendMapHeader(nil, n)
		for i := range n {
			k := i
			if i == dupAt {
				k = dupOf
			}
			p = AppendString(p, fmt.Sprintf("k%02d", k))
			p = AppendInt(p, int64(i))
		}
		return p
	}
	for _, n := range []int{1, 2, 8, 9, 10, 32, 33, 40} {
		if err := ValidateValue(object(n, -1, -1)); err != nil {
			t.Errorf("%d distinct keys: ValidateValue = %v", n, err)
		}
		for _, at := range []int{1, n / 2, n - 1} {
			if at < 1 || at >= n {
				continue
			}
			for _, of := range []int{0, at - 1} {
				p := object(n, of, at)
				if err := ValidateValue(p); !errors.Is(err, ErrCorrupt) {
					t.Errorf("%d keys, key %d repeats key %d: ValidateValue = %v, want ErrCorrupt", n, at, of, err)
				}
				ev := AppendMapHeader(nil, 4)
				ev = AppendString(AppendString(ev, "type"), "x/note")
				ev = AppendInt(AppendString(ev, "seq"), 0)
				ev = AppendInt(AppendString(ev, "time"), 0)
				ev = append(AppendString(ev, "data"), p...)
				if _, err := DecodeStoredEvent(ev); !errors.Is(err, ErrCorrupt) {
					t.Errorf("%d keys, key %d repeats key %d, as an event's data: DecodeStoredEvent = %v, want ErrCorrupt", n, at, of, err)
				}
			}
		}
	}
}
