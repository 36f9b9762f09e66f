package fuzz

import (
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
)

// checkClass fails unless err carries one of the codec's error classes:
// every refusal must be classified (docs/rules.md#error-classes).
func checkClass(t *testing.T, what string, err error, classes ...error) {
	t.Helper()
	for _, c := range classes {
		if errors.Is(err, c) {
			return
		}
	}
	t.Fatalf("%s: unclassified error %v", what, err)
}

// storedLimits accept every value a valid record can hold: ValidateValue
// allows 1024 levels of nesting, FromJSON 512 by default.
var storedLimits = codec.Limits{MaxDepth: 1024}
