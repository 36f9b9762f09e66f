package codec

import "github.com/cockroachdb/errors"

// refValidateValue is ValidateValue as it was before the one-pass decoder
// (commit e9e03c2), kept verbatim as the reference the differential fuzz
// target compares the current ValidateValue and DecodeStoredEvent against.
func refValidateValue(mp []byte) error {
	r := Reader{b: mp}
	if err := r.refValidate(maxStoredDepth); err != nil {
		return errors.Mark(errors.Wrapf(err, "codec: payload byte %d", errors.Safe(r.off)), ErrCorrupt)
	}
	if r.Len() != 0 {
		return corruptf("codec: %d trailing bytes after the payload", errors.Safe(r.Len()))
	}
	return nil
}

func (r *Reader) refValidate(depth int) error {
	t, err := r.Next()
	if err != nil {
		return err
	}
	switch t.Kind {
	case KindString:
		if !validWTF8(t.Str) {
			return errors.New("codec: string is not UTF-8")
		}
		return nil
	case KindArray, KindObject:
	default:
		return nil
	}
	if depth <= 0 {
		return errors.New("codec: nesting too deep")
	}
	if t.Kind == KindArray {
		for i := 0; i < t.N; i++ {
			if err := r.refValidate(depth - 1); err != nil {
				return err
			}
		}
		return nil
	}
	var keys keySet
	for i := 0; i < t.N; i++ {
		k, ok, err := r.key()
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("codec: object key is not a string")
		}
		if !validWTF8(k) {
			return errors.New("codec: key is not UTF-8")
		}
		// Compare keys by their string bytes, independent of header width.
		if !keys.add(r.b, r.off-len(k), r.off) {
			return errors.New("codec: duplicate object key")
		}
		if err := r.refValidate(depth - 1); err != nil {
			return err
		}
	}
	return nil
}
