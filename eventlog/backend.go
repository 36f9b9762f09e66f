package eventlog

import (
	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
)

// The functions below are the rules every Store applies to what it is
// handed and what it reads back, exported so that other backends (package
// pglog) apply exactly these, with the same errors and classes, instead of
// a second copy.

// CheckHeader decodes h.Raw (the view fields are not trusted) and checks
// that it can name a new stored session: codec rules, size, and the id
// rule (at most MaxSessionID bytes of UTF-8 without control characters:
// C0 with NUL, DEL, C1). A refusal is ErrInvalid (ErrUnsupported for a
// version other than 0).
func CheckHeader(h codec.SessionHeader) (codec.SessionHeader, error) { return checkHeader(h) }

// CheckEvent re-decodes ev.Raw and checks that it is storable as seq want
// of session: the payload is what gets stored, so its view is rebuilt from
// it. A refusal is ErrInvalid naming session and seq. The returned Event
// aliases ev.Raw.
func CheckEvent(session string, ev *codec.Event, want int64) (codec.Event, error) {
	return checkEvent(session, ev, want)
}

// DecodeStoredEvent decodes the record stored as seq of session, checking
// its frame, CRC, payload and that its seq is seq. Failures are ErrCorrupt
// (ErrUnsupported for a newer record version) naming session and seq.
func DecodeStoredEvent(session string, seq int64, rec []byte) (codec.Event, error) {
	payload, err := codec.Unframe(rec, codec.MaxRecord)
	if err != nil {
		return codec.Event{}, errors.Wrapf(err, "eventlog: session %q seq %d", errors.Safe(session), errors.Safe(seq))
	}
	return decodeStoredEvent(session, seq, payload)
}

// Validate passes ev to v, classifying a refusal as ErrInvalid naming
// session and seq.
func Validate(v Validator, session string, ev *codec.Event) error { return validate(v, session, ev) }

// WithDefaults returns o with its zero values replaced by the defaults
// (DefaultLockTimeout, DefaultValidatorCache, DefaultImportBatch).
func (o Options) WithDefaults() Options { return o.withDefaults() }

// CheckWritable reports ErrNoValidation for options that open a writable
// store with neither NewValidator nor Unvalidated.
func (o Options) CheckWritable() error {
	if !o.ReadOnly && o.NewValidator == nil && !o.Unvalidated {
		return ErrNoValidation
	}
	return nil
}

// Validator returns the validation state of a new session of header h:
// NewValidator's, or one that accepts every event when the store is
// Unvalidated (or read-only, where nothing is appended). A NewValidator
// that returns nil yields one that refuses every event, never a silent
// accept-all.
func (o Options) Validator(h codec.SessionHeader) Validator {
	if o.Unvalidated || o.NewValidator == nil {
		return acceptAll{}
	}
	if v := o.NewValidator(h); v != nil {
		return v
	}
	return refuseAll{}
}

// Replays reports whether a store must rebuild a session's validation
// state by replaying its stored events on a cache miss (false when every
// event is accepted anyway).
func (o Options) Replays() bool { return o.NewValidator != nil && !o.Unvalidated }
