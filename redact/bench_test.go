package redact_test

import (
	"testing"

	"github.com/sessionlog/sessionlog/redact"
)

// BenchmarkCorpus redacts every DSH line (storage form) with the ready
// matchers, as Event does for redact --all; bytes are the payloads'.
func BenchmarkCorpus(b *testing.B) {
	values, docs := corpusTextsB(b)
	r := redact.Secrets()
	b.Run("Event", func(b *testing.B) {
		size := 0
		for _, v := range values {
			size += len(v)
		}
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, v := range values {
				if _, _, err := r.Event(v); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("JSON", func(b *testing.B) {
		size := 0
		for _, d := range docs {
			size += len(d)
		}
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, d := range docs {
				r.JSON(d)
			}
		}
	})
}
