package keys

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/errclass"

	"github.com/sessionlog/sessionlog/codec"
)

// ErrKeys is the class of every error about keys (docs/rules.md#error-classes class keys):
// content sealed under a key the caller does not hold, a key that cannot
// be read or is not safe to use. The errors name the key id they concern,
// never a key's bytes. It is codec.ErrKeys, which the standard library's
// errors.Is recognises as well as cockroachdb/errors'.
var ErrKeys = codec.ErrKeys

// Provider holds key-encryption keys (KEKs): it wraps the data keys a
// store generates, one per session, and unwraps them again. A key file
// and an environment variable give a KEK (ReadFile, FromEnv); a key
// management service implements Provider to keep its keys out of this
// process.
type Provider interface {
	// KeyID names the KEK that Wrap wraps under: the id a store records
	// beside each wrapped data key, and names in the errors of a reader
	// without it. It holds no secret.
	KeyID() string
	// Wrap returns dk wrapped under the KEK named KeyID: bytes that only
	// Unwrap with that id opens, safe to store beside what dk seals.
	Wrap(ctx context.Context, dk DataKey) ([]byte, error)
	// Unwrap returns the data key wrapped holds, which Wrap wrapped under
	// the KEK named keyID. A provider that does not hold that KEK returns
	// an error of class ErrKeys naming keyID; one whose wrapped bytes are
	// damaged, of class codec.ErrCorrupt.
	Unwrap(ctx context.Context, keyID string, wrapped []byte) (DataKey, error)
}

// DataKey is a session's data key: 256 random bits, which seal the
// session's header and events (codec.Sealer) and are stored only wrapped
// by a Provider. The zero DataKey holds no key. It never prints its bytes:
// every fmt verb prints "keys.DataKey(redacted)", and inside another
// value, where fmt cannot call its methods, it shows as a code address.
type DataKey struct {
	// key returns the key's bytes. A func, not a pointer: fmt prints a
	// func as its address whatever the verb, while a pointer met under
	// a verb it does not take (%s in an unexported field) is followed.
	key func() *[codec.DataKeySize]byte
}

// dataKey returns the DataKey of k, which it keeps.
func dataKey(k *[codec.DataKeySize]byte) DataKey {
	return DataKey{key: func() *[codec.DataKeySize]byte { return k }}
}

// NewDataKey returns a new random data key, from crypto/rand.
func NewDataKey() DataKey {
	var k [codec.DataKeySize]byte
	_, _ = rand.Read(k[:]) // never fails (crypto/rand, Go 1.24 on)
	return dataKey(&k)
}

// DataKeyFrom returns the data key of b, which must hold 32 bytes (a key
// management service's unwrapped key); b is copied. Another size is an
// error of class ErrKeys.
func DataKeyFrom(b []byte) (DataKey, error) {
	if len(b) != codec.DataKeySize {
		return DataKey{}, keysf("keys: a data key of %d bytes; one is %d", errors.Safe(len(b)), errors.Safe(codec.DataKeySize))
	}
	var k [codec.DataKeySize]byte
	copy(k[:], b)
	return dataKey(&k), nil
}

// IsZero reports whether k is the zero DataKey, which holds no key.
func (k DataKey) IsZero() bool { return k.key == nil }

// Bytes returns a copy of the key's 32 bytes, for a Provider that wraps
// them elsewhere (a key management service); nil for the zero DataKey.
// Whatever holds the copy must never print, log or store it in the clear.
func (k DataKey) Bytes() []byte {
	if k.key == nil {
		return nil
	}
	return append([]byte(nil), k.key()[:]...)
}

// Sealer returns the codec.Sealer of k, which seals and opens the frames
// of its session. The zero DataKey is an error of class ErrKeys.
func (k DataKey) Sealer() (*codec.Sealer, error) {
	if k.key == nil {
		return nil, keysf("keys: the zero DataKey holds no key")
	}
	return codec.NewSealer(k.key()[:])
}

const redactedDataKey = "keys.DataKey(redacted)"

// String returns "keys.DataKey(redacted)".
func (DataKey) String() string { return redactedDataKey }

// GoString returns "keys.DataKey(redacted)".
func (DataKey) GoString() string { return redactedDataKey }

// Format prints "keys.DataKey(redacted)" whatever the verb and flags.
func (DataKey) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redactedDataKey) }

// keysf returns an error of class ErrKeys, created one frame up.
func keysf(format string, args ...interface{}) error {
	return codec.MarkKeys(errors.NewWithDepthf(1, format, args...))
}

// corruptf returns an error marked codec.ErrCorrupt, created one frame up.
func corruptf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), codec.ErrCorrupt)
}
