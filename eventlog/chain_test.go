package eventlog

import (
	"crypto/sha256"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

func TestChain(t *testing.T) {
	hdr := codec.EncodeRecord(nil, codec.NewSessionHeader("s", 1, "", "", 0).Raw)
	want := sha256.Sum256(append([]byte("sessionlog/chain/1"), hdr...))
	c0 := ChainStart(hdr)
	if c0 != want {
		t.Fatalf("ChainStart = %x, want %x", c0, want)
	}
	payload := []byte{0x81, 0xa1, 'a', 0x01}
	want1 := sha256.Sum256(append(want[:], payload...))
	if c1 := ChainNext(c0, payload); c1 != want1 {
		t.Fatalf("ChainNext = %x, want %x", c1, want1)
	}
}
