package header

import (
	"bytes"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

var fuzzSeeds = []string{
	`{"config":{"model":"m"}}`,
	`{"config":{"provider":"p","model":"m","temperature":0.5,"maxTokens":10,"stop":[],"x":{"a":[1,null]}},"system":"a\nb","tools":[{"name":"t","parameters":{"b":1,"a":2}}],"messagePrefix":[{"role":"user","content":[{"type":"text","text":"p"}]}]}`,
	`{"system":{"keepStart":2,"keepEnd":9,"insert":["x"]},"tools":{"added":[{"name":"a"}],"removed":["b"],"changed":[]},"config":{"model":"m"},"messagePrefix":[]}`,
	`{"system":{"keepStart":-9007199254740992,"keepEnd":9007199254740992,"insert":[]}}`,
	`{"config":{"model":null}}`,
}

// FuzzDecode checks that Decode and DecodeDelta never panic on any stored
// value, that whatever they accept re-encodes to a value they accept with
// the same meaning, and that Apply of any accepted delta to any accepted
// header does not panic and gives a canonical header.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	base, err := codec.FromJSON(nil, []byte(fuzzSeeds[1]), codec.Limits{})
	if err != nil {
		f.Fatal(err)
	}
	prev, err := Decode(base)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		mp, err := codec.FromJSON(nil, text, codec.Limits{})
		if err != nil {
			mp = text // raw bytes: Decode must refuse them cleanly
		}
		if s, err := Decode(mp); err == nil {
			enc := s.Encode()
			back, err := Decode(enc)
			if err != nil || !back.Equal(s) || !bytes.Equal(back.Encode(), enc) {
				t.Fatalf("Decode(Encode(s)) = %v, not s", err)
			}
		}
		if d, err := DecodeDelta(mp); err == nil {
			enc := d.Encode()
			back, err := DecodeDelta(enc)
			if err != nil || !bytes.Equal(back.Encode(), enc) {
				t.Fatalf("DecodeDelta(Encode(d)) = %v, not d", err)
			}
			got := Apply(prev, d)
			if again, err := Decode(got.Encode()); err != nil || !again.Equal(got) {
				t.Fatalf("Apply gave a header that does not round-trip: %v", err)
			}
		}
	})
}
