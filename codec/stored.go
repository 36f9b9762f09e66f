package codec

// DecodeStoredEvent decodes a stored event payload that has not been
// validated yet: it is ValidateValue followed by DecodeEvent.
func DecodeStoredEvent(payload []byte) (Event, error) {
	if err := ValidateValue(payload); err != nil {
		return Event{}, err
	}
	return DecodeEvent(payload)
}
