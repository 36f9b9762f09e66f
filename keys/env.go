package keys

import (
	"encoding/base64"
	"os"
	"strings"

	"github.com/cockroachdb/errors"
)

// FromEnv reads the KEK held by the environment variable name: the
// standard base64 (RFC 4648, padded) of KEKSize bytes, spaces around it
// ignored (`base64 -w0 FILE` of a key file prints it). getenv reads the
// environment; nil means os.Getenv. An unset or empty variable, or one
// that holds no key, is an error of class ErrKeys naming the variable,
// never its value.
func FromEnv(name string, getenv func(string) string) (*KEK, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	text := strings.TrimSpace(getenv(name))
	if text == "" {
		return nil, keysf("keys: $%s is not set: it should hold a key, in base64", errors.Safe(name))
	}
	bad := func() error {
		return keysf("keys: $%s does not hold a key: want the base64 of %d bytes", errors.Safe(name), errors.Safe(KEKSize))
	}
	var b [KEKSize + 3]byte // what 44 base64 digits may decode to
	if base64.StdEncoding.DecodedLen(len(text)) > len(b) {
		return nil, bad()
	}
	n, err := base64.StdEncoding.Decode(b[:], []byte(text))
	if err != nil || n != KEKSize {
		clear(b[:])
		return nil, bad()
	}
	k, err := NewKEK(b[:KEKSize])
	clear(b[:])
	return k, err
}
