package header

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
)

// TestScripts runs the datadriven scripts under testdata/. Commands:
//
//	define name=A          input: a header as JSON; prints its canonical JSON
//	delta name=D           input: a delta as JSON; prints its canonical JSON
//	apply snapshot=A delta=D [name=C]
//	                       prints Apply's result (and keeps it as C)
//	diff from=A to=B       prints the delta, then ok or fallback
//	equal a=A b=B          prints Equal both ways
//	request-parts name=A   prints AppendToolsJSON and AppendPrefixJSON
//	fold                   input: JSON event lines; prints the header in
//	                       force after each line, or the error
//
// Errors print as "err (class): message". Regenerate with -rewrite.
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		snaps := map[string]Snapshot{}
		deltas := map[string]Delta{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "define":
				var name string
				d.ScanArgs(t, "name", &name)
				s, err := decodeJSON(t, d.Input)
				if err != nil {
					return errLine(err)
				}
				checkSnapshotRoundTrip(t, s)
				snaps[name] = s
				return snapshotJSON(t, s)
			case "delta":
				var name string
				d.ScanArgs(t, "name", &name)
				dl, err := decodeDeltaJSON(t, d.Input)
				if err != nil {
					return errLine(err)
				}
				checkDeltaRoundTrip(t, dl)
				deltas[name] = dl
				return deltaJSON(t, dl)
			case "apply":
				var sn, dn string
				d.ScanArgs(t, "snapshot", &sn)
				d.ScanArgs(t, "delta", &dn)
				s, dl := lookup(t, snaps, sn), lookup(t, deltas, dn)
				before := s.Encode()
				out := Apply(s, dl)
				if !bytes.Equal(before, s.Encode()) {
					t.Fatalf("%s: Apply modified its input snapshot", d.Pos)
				}
				checkSnapshotRoundTrip(t, out)
				if d.HasArg("name") {
					var name string
					d.ScanArgs(t, "name", &name)
					snaps[name] = out
				}
				return snapshotJSON(t, out)
			case "diff":
				var from, to string
				d.ScanArgs(t, "from", &from)
				d.ScanArgs(t, "to", &to)
				prev, next := lookup(t, snaps, from), lookup(t, snaps, to)
				dl, ok := Diff(prev, next)
				checkDeltaRoundTrip(t, dl)
				got := Apply(prev, dl)
				if ok != got.Equal(next) {
					t.Fatalf("%s: Diff ok=%v but Apply(prev, d).Equal(next)=%v", d.Pos, ok, !ok)
				}
				verdict := "ok"
				if !ok {
					verdict = "fallback"
				}
				return deltaJSON(t, dl) + "\n" + verdict
			case "equal":
				var a, b string
				d.ScanArgs(t, "a", &a)
				d.ScanArgs(t, "b", &b)
				sa, sb := lookup(t, snaps, a), lookup(t, snaps, b)
				ab, ba := sa.Equal(sb), sb.Equal(sa)
				if ab != ba {
					t.Fatalf("%s: Equal is not symmetric: %v, %v", d.Pos, ab, ba)
				}
				return fmt.Sprint(ab)
			case "request-parts":
				var name string
				d.ScanArgs(t, "name", &name)
				s := lookup(t, snaps, name)
				return fmt.Sprintf("tools: %s\nprefix: %s", s.AppendToolsJSON(nil), s.AppendPrefixJSON(nil))
			case "fold":
				return runFold(t, d.Input)
			default:
				t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
				return ""
			}
		})
	})
}

func lookup[T any](t *testing.T, m map[string]T, name string) T {
	t.Helper()
	v, ok := m[name]
	if !ok {
		t.Fatalf("no value named %q", name)
	}
	return v
}

func runFold(t *testing.T, input string) string {
	t.Helper()
	var f Fold
	var out strings.Builder
	for i, line := range strings.Split(input, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		ev, err := codec.ParseEvent([]byte(line), codec.Limits{})
		if err != nil {
			fmt.Fprintf(&out, "line %d: %s\n", i+1, errLine(err))
			continue
		}
		before := f.Clone()
		if err := f.Add(&ev); err != nil {
			fmt.Fprintf(&out, "seq %d: %s\n", ev.Seq, errLine(err))
			if a, b := headerOf(t, before), headerOf(t, f); a != b {
				t.Fatalf("a failed Add changed the fold: %s -> %s", a, b)
			}
			continue
		}
		fmt.Fprintf(&out, "seq %d: %s\n", ev.Seq, headerOf(t, f))
	}
	return out.String()
}

func headerOf(t *testing.T, f Fold) string {
	s, ok := f.Current()
	if !ok {
		return "none"
	}
	return snapshotJSON(t, s)
}

func decodeJSON(t *testing.T, text string) (Snapshot, error) {
	t.Helper()
	mp, err := codec.FromJSON(nil, []byte(text), codec.Limits{})
	if err != nil {
		t.Fatalf("bad JSON in script: %v", err)
	}
	return Decode(mp)
}

func decodeDeltaJSON(t *testing.T, text string) (Delta, error) {
	t.Helper()
	mp, err := codec.FromJSON(nil, []byte(text), codec.Limits{})
	if err != nil {
		t.Fatalf("bad JSON in script: %v", err)
	}
	return DecodeDelta(mp)
}

func snapshotJSON(t *testing.T, s Snapshot) string {
	t.Helper()
	out, _, err := codec.ToJSON(nil, s.Encode())
	if err != nil {
		t.Fatalf("ToJSON(Encode()) = %v", err)
	}
	return string(out)
}

func deltaJSON(t *testing.T, d Delta) string {
	t.Helper()
	out, _, err := codec.ToJSON(nil, d.Encode())
	if err != nil {
		t.Fatalf("ToJSON(Delta.Encode()) = %v", err)
	}
	return string(out)
}

// errLine prints an error with its class, so scripts pin both.
func errLine(err error) string {
	class := "unclassified"
	switch {
	case errors.Is(err, ErrInvalid):
		class = "invalid"
	case errors.Is(err, ErrCorrupt):
		class = "corrupt"
	case errors.Is(err, codec.ErrSyntax):
		class = "syntax"
	}
	return fmt.Sprintf("err (%s): %v", class, err)
}

// checkSnapshotRoundTrip checks Decode(Encode(s)) == s, and that Encode is
// deterministic and canonical.
func checkSnapshotRoundTrip(t *testing.T, s Snapshot) {
	t.Helper()
	enc := s.Encode()
	if !bytes.Equal(enc, s.Encode()) {
		t.Fatalf("Encode is not deterministic")
	}
	back, err := Decode(enc)
	if err != nil {
		t.Fatalf("Decode(Encode(s)) = %v", err)
	}
	if !back.Equal(s) {
		t.Fatalf("Decode(Encode(s)) = %s, want %s", snapshotJSON(t, back), snapshotJSON(t, s))
	}
	if again := back.Encode(); !bytes.Equal(again, enc) {
		t.Fatalf("Encode(Decode(Encode(s))) = %x, want %x", again, enc)
	}
}

// checkDeltaRoundTrip checks that DecodeDelta(d.Encode()) re-encodes to the
// same bytes.
func checkDeltaRoundTrip(t *testing.T, d Delta) {
	t.Helper()
	enc := d.Encode()
	back, err := DecodeDelta(enc)
	if err != nil {
		t.Fatalf("DecodeDelta(Encode(d)) = %v", err)
	}
	if again := back.Encode(); !bytes.Equal(again, enc) {
		t.Fatalf("Encode(DecodeDelta(Encode(d))) = %x, want %x", again, enc)
	}
}

// TestDeepParametersAgree: codec and header read stored values with one
// field reader, so a header whose tool parameters nest deeply is accepted
// by header.Decode exactly when codec.FromJSON accepted its text (the
// ~600-deep header of issue 11 used to pass codec and fail header).
func TestDeepParametersAgree(t *testing.T) {
	for _, depth := range []int{10, 511, 600, 1000, 1019, 1022, 1030} {
		t.Run(strconv.Itoa(depth), func(t *testing.T) {
			params := strings.Repeat(`{"a":`, depth) + `1` + strings.Repeat(`}`, depth)
			js := `{"tools":[{"name":"t","description":"d","parameters":` + params + `}],"config":{"model":"m"}}`
			mp, err := codec.FromJSON(nil, []byte(js), codec.Limits{MaxDepth: codec.MaxStoredDepth})
			_, derr := Decode(mp)
			if (err == nil) != (derr == nil) {
				t.Fatalf("depth %d: codec.FromJSON = %v but header.Decode = %v", depth, err, derr)
			}
			if depth == 600 && err != nil {
				t.Fatalf("depth 600 refused: %v", err)
			}
		})
	}
}
