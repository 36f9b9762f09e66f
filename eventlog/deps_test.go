package eventlog_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestDeps guards what the storage packages import (R28, DESIGN.md): the
// storage layer imports nothing of the domain above it (rebuild, loop,
// compact: validation is injected from above) and no module beyond the
// approved ones.
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/sessionlog/sessionlog/codec":                    "the event model",
		"github.com/sessionlog/sessionlog/eventlog":                 "eventlogtest tests the Store",
		"github.com/sessionlog/sessionlog/internal/boltfmt":         "the bbolt format, its one home",
		"github.com/sessionlog/sessionlog/internal/atomicfile":      "SyncDir",
		"github.com/sessionlog/sessionlog/eventlog/wal":             "the write-ahead log's files",
		"github.com/sessionlog/sessionlog/eventlog/internal/engine": "the engine both drivers share",
		"github.com/cockroachdb/errors":                             "errors",
		"github.com/vmihailenco/msgpack/v5":                         "engine records",
		"go.etcd.io/bbolt":                                          "the store",
		"go.etcd.io/bbolt/errors":                                   "bbolt's error values",
		"go.opentelemetry.io/otel/metric":                           "the metric API (no SDK)",
		"github.com/sessionlog/sessionlog/internal/sessioncache":    "the validator cache and writer locks",
		"github.com/sessionlog/sessionlog/internal/observe":         "logger and metric setup shared with loop",
		"github.com/sessionlog/sessionlog/internal/errclass":        "error classes that both errors packages see",
	}
	tests := []struct {
		name, dir string
		testing   bool // may import testing (the conformance suite)
	}{
		{name: "eventlog", dir: "."},
		{name: "eventlogtest", dir: "eventlogtest", testing: true},
		{name: "engine", dir: "internal/engine"},
		{name: "boltlog", dir: "boltlog"},
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

// TestNoDomainBelow walks eventlog's imports within the module, transitively
// (what `go list -deps ./eventlog` shows): none is a package of the domain.
func TestNoDomainBelow(t *testing.T) {
	const mod = "github.com/sessionlog/sessionlog/"
	forbidden := []string{"rebuild", "loop", "compact", "verify", "wire", "provider", "header"}
	seen := map[string]bool{}
	var walk func(dir, path string)
	walk = func(dir, path string) {
		if seen[path] {
			return
		}
		seen[path] = true
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range pkg.Imports {
			rel, ok := strings.CutPrefix(imp, mod)
			if !ok {
				continue
			}
			for _, f := range forbidden {
				if rel == f || strings.HasPrefix(rel, f+"/") {
					t.Errorf("%s imports %s: storage must not depend on the domain", path, imp)
				}
			}
			walk("../"+rel, imp)
		}
	}
	walk(".", mod+"eventlog")
	walk("boltlog", mod+"eventlog/boltlog")
	if len(seen) < 2 {
		t.Fatalf("walked %d packages: the walk found nothing", len(seen))
	}
}
