package keys_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	stderrors "errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/keys"
)

// secret is a KEK's bytes for tests; other is another.
var (
	secret = bytes.Repeat([]byte{0x7a}, keys.KEKSize)
	other  = bytes.Repeat([]byte{0x15}, keys.KEKSize)
)

func mustKEK(t testing.TB, b []byte) *keys.KEK {
	t.Helper()
	k, err := keys.NewKEK(b)
	if err != nil {
		t.Fatalf("NewKEK = %v", err)
	}
	return k
}

// class names err's class as the tables spell it.
func class(err error) string {
	switch {
	case err == nil:
		return "ok"
	case stderrors.Is(err, keys.ErrKeys) && errors.Is(err, keys.ErrKeys):
		return "keys"
	case stderrors.Is(err, keys.ErrKeys) || errors.Is(err, keys.ErrKeys):
		return "keys for one errors.Is only"
	case errors.Is(err, codec.ErrCorrupt):
		return "corrupt"
	}
	return "unclassified"
}

// leaks reports whether s shows any of the given keys' bytes: raw, in hex
// (either case), in base64, as the decimal list %v prints of a byte
// array, or as the first word of AES's key schedule (which is the key's),
// in decimal or hex, either byte order.
func leaks(s string, ks ...[]byte) bool {
	for _, k := range ks {
		be, le := binary.BigEndian.Uint32(k), binary.LittleEndian.Uint32(k)
		forms := []string{string(k[:8]), hex.EncodeToString(k[:8]), strings.ToUpper(hex.EncodeToString(k[:8])),
			base64.StdEncoding.EncodeToString(k)[:12], strings.Trim(fmt.Sprint(k[:4]), "[]"),
			fmt.Sprint(be), fmt.Sprint(le), fmt.Sprintf("%x", be), fmt.Sprintf("%x", le)}
		for _, f := range forms {
			if strings.Contains(s, f) {
				return true
			}
		}
	}
	return false
}

func TestDataKey(t *testing.T) {
	a, b := keys.NewDataKey(), keys.NewDataKey()
	if a.IsZero() || bytes.Equal(a.Bytes(), b.Bytes()) || len(a.Bytes()) != codec.DataKeySize {
		t.Fatalf("two new data keys: %d bytes, equal %v", len(a.Bytes()), bytes.Equal(a.Bytes(), b.Bytes()))
	}
	c := a.Bytes()
	c[0] ^= 1
	if bytes.Equal(c, a.Bytes()) {
		t.Fatalf("Bytes returned the key's own storage")
	}
	from, err := keys.DataKeyFrom(a.Bytes())
	if err != nil || !bytes.Equal(from.Bytes(), a.Bytes()) {
		t.Fatalf("DataKeyFrom(Bytes) = %v", err)
	}
	for _, n := range []int{0, 16, 31, 33} {
		if _, err := keys.DataKeyFrom(make([]byte, n)); class(err) != "keys" {
			t.Errorf("DataKeyFrom(%d bytes) = %v, want class keys", n, err)
		}
	}
	var zero keys.DataKey
	if !zero.IsZero() || zero.Bytes() != nil {
		t.Errorf("the zero DataKey holds a key")
	}
	if _, err := zero.Sealer(); class(err) != "keys" {
		t.Errorf("zero.Sealer() = %v, want class keys", err)
	}
	// A record sealed with a key's Sealer opens with the Sealer of the
	// same key, unwrapped, and not with another's.
	sa, err := a.Sealer()
	if err != nil {
		t.Fatal(err)
	}
	rec := codec.SealRecord(nil, []byte{0xa3, 'a', 'b', 'c'}, sa)
	sf, _ := from.Sealer()
	if p, err := codec.OpenRecord(rec, sf, codec.MaxRecord); err != nil || string(p) != "\xa3abc" {
		t.Errorf("open with the same key = %q, %v", p, err)
	}
	sb, _ := b.Sealer()
	if _, err := codec.OpenRecord(rec, sb, codec.MaxRecord); class(err) != "keys" {
		t.Errorf("open with another data key = %v, want class keys", err)
	}
}

// TestRedacted: no fmt verb shows a key's bytes, of a DataKey or a KEK,
// alone, by pointer or inside another value; a KEK shows its id.
func TestRedacted(t *testing.T) {
	dk, err := keys.DataKeyFrom(secret)
	if err != nil {
		t.Fatal(err)
	}
	kek := mustKEK(t, other)
	type holder struct {
		Key   keys.DataKey
		key   keys.DataKey
		kek   *keys.KEK
		value keys.KEK
	}
	h := holder{Key: dk, key: dk, kek: kek, value: *kek}
	for _, v := range []any{dk, &dk, kek, *kek, h, &h, []keys.DataKey{dk}, map[string]keys.DataKey{"k": dk}} {
		for _, f := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%08b"} {
			if out := fmt.Sprintf(f, v); leaks(out, secret, other) {
				t.Errorf("Sprintf(%s, %T) shows a key: %s", f, v, out)
			}
		}
	}
	if got := fmt.Sprintf("%v %+v %#v %s", dk, dk, dk, dk); got != strings.Repeat("keys.DataKey(redacted) ", 3)+"keys.DataKey(redacted)" {
		t.Errorf("a DataKey prints as %q", got)
	}
	if got := fmt.Sprint(kek); got != "keys.KEK("+kek.KeyID()+")" {
		t.Errorf("a KEK prints as %q", got)
	}
}

func TestKeyID(t *testing.T) {
	a, a2, b := mustKEK(t, secret), mustKEK(t, secret), mustKEK(t, other)
	if !regexp.MustCompile(`^kek-[0-9a-f]{16}$`).MatchString(a.KeyID()) {
		t.Errorf("KeyID = %q, want kek- and 16 hex digits", a.KeyID())
	}
	if a.KeyID() != a2.KeyID() || a.KeyID() == b.KeyID() {
		t.Errorf("ids %s %s %s: want the same key's equal, another's different", a.KeyID(), a2.KeyID(), b.KeyID())
	}
	// Frozen: the id of a store's key must not change between versions.
	if got := a.KeyID(); got != "kek-82888b8a169bc8f6" {
		t.Errorf("KeyID of the test key = %s; the derivation changed, and stores record it", got)
	}
	for _, n := range []int{0, 16, 31, 33, 64} {
		if _, err := keys.NewKEK(make([]byte, n)); class(err) != "keys" {
			t.Errorf("NewKEK(%d bytes) = %v, want class keys", n, err)
		}
	}
}

func TestWrapUnwrap(t *testing.T) {
	ctx := context.Background()
	kek, otherKEK := mustKEK(t, secret), mustKEK(t, other)
	dk := keys.NewDataKey()
	w, err := kek.Wrap(ctx, dk)
	if err != nil || len(w) != keys.WrappedSize {
		t.Fatalf("Wrap = %d bytes, %v; want %d", len(w), err, keys.WrappedSize)
	}
	if bytes.Contains(w, dk.Bytes()[:8]) {
		t.Fatalf("the wrapped key holds the data key's bytes")
	}
	if w2, _ := kek.Wrap(ctx, dk); bytes.Equal(w, w2) {
		t.Errorf("two wraps of one key are the same bytes: the nonce is not random")
	}
	got, err := mustKEK(t, secret).Unwrap(ctx, kek.KeyID(), w)
	if err != nil || !bytes.Equal(got.Bytes(), dk.Bytes()) {
		t.Fatalf("Unwrap(Wrap(dk)) = %v; want dk", err)
	}
	if _, err := kek.Wrap(ctx, keys.DataKey{}); class(err) != "keys" {
		t.Errorf("Wrap(zero) = %v, want class keys", err)
	}

	// The wrong key: class keys, naming both ids, never a key.
	_, err = otherKEK.Unwrap(ctx, kek.KeyID(), w)
	if class(err) != "keys" || !strings.Contains(err.Error(), kek.KeyID()) || !strings.Contains(err.Error(), otherKEK.KeyID()) {
		t.Errorf("Unwrap under another key = %v, want class keys naming %s and %s", err, kek.KeyID(), otherKEK.KeyID())
	}
	if leaks(fmt.Sprintf("%+v", err), secret, other, dk.Bytes()) {
		t.Errorf("the error shows a key: %+v", err)
	}
	// Another id with the right key: the wrapped key is bound to its id.
	if _, err := otherKEK.Unwrap(ctx, otherKEK.KeyID(), w); class(err) != "corrupt" {
		t.Errorf("Unwrap of a key wrapped under another id, claimed as this one's = %v, want corrupt", err)
	}

	// Damage: every flipped byte, every cut, a wrong version.
	for i := range w {
		bad := bytes.Clone(w)
		bad[i] ^= 0x10
		if _, err := kek.Unwrap(ctx, kek.KeyID(), bad); class(err) != "corrupt" {
			t.Fatalf("byte %d flipped: Unwrap = %v, want corrupt", i, err)
		}
	}
	for n := 0; n < len(w); n++ {
		if _, err := kek.Unwrap(ctx, kek.KeyID(), w[:n]); class(err) != "corrupt" {
			t.Fatalf("cut to %d bytes: Unwrap = %v, want corrupt", n, err)
		}
	}
	if _, err := kek.Unwrap(ctx, kek.KeyID(), append(bytes.Clone(w), 0)); class(err) != "corrupt" {
		t.Errorf("a byte added: Unwrap = %v, want corrupt", err)
	}
}

// TestProviders: every provider of a key, from a file, from the
// environment and in memory, has the same id and opens what the others
// wrapped.
func TestProviders(t *testing.T) {
	ctx := context.Background()
	path := writeKeyFile(t, secret, 0o600)
	fromFile, err := keys.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fromEnv, err := keys.FromEnv("KEY", func(string) string { return base64.StdEncoding.EncodeToString(secret) })
	if err != nil {
		t.Fatal(err)
	}
	ps := []keys.Provider{fromFile, fromEnv, mustKEK(t, secret)}
	for _, p := range ps {
		dk := keys.NewDataKey()
		w, err := p.Wrap(ctx, dk)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range ps {
			if q.KeyID() != p.KeyID() {
				t.Fatalf("ids %s and %s of one key", p.KeyID(), q.KeyID())
			}
			if got, err := q.Unwrap(ctx, p.KeyID(), w); err != nil || !bytes.Equal(got.Bytes(), dk.Bytes()) {
				t.Fatalf("%v does not unwrap what %v wrapped: %v", q, p, err)
			}
		}
	}
}
