package gateway

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// TestReadBodyClaim: a Content-Length is a claim: a request that claims
// 30 MiB and sends 10 bytes costs readBody about its bytes, not the claim
// (which would let each connection hold the body limit's memory).
func TestReadBodyClaim(t *testing.T) {
	r, err := http.NewRequest("POST", "http://gw/v1/messages", io.NopCloser(strings.NewReader(`{"a":"b"}`)))
	if err != nil {
		t.Fatal(err)
	}
	r.ContentLength = 30 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b, err := readBody(r, DefaultMaxBody)
	runtime.ReadMemStats(&after)
	if err != nil || string(b) != `{"a":"b"}` {
		t.Fatalf("readBody = %q, %v", b, err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 2<<20 {
		t.Errorf("readBody allocated %d bytes for a body of 9 that claimed 30 MiB", got)
	}
}
