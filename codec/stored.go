package codec

// DecodeStoredEvent decodes a stored event payload that has not been
// validated yet, such as a record's or a pack's payload: it accepts
// exactly the payloads that ValidateValue followed by DecodeEvent accept,
// returns the same Event for them and, for the others, the same error
// (ErrCorrupt for what ValidateValue refuses, else DecodeEvent's error).
// It makes one pass over the bytes, checking the msgpack kinds, string
// keys, duplicate keys, WTF-8 strings, finite floats, depth and trailing
// bytes as it builds the typed view; a refused payload is read again by
// the two steps, for their error.
func DecodeStoredEvent(payload []byte) (Event, error) {
	e := Event{Raw: payload, Seq: -1}
	if e.decode(true) == nil {
		return e, nil
	}
	if err := ValidateValue(payload); err != nil {
		return Event{}, err
	}
	return DecodeEvent(payload)
}
