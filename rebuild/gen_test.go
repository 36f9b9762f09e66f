package rebuild_test

import (
	"math/rand"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/loggen"
)

// genLog generates a valid session of about events events.
func genLog(rng *rand.Rand, events int) (codec.SessionHeader, []codec.Event) {
	h, evs, err := loggen.Session(rng.Int63(), loggen.Options{Events: events})
	if err != nil {
		panic(err)
	}
	return h, evs
}

func TestGenLogIsValid(t *testing.T) {
	for i := 0; i < 20; i++ {
		_, evs := genLog(rand.New(rand.NewSource(int64(i))), 300)
		if len(evs) < 299 {
			t.Fatalf("generated %d events", len(evs))
		}
	}
}
