package header

import (
	"strconv"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
)

// whole checks that mp is exactly one well-formed stored value, so that
// decoders need only check kinds.
func whole(mp []byte, what string) error {
	if err := codec.ValidateValue(mp); err != nil {
		return errors.Wrapf(err, "header: %s", errors.Safe(what))
	}
	return nil
}

// seen tracks keys already read in one object.
type seen uint16

// mark records bit and refuses a second occurrence.
func (s *seen) mark(bit seen, path string) error {
	if *s&bit != 0 {
		return invalidf("header: %s: duplicate key", errors.Safe(path))
	}
	*s |= bit
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}
