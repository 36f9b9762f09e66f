package engine

import (
	"unicode/utf8"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/errclass"
)

// The rules every Store applies to what it is handed and what it reads
// back, with the same errors and classes.

// maxPayload bounds an event payload so that its record stays readable
// (codec.DecodeRecord refuses records over codec.MaxRecord).
const maxPayload = codec.MaxRecord - codec.RecordOverhead

// CheckHeader decodes h.Raw (the view fields are not trusted) and checks
// that it can name a new stored session: codec rules, size, and the id
// rule (checkSessionID). A refusal is ErrInvalid (ErrUnsupported for a
// version other than 0).
func CheckHeader(h codec.SessionHeader) (codec.SessionHeader, error) {
	hdr, err := codec.DecodeSessionHeader(h.Raw)
	if err != nil {
		return codec.SessionHeader{}, errors.Wrap(AsInvalid(err), "eventlog: session header")
	}
	if err := codec.ValidateValue(h.Raw); err != nil {
		return codec.SessionHeader{}, errors.Wrap(AsInvalid(err), "eventlog: session header")
	}
	if err := checkSessionID(hdr.ID); err != nil {
		return codec.SessionHeader{}, err
	}
	if len(h.Raw) > maxPayload {
		return codec.SessionHeader{}, Invalidf("eventlog: session header of %d bytes is too large", errors.Safe(len(h.Raw)))
	}
	return hdr, nil
}

// checkSessionID is the rule for the id of a new session, the same in
// every store since Create, Import and Fork of each apply it (through
// CheckHeader): at most MaxSessionID bytes of UTF-8 (never empty: the
// codec refuses that), without control characters: no C0 (NUL included,
// which PostgreSQL's text cannot hold), DEL or C1. An id that breaks it
// is ErrInvalid, and the message quotes it escaped. Ids stored before the
// rule are not checked again: reads, appends and forks from them work.
func checkSessionID(id string) error {
	if len(id) > eventlog.MaxSessionID {
		return Invalidf("eventlog: session id of %d bytes is longer than %d",
			errors.Safe(len(id)), errors.Safe(eventlog.MaxSessionID))
	}
	if !utf8.ValidString(id) {
		return Invalidf("eventlog: session id %q is not valid UTF-8", errors.Safe(id))
	}
	for i, r := range id {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return Invalidf("eventlog: session id %q holds the control character U+%04X at byte %d",
				errors.Safe(id), errors.Safe(r), errors.Safe(i))
		}
	}
	return nil
}

// checkEvent re-decodes ev.Raw (the payload is what gets stored, so its
// view is rebuilt from it) and checks that it is storable and has seq
// want. The returned Event aliases ev.Raw.
func checkEvent(session string, ev *codec.Event, want int64) (codec.Event, error) {
	if ev.Seq != want {
		return codec.Event{}, codec.At(codec.NamesSeq(Invalidf("eventlog: event seq %d where %d was expected",
			errors.Safe(ev.Seq), errors.Safe(want))), session, -1)
	}
	if len(ev.Raw) > maxPayload {
		return codec.Event{}, codec.At(Invalidf("eventlog: event of %d bytes is larger than %d",
			errors.Safe(len(ev.Raw)), errors.Safe(maxPayload)), session, want)
	}
	d, err := codec.DecodeStoredEvent(ev.Raw) // ValidateValue and DecodeEvent, in one pass
	if err != nil {
		return codec.Event{}, codec.At(AsInvalid(err), session, want)
	}
	if d.Seq != want {
		return codec.Event{}, codec.At(codec.NamesSeq(Invalidf("eventlog: event view says seq %d but its payload says %d",
			errors.Safe(want), errors.Safe(d.Seq))), session, -1)
	}
	return d, nil
}

// validate passes ev to v, classifying a refusal as ErrInvalid.
func validate(v eventlog.Validator, session string, ev *codec.Event) error {
	if err := v.Validate(ev); err != nil {
		return codec.At(AsInvalid(err), session, ev.Seq)
	}
	return nil
}

// DecodeEvent decodes the payload of the event stored at seq (its frame
// checked by the driver), checking the payload and that its seq is seq.
// Failures are ErrCorrupt naming session and seq.
func DecodeEvent(session string, seq int64, payload []byte) (codec.Event, error) {
	ev, err := codec.DecodeStoredEvent(payload) // ValidateValue and DecodeEvent, in one pass
	if err != nil {
		return codec.Event{}, errors.Wrapf(AsCorrupt(err), "eventlog: session %q seq %d", errors.Safe(session), errors.Safe(seq))
	}
	if ev.Seq != seq {
		return codec.Event{}, Corruptf("eventlog: session %q: the record under key seq %d holds seq %d",
			errors.Safe(session), errors.Safe(seq), errors.Safe(ev.Seq))
	}
	return ev, nil
}

// Corruptf, Invalidf, Conflictf, NotFoundf and Unsupportedf return an
// error of their class (for the engine and the drivers alike).
//
// Corruptf returns an error marked ErrCorrupt, created one frame up.
func Corruptf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), eventlog.ErrCorrupt)
}

// Invalidf returns an error marked ErrInvalid, created one frame up.
func Invalidf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), eventlog.ErrInvalid)
}

// Conflictf returns an error marked ErrConflict, created one frame up.
func Conflictf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), eventlog.ErrConflict)
}

// NotFoundf returns an error marked ErrNotFound, created one frame up.
func NotFoundf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), eventlog.ErrNotFound)
}

// Unsupportedf returns an error marked ErrUnsupported, created one frame up.
func Unsupportedf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), eventlog.ErrUnsupported)
}

// NotFound is the ErrNotFound error for a session id.
func NotFound(id string) error {
	return codec.NamesSession(errclass.Mark(errors.NewWithDepthf(1, "eventlog: no session %q", errors.Safe(id)), eventlog.ErrNotFound))
}

// AsInvalid reclassifies err, a refusal of bytes or events handed in by a
// caller, as ErrInvalid. A corruption mark (the codec's, for bytes that do
// not decode) is hidden behind a barrier that keeps the message, since the
// bytes are the caller's, not damage on disk; other causes stay visible to
// errors.Is.
func AsInvalid(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, eventlog.ErrCorrupt):
		return codec.KeepPlace(err, errclass.Mark(errors.Handled(err), eventlog.ErrInvalid))
	case errors.IsAny(err, eventlog.ErrInvalid, eventlog.ErrUnsupported):
		return err
	}
	return errclass.Mark(err, eventlog.ErrInvalid)
}

// AsCorrupt reclassifies err, a failure to decode stored bytes, as
// ErrCorrupt: a stored record that breaks a rule is damage. An invalid
// mark is hidden behind a barrier that keeps the message.
func AsCorrupt(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, eventlog.ErrInvalid):
		return codec.KeepPlace(err, errclass.Mark(errors.Handled(err), eventlog.ErrCorrupt))
	case errors.IsAny(err, eventlog.ErrCorrupt, eventlog.ErrUnsupported):
		return err
	}
	return errclass.Mark(err, eventlog.ErrCorrupt)
}
