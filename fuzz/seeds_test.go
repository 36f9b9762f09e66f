package fuzz

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

var genSeeds = flag.Bool("gen-seeds", false, "regenerate the seed files under testdata/fuzz")

// jsonSeeds are JSON texts at the edges of docs/format.md#json-text and docs/format.md#events: escapes,
// lone surrogates, numbers, limits, and every envelope rule.
var jsonSeeds = []string{
	`""`, `"\"\\\/\b\f\n\r\t"`, `"\u0000\u001f\u007f"`, `"<>&\u2028\u2029"`, `"héllo 世界 😀"`,
	`"\ud800"`, `"\udfff"`, `"a\ud83dx"`, `"\ud83d\ude00"`, `"\uD83D\uDE00"`, `"\ud83d\ud83d\ude00"`, `"\ude00\ud83d"`,
	`0`, `-0`, `-0.0`, `1.0`, `1E3`, `1e21`, `1e-7`, `0.000001`, `0.2`, `5`, `123456789012345678901`,
	`9007199254740993`, `0.1`, `1.7976931348623157e308`, `5e-324`, `-1.5e-10`, `1e400`, `-1e400`, `1e-400`,
	`9223372036854775807`, `-9223372036854775808`, `18446744073709551616`,
	` { "a" : [ 1 , 2 ] } `, `{"b":1,"a":2,"10":3,"2":4}`, `{}`, `[]`, `[[],{},[[]]]`, `null`, `true`, `false`,
	`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `[1,]`, `{"a":1,}`, `01`, `-`, `1.`, `.5`, `NaN`, `Infinity`, `{"a":1} x`,
	"\"a\xffb\"", "\"a\x01b\"", "[1,\x002]", `"\x41"`, `"\u12g4"`, `"\`, `"abc`, `tru`, ``, " ",
	strings.Repeat("[", 600) + strings.Repeat("]", 600),
	strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100),
	`{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}`,
	`{"type":"turn/end","seq":9,"time":5,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
	`{"type":"user/message","seq":1,"time":0,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
	`{"type":"user/message","seq":7,"time":0,"data":{"content":[],"source":{"kind":"user"}},"sourceEventSeqs":[3],"surfaceOp":{"op":"replace","start":3,"end":3}}`,
	`{"type":"assistant/message","seq":9,"time":1,"data":{"turn":1,"step":1,"content":[]},"sourceEventSeqs":[],"surfaceOp":"append"}`,
	`{"type":"assistant/chunk","seq":5,"time":0,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"Hel"}}}`,
	`{"type":"tool/result","seq":23,"time":0,"data":{"turn":1,"step":2,"callId":"c","content":[{"type":"tool-result","toolCallId":"i","content":[],"isError":true}],"isError":false},"sourceEventSeqs":[21],"surfaceOp":"append"}`,
	`{"type":"request/header","seq":0,"time":2,"data":{"header":{"config":{"model":"m"}},"reason":"fallback"}}`,
	`{"type":"request/digest","seq":3,"time":0,"data":{"turn":1,"step":1,"sha256":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}}`,
	`{"type":"compact/end","seq":5,"time":0,"data":{"turn":2,"error":"timeout"}}`,
	`{"type":"hook/result","seq":1,"time":13,"data":{"decision":"block"}}`,
	`{"type":"turn/start","seq":7,"time":0,"data":{"turn":1},"surfaceOp":"append"}`,
	`{"type":"user/message","seq":7,"time":0,"data":{"content":[{"type":"custom","content":["x"]}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
	`{"type":"user/message","seq":7,"time":0,"data":{"content":[{"type":"text","text":5}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
	`{"type":"session","version":0,"id":"s","createdAt":0,"cwd":"/w"}`,
	`{"type":"session","id":"s","createdAt":0}`,
}

// fixtureFiles returns the codec fixture logs: the corpus shapes (every
// event type, both eras, opaque values), written by JSON.stringify.
func fixtureFiles(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "codec", "testdata", "fixtures", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = b
	}
	return files
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// record frames a JSON text as a stored record, or returns nil.
func record(js []byte) []byte {
	mp, err := codec.FromJSON(nil, js, codec.Limits{})
	if err != nil {
		return nil
	}
	return codec.EncodeRecord(nil, mp)
}

// eventRecord frames a JSON text as EncodeEventRecord does, or returns nil
// when that is not a compressed (version 2) record.
func eventRecord(js []byte) []byte {
	mp, err := codec.FromJSON(nil, js, codec.Limits{})
	if err != nil {
		return nil
	}
	if r := codec.EncodeEventRecord(nil, mp); r[0] == codec.RecordVersionS2 {
		return r
	}
	return nil
}

// TestGenerateSeeds writes the checked-in seed corpora when run with
// -gen-seeds; otherwise it checks that every seed file is readable.
func TestGenerateSeeds(t *testing.T) {
	if !*genSeeds {
		checkSeedFiles(t)
		return
	}
	files := fixtureFiles(t)
	if len(files) == 0 {
		t.Fatal("no codec fixtures found")
	}
	var jsonLines, records, compressed, scans [][]byte
	for _, s := range jsonSeeds {
		jsonLines = append(jsonLines, []byte(s))
		if r := record([]byte(s)); r != nil {
			records = append(records, r)
		}
	}
	for _, name := range sortedKeys(files) {
		b := files[name]
		scans = append(scans, b)
		ls := splitLines(b)
		for _, l := range ls {
			jsonLines = append(jsonLines, l)
			if r := record(l); r != nil {
				records = append(records, r)
			}
			if r := eventRecord(l); r != nil {
				compressed = append(compressed, r)
			}
		}
		// Crash tails: a cut in the middle of the last line, a cut line
		// before the last turn/end, and a seq gap.
		scans = append(scans, b[:len(b)-len(ls[len(ls)-1])/2-1])
		if len(ls) > 3 {
			mid := bytes.Join(ls[:2], []byte("\n"))
			mid = append(mid, '\n')
			mid = append(mid, ls[2][:len(ls[2])/2]...)
			mid = append(mid, '\n')
			mid = append(mid, bytes.Join(ls[3:], []byte("\n"))...)
			scans = append(scans, append(mid, '\n'))
			gap := append(bytes.Join(append([][]byte{ls[0], ls[1]}, ls[3:]...), []byte("\n")), '\n')
			scans = append(scans, gap)
		}
	}
	// Damaged records: a flipped bit, a truncation, a newer version.
	if len(records) > 0 {
		r := records[len(records)-1]
		flipped := bytes.Clone(r)
		flipped[len(flipped)/2] ^= 0x10
		records = append(records, flipped, r[:len(r)-3], append([]byte{3}, r[1:]...))
	}
	// Compressed records (version 2), a sample of them, and the same
	// damage.
	for i := 0; i < len(compressed); i += 1 + len(compressed)/64 {
		records = append(records, compressed[i])
	}
	if len(compressed) > 0 {
		r := compressed[len(compressed)-1]
		flipped := bytes.Clone(r)
		flipped[len(flipped)/2] ^= 0x10
		records = append(records, flipped, r[:len(r)-3], append([]byte{3}, r[1:]...))
	}
	writeSeeds(t, "FuzzJSONLine", jsonLines)
	writeSeeds(t, "FuzzRecord", records)
	writeSeeds(t, "FuzzScanner", scans)
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// writeSeeds writes one "go test fuzz v1" file per input, named by its
// hash, into testdata/fuzz/<target>/ (existing files, crashers among them,
// are kept).
func writeSeeds(t *testing.T, target string, inputs [][]byte) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, in := range inputs {
		sum := sha256.Sum256(in)
		name := "seed-" + hex.EncodeToString(sum[:8])
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", in)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%s: %d seeds", target, len(inputs))
}

// checkSeedFiles checks that every seed directory exists and each file is
// in the "go test fuzz v1" format with one []byte argument.
func checkSeedFiles(t *testing.T) {
	for _, target := range []string{"FuzzJSONLine", "FuzzRecord", "FuzzScanner"} {
		paths, err := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
		if err != nil {
			t.Fatal(err)
		}
		if len(paths) == 0 {
			t.Errorf("no seeds for %s; run go test ./fuzz -run TestGenerateSeeds -gen-seeds", target)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(b, []byte("go test fuzz v1\n[]byte(")) {
				t.Errorf("%s: not a go test fuzz v1 file with one []byte", p)
			}
		}
	}
}
