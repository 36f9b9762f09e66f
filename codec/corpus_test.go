package codec_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

// storeAndExport sends one event through the storage path — FromJSON,
// EncodeRecord, DecodeRecord, DecodeEvent — and returns its export.
func storeAndExport(t testing.TB, line []byte) (codec.Event, []byte) {
	t.Helper()
	raw, err := codec.FromJSON(nil, line, codec.Limits{})
	if err != nil {
		t.Fatalf("FromJSON = %v", err)
	}
	payload, err := codec.DecodeRecord(codec.EncodeRecord(nil, raw))
	if err != nil {
		t.Fatalf("DecodeRecord(EncodeRecord) = %v", err)
	}
	ev, err := codec.DecodeEvent(payload)
	if err != nil {
		t.Fatalf("DecodeEvent(stored) = %v", err)
	}
	out, err := ev.AppendJSON(nil)
	if err != nil {
		t.Fatalf("AppendJSON(stored) = %v", err)
	}
	return ev, out
}

// TestFixtures imports and exports every fixture under testdata/fixtures
// (all event types, both header-reason families, opaque values, unknown
// keys and types, missing optional keys, non-ASCII, <>&, U+2028, lone
// surrogates, large and fractional numbers): the bytes must be identical,
// both through Scanner and through the stored-record path.
func TestFixtures(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "fixtures", "*.jsonl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	seen := map[string]bool{}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			in := readFile(t, path)
			if out := exportFile(t, in); !bytes.Equal(out, in) {
				t.Fatalf("export(import(%s)) differs:\n%s", path, firstDiff(out, in))
			}
			ls, rest := lines(in)
			if len(rest) != 0 {
				t.Fatalf("%s: last line has no newline", path)
			}
			for i, line := range ls[1:] {
				ev, out := storeAndExport(t, line)
				if !bytes.Equal(out, line) {
					t.Errorf("%s line %d: stored export differs:\n%s", path, i+2, firstDiff(out, line))
				}
				seen[ev.Type] = true
				if _, opaque := ev.Data.(*codec.Opaque); opaque == isKnownType(ev.Type) {
					t.Errorf("%s line %d: %s decoded to %T", path, i+2, ev.Type, ev.Data)
				}
			}
		})
	}
	for _, typ := range knownTypes {
		if !seen[typ] {
			t.Errorf("no fixture has an event of type %s", typ)
		}
	}
}

var knownTypes = []string{
	codec.TypeTurnStart, codec.TypeTurnEnd, codec.TypeStepStart, codec.TypeStepEnd,
	codec.TypeUserMessage, codec.TypePromptBlocked, codec.TypeContextMessage, codec.TypeSteeringMessage,
	codec.TypeAssistantChunk, codec.TypeAssistantMessage, codec.TypeToolCall, codec.TypeToolResult,
	codec.TypeRequestHeader, codec.TypeHeaderDelta, codec.TypeRequestDigest,
	codec.TypeCompactStart, codec.TypeCompactSummary, codec.TypeCompactEnd,
}

func isKnownType(typ string) bool {
	for _, k := range knownTypes {
		if k == typ {
			return true
		}
	}
	return false
}

// firstDiff shows where two texts first differ.
func firstDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-40)
	return "byte " + itoa(i) + ":\n got …" + string(got[from:min(len(got), i+40)]) + "…\nwant …" + string(want[from:min(len(want), i+40)]) + "…"
}

// caseOracle is the part of a DSH corpus case.json the codec can check:
// what DSH's own scanner did with the file.
type caseOracle struct {
	Oracle struct {
		ErrorStage    string `json:"errorStage"`
		ScannedEvents *int   `json:"scannedEvents"`
		TornTailBytes *int64 `json:"tornTailBytes"`
	} `json:"oracle"`
}

// TestCorpusSessions reads every DSH corpus log. Where DSH's scanner
// refused the file (errorStage scanLog), Scanner must refuse it too; where
// it read it, Scanner must keep the same number of events and drop the
// same torn tail; and every file read without a torn tail must export
// byte for byte.
func TestCorpusSessions(t *testing.T) {
	var roundTrips, refusals int
	for _, dir := range corpusCases(t) {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			var oc caseOracle
			if err := json.Unmarshal(readFile(t, filepath.Join(dir, "case.json")), &oc); err != nil {
				t.Fatalf("case.json: %v", err)
			}
			in := readFile(t, filepath.Join(dir, "session.jsonl"))
			s := codec.NewScanner(bytes.NewReader(in), codec.Limits{})
			h, err := s.Header()
			var out []byte
			n := 0
			if err == nil {
				out, err = h.AppendJSON(nil)
				out = append(out, '\n')
			}
			for err == nil {
				var ev codec.Event
				ev, err = s.Next()
				if err == nil {
					n++
					out, err = ev.AppendJSON(out)
					out = append(out, '\n')
				}
			}
			if err == io.EOF {
				err = nil
			}
			if oc.Oracle.ErrorStage == "scanLog" {
				if err == nil {
					t.Fatalf("Scanner read %s, which DSH's scanner refuses", name)
				}
				refusals++
				return
			}
			if err != nil {
				t.Fatalf("Scanner: %v", err)
			}
			if want := oc.Oracle.ScannedEvents; want != nil && n != *want {
				t.Errorf("Scanner kept %d events, DSH kept %d", n, *want)
			}
			torn := s.Torn()
			if want := oc.Oracle.TornTailBytes; want != nil && torn.Bytes != *want {
				t.Errorf("Scanner dropped %d bytes (%+v), DSH dropped %d", torn.Bytes, torn, *want)
			}
			if torn.FirstLine != 0 {
				return
			}
			if !bytes.Equal(out, in) {
				t.Fatalf("export(import(%s)) differs:\n%s", name, firstDiff(out, in))
			}
			roundTrips++
		})
	}
	t.Logf("%d corpus logs exported byte for byte, %d refused as DSH refuses them", roundTrips, refusals)
}

// TestCorpusStoredEvents sends every event of every readable corpus log
// through the stored-record path and checks its export.
func TestCorpusStoredEvents(t *testing.T) {
	events := 0
	for _, dir := range corpusCases(t) {
		in := readFile(t, filepath.Join(dir, "session.jsonl"))
		ls, _ := lines(in)
		for i, line := range ls {
			if i == 0 {
				continue
			}
			if _, err := codec.ParseEvent(line, codec.Limits{}); err != nil {
				continue // refused files are covered by TestCorpusSessions
			}
			_, out := storeAndExport(t, line)
			if !bytes.Equal(out, line) {
				t.Errorf("%s line %d: stored export differs:\n%s", filepath.Base(dir), i+1, firstDiff(out, line))
			}
			events++
		}
	}
	t.Logf("%d corpus events stored and exported byte for byte", events)
}

// TestCorpusRequests transcodes every expected request line of the corpus
// (JSON.stringify output): FromJSON then ToJSON must reproduce it exactly.
func TestCorpusRequests(t *testing.T) {
	total := 0
	for _, dir := range corpusCases(t) {
		path := filepath.Join(dir, "requests.expected.jsonl")
		in, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		ls, rest := lines(in)
		if len(rest) != 0 {
			t.Errorf("%s: last line has no newline", path)
		}
		for i, line := range ls {
			mp, err := codec.FromJSON(nil, line, codec.Limits{})
			if err != nil {
				t.Errorf("%s line %d: FromJSON = %v", path, i+1, err)
				continue
			}
			out, n, err := codec.ToJSON(nil, mp)
			if err != nil || n != len(mp) {
				t.Errorf("%s line %d: ToJSON = %v (read %d of %d)", path, i+1, err, n, len(mp))
				continue
			}
			if !bytes.Equal(out, line) {
				t.Errorf("%s line %d: ToJSON(FromJSON(line)) differs:\n%s", path, i+1, firstDiff(out, line))
			}
			total++
		}
	}
	if total == 0 {
		t.Fatal("no request lines in the corpus")
	}
	t.Logf("%d request lines transcoded byte for byte", total)
}
