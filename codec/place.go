package codec

import "github.com/cockroachdb/errors"

// An error passes up through several layers (the codec, the header fold,
// the rebuild fold, the store, a command), and each knows part of where it
// happened. The rule of the engine's error text is that each thing is said
// once: the package that finds the problem names itself at the front of
// its message ("codec: …"), and a layer that passes the error on adds only
// the session and seq it knows and the error does not name yet, without a
// package prefix of its own. So an import refused by the header fold reads
// `import FILE: line 5: session "s": header: request/header-delta at seq 3
// before any request/header snapshot`, not the same place and prefixes
// once per layer. At and AtSeq add the place; NamesSeq and NamesSession
// record that a message names it already.

// Marks recording what an error's message names. They are never printed.
var (
	errNamesSeq     = errors.New("codec: names its seq")
	errNamesSession = errors.New("codec: names its session")
)

// NamesSeq marks err, whose message names the seq it concerns, so that At
// and AtSeq do not name the seq again. A nil err stays nil.
func NamesSeq(err error) error {
	if err == nil {
		return nil
	}
	return errors.Mark(err, errNamesSeq)
}

// NamesSession marks err, whose message names the session it concerns, so
// that At does not name the session again. A nil err stays nil.
func NamesSession(err error) error {
	if err == nil {
		return nil
	}
	return errors.Mark(err, errNamesSession)
}

// AtSeq returns err prefixed with "seq N: ", unless err names a seq
// already. A nil err stays nil; err's class is kept.
func AtSeq(err error, seq int64) error {
	if err == nil || errors.Is(err, errNamesSeq) {
		return err
	}
	return errors.Mark(errors.WrapWithDepthf(1, err, "seq %d", errors.Safe(seq)), errNamesSeq)
}

// At returns err prefixed with the session and seq it concerns
// (`session "ID" seq N: `), leaving out what err names already; seq < 0
// means the seq is not known. A nil err stays nil; err's class is kept.
func At(err error, session string, seq int64) error {
	if err == nil {
		return nil
	}
	withSession := !errors.Is(err, errNamesSession)
	withSeq := seq >= 0 && !errors.Is(err, errNamesSeq)
	switch {
	case withSession && withSeq:
		err = errors.WrapWithDepthf(1, err, "session %q seq %d", errors.Safe(session), errors.Safe(seq))
		return errors.Mark(errors.Mark(err, errNamesSession), errNamesSeq)
	case withSession:
		return errors.Mark(errors.WrapWithDepthf(1, err, "session %q", errors.Safe(session)), errNamesSession)
	case withSeq:
		return errors.Mark(errors.WrapWithDepthf(1, err, "seq %d", errors.Safe(seq)), errNamesSeq)
	}
	return err
}

// KeepPlace returns to carrying the marks of what from names; for a layer
// that hides from behind a barrier (errors.Handled) to reclassify it.
func KeepPlace(from, to error) error {
	if errors.Is(from, errNamesSeq) {
		to = errors.Mark(to, errNamesSeq)
	}
	if errors.Is(from, errNamesSession) {
		to = errors.Mark(to, errNamesSession)
	}
	return to
}
