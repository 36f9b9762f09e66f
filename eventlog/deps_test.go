package eventlog_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestDeps guards what the storage packages import (R28): the storage
// layer imports the pure fold it validates with (rebuild) and nothing of
// the engine's writers (loop, compact), and no module beyond the approved
// ones.
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/sessionlog/sessionlog/codec":    "the event model",
		"github.com/sessionlog/sessionlog/eventlog": "eventlogtest tests the Store",
		"github.com/sessionlog/sessionlog/rebuild":  "the fold appends are validated with (SPEC §8.2)",
		"github.com/cockroachdb/errors":             "errors",
		"github.com/vmihailenco/msgpack/v5":         "engine records",
		"go.etcd.io/bbolt":                          "the store",
		"go.etcd.io/bbolt/errors":                   "bbolt's error values",
	}
	tests := []struct {
		name, dir string
		testing   bool // may import testing (the conformance suite)
	}{
		{name: "eventlog", dir: "."},
		{name: "eventlogtest", dir: "eventlogtest", testing: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkg, err := build.ImportDir(tt.dir, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range pkg.Imports {
				switch {
				case imp == "testing":
					if !tt.testing {
						t.Errorf("%s imports testing outside tests", tt.name)
					}
				case !strings.Contains(strings.SplitN(imp, "/", 2)[0], "."):
					// standard library
				case allowed[imp] == "":
					t.Errorf("%s imports %s, which a storage package must not", tt.name, imp)
				}
			}
		})
	}
}
