package keys

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/cockroachdb/errors"
)

// KEKSize is the size of a key-encryption key: an AES-256 key, what a key
// file holds.
const KEKSize = 32

// WrappedSize is the size of a data key wrapped by a KEK: the version,
// the nonce, the sealed key and the tag.
const WrappedSize = 1 + 12 + 32 + 16

// wrapVersion is the first byte of a data key a KEK wrapped. Part of the
// stored format: frozen.
const wrapVersion byte = 1

// Domains of the derivations below. Part of the stored format: frozen.
const (
	idDomain   = "sessionlog/key-id/1\x00"
	wrapDomain = "sessionlog/data-key/1\x00"
)

// KEK is a key-encryption key held in this process: a Provider that wraps
// data keys with AES-256-GCM under its 32 bytes (a random 96-bit nonce
// each). ReadFile, FromEnv and CreateFile return one. Its id is derived
// from its bytes (KeyID), so the same key read from a file or from the
// environment has the same id, and a store sealed under it opens with
// either. It prints as its id alone, never its bytes. A KEK is safe for
// concurrent use.
//
// A wrapped data key is WrappedSize bytes:
//
//	+--------+-----------+-------------------------------+---------+
//	| ver=1  | nonce     | AES-256-GCM of the data key   | tag     |
//	| 1 byte | 12 bytes  | 32 bytes                      | 16 B    |
//	+--------+-----------+-------------------------------+---------+
//
// The additional data is "sessionlog/data-key/1\x00" followed by the
// KEK's id, so that a wrapped key opens only under the id it is stored
// with. A KEK wraps one data key per session (and one per session at each
// rotation to it): the 2^32 seals that random nonces allow a key are 2^32
// sessions.
type KEK struct {
	id string
	// aead returns the AEAD of the key. A func, not the AEAD: an AEAD is
	// a pointer to AES's key schedule, whose first words are the key,
	// and fmt follows a pointer met under a verb it does not take (%s
	// in an unexported field); a func it prints as an address.
	aead func() cipher.AEAD
}

// NewKEK returns the KEK of secret, which must hold KEKSize bytes of a
// random key (another size is an error of class ErrKeys). The bytes are
// not retained: the KEK holds AES's expansion of them.
func NewKEK(secret []byte) (*KEK, error) {
	if len(secret) != KEKSize {
		return nil, keysf("keys: a key-encryption key of %d bytes; one is %d", errors.Safe(len(secret)), errors.Safe(KEKSize))
	}
	block, err := aes.NewCipher(secret)
	if err != nil {
		return nil, errors.NewAssertionErrorWithWrappedErrf(err, "keys: AES-256 of a %d-byte key", errors.Safe(len(secret)))
	}
	aead, err := cipher.NewGCMWithRandomNonce(block)
	if err != nil {
		return nil, errors.NewAssertionErrorWithWrappedErrf(err, "keys: AES-256-GCM")
	}
	return &KEK{id: keyID(secret), aead: func() cipher.AEAD { return aead }}, nil
}

// keyID derives a KEK's id from its bytes: "kek-" and the first 8 bytes
// of SHA-256(domain ‖ secret), in hex. 64 bits tell a store's keys apart;
// a hash of 256 random bits tells nothing of them.
func keyID(secret []byte) string {
	h := sha256.New()
	h.Write([]byte(idDomain))
	h.Write(secret)
	return "kek-" + hex.EncodeToString(h.Sum(nil)[:8])
}

// KeyID returns the KEK's id, "kek-" and 16 hex digits.
func (k *KEK) KeyID() string { return k.id }

// Wrap returns dk wrapped under k (WrappedSize bytes, a new nonce each
// call). The zero DataKey is an error of class ErrKeys.
func (k *KEK) Wrap(_ context.Context, dk DataKey) ([]byte, error) {
	if dk.IsZero() {
		return nil, keysf("keys: the zero DataKey holds no key to wrap")
	}
	out := make([]byte, 1, WrappedSize)
	out[0] = wrapVersion
	return k.aead().Seal(out, nil, dk.key()[:], k.additional()), nil
}

// Unwrap returns the data key that wrapped holds. keyID must be k's id
// (else an error of class ErrKeys naming both); wrapped must be a whole
// wrapped key that opens under k (else class codec.ErrCorrupt: with the
// id right, the key is right, and the bytes are damaged).
func (k *KEK) Unwrap(_ context.Context, keyID string, wrapped []byte) (DataKey, error) {
	if keyID != k.id {
		return DataKey{}, keysf("keys: the data key is wrapped under key %s; the key given is %s", errors.Safe(keyID), errors.Safe(k.id))
	}
	if len(wrapped) != WrappedSize || wrapped[0] != wrapVersion {
		v := -1
		if len(wrapped) > 0 {
			v = int(wrapped[0])
		}
		return DataKey{}, corruptf("keys: a wrapped data key of %d bytes, version %d; one is %d bytes, version %d",
			errors.Safe(len(wrapped)), errors.Safe(v), errors.Safe(WrappedSize), errors.Safe(wrapVersion))
	}
	var key [KEKSize]byte
	if _, err := k.aead().Open(key[:0], nil, wrapped[1:], k.additional()); err != nil {
		return DataKey{}, corruptf("keys: the data key wrapped under key %s does not open with it: the wrapped key is damaged", errors.Safe(k.id))
	}
	return dataKey(&key), nil
}

// additional is the additional data of the keys k wraps.
func (k *KEK) additional() []byte { return []byte(wrapDomain + k.id) }

// String returns "keys.KEK(" and the id and ")".
func (k *KEK) String() string { return "keys.KEK(" + k.id + ")" }

// GoString returns what String does.
func (k *KEK) GoString() string { return k.String() }

// Format prints what String returns whatever the verb and flags.
func (k *KEK) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, k.String()) }
