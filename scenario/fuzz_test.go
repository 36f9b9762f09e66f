package scenario_test

import (
	"os"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/scenario"
)

// FuzzParse: Parse never panics or hangs on any input, and every refusal
// carries a codec class (a scenario that cannot run is invalid, never an
// unclassified error).
func FuzzParse(f *testing.F) {
	example, err := os.ReadFile("../examples/scenario.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	for _, s := range []string{
		`{"turns":[{"prompt":"hi"}]}`,
		"{\"turns\":[\n  {\"prompt\":\"hi\",}]}",
		`{"turns":[{"prompt":"a","toolResults":{"c1":{"contents":[]}}}]}`,
		`{"turns":[{"prompt":"a","replies":[[{"type":"tool-call","name":"n","arguments":"{}"}]]}]}`,
		`{"config":{"provider":"p"},"turns":[{"prompt":"hi"}]}`,
		`{"prefix":[[{"content":[]}]],"turns":[{"prompt":"hi"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := scenario.Parse(data)
		if err != nil && !errors.IsAny(err, codec.ErrInvalid, codec.ErrCorrupt, codec.ErrUnsupported) {
			t.Fatalf("Parse refused %q with an unclassified error: %v", data, err)
		}
	})
}
