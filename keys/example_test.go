package keys_test

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	stderrors "errors"
	"fmt"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/keys"
)

// toyKMS stands for a key management service: it holds its keys by name
// and wraps under the newest. A real one would send the data key's bytes
// to the service (Wrap) and get them back (Unwrap), the service's keys
// never leaving it.
type toyKMS struct {
	current string
	keys    map[string]cipher.AEAD
}

func (m *toyKMS) add(name string, secret []byte) {
	block, _ := aes.NewCipher(secret)
	aead, _ := cipher.NewGCMWithRandomNonce(block)
	m.keys[name], m.current = aead, name
}

func (m *toyKMS) KeyID() string { return m.current }

func (m *toyKMS) Wrap(_ context.Context, dk keys.DataKey) ([]byte, error) {
	return m.keys[m.current].Seal(nil, nil, dk.Bytes(), []byte(m.current)), nil
}

func (m *toyKMS) Unwrap(_ context.Context, keyID string, wrapped []byte) (keys.DataKey, error) {
	aead, ok := m.keys[keyID]
	if !ok {
		return keys.DataKey{}, codec.MarkKeys(errors.Newf("toykms: no key %s", errors.Safe(keyID)))
	}
	plain, err := aead.Open(nil, nil, wrapped, []byte(keyID))
	if err != nil {
		return keys.DataKey{}, errors.Mark(errors.Newf("toykms: the key wrapped under %s is damaged", errors.Safe(keyID)), codec.ErrCorrupt)
	}
	return keys.DataKeyFrom(plain)
}

// A key management service implements Provider: a store records the id
// of the key each data key was wrapped under, and Unwrap gets it back,
// so the service can rotate to a new key and still unwrap what the old
// one wrapped.
func Example_provider() {
	ctx := context.Background()
	kms := &toyKMS{keys: map[string]cipher.AEAD{}}
	kms.add("toy/1", make([]byte, 32)) // a toy: a real key is random, and stays in the service
	var p keys.Provider = kms

	// A session's data key, wrapped for the store; its records sealed.
	dk := keys.NewDataKey()
	wrapped, _ := p.Wrap(ctx, dk)
	id := p.KeyID()
	s, _ := dk.Sealer()
	rec := codec.SealRecord(nil, codec.AppendString(nil, "hello"), s)

	// The service rotates; the store asks for the key by the id it holds.
	kms.add("toy/2", make([]byte, 32))
	back, err := p.Unwrap(ctx, id, wrapped)
	if err != nil {
		fmt.Println(err)
		return
	}
	opener, _ := back.Sealer()
	payload, err := codec.OpenRecord(rec, opener, codec.MaxRecord)
	js, _, _ := codec.ToJSON(nil, payload)
	fmt.Printf("%s under %s, now %s: %s %v\n", back, id, p.KeyID(), js, err)

	// A key the service does not hold: class keys, naming it.
	_, err = p.Unwrap(ctx, "toy/0", wrapped)
	fmt.Println(stderrors.Is(err, keys.ErrKeys), err)
	// Output:
	// keys.DataKey(redacted) under toy/1, now toy/2: "hello" <nil>
	// true toykms: no key toy/0
}
