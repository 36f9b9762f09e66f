package wire

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sessionlog/sessionlog/codec"
)

// MaxMessage bounds the error message a provider keeps from a server
// (Message cuts to it).
const MaxMessage = 1 << 10

// minKeyPrefix is the shortest prefix of a key Message redacts where the
// text ends: a read limit may have cut the key there.
const minKeyPrefix = 8

// Redacted replaces a key in a server's text.
const Redacted = "[redacted]"

// Message makes a server's text fit to store and print: every occurrence
// of key is replaced by Redacted, and so is a prefix of key of 8 bytes or
// more at the text's end (where a read limit cut it); then the text is
// cut to MaxMessage bytes at a character boundary, "…" marking the cut,
// and bytes that are not UTF-8 become U+FFFD. Redacting before cutting
// means no cut leaves part of a key behind, and the result is always
// valid UTF-8 (an event holding it can be appended). An empty key redacts
// nothing.
func Message(text, key string) string {
	if key != "" {
		text = strings.ReplaceAll(text, key, Redacted)
		for n := len(key) - 1; n >= minKeyPrefix; n-- {
			if strings.HasSuffix(text, key[:n]) {
				text = text[:len(text)-n] + Redacted
				break
			}
		}
	}
	cut := len(text) > MaxMessage
	if cut {
		i := MaxMessage
		for k := 1; k < utf8.UTFMax && i > 0 && !utf8.RuneStart(text[i]); k++ {
			i--
		}
		text = text[:i]
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	if cut {
		text += "…"
	}
	return text
}

// CleanReason makes a finish reason a translator gave (JSON text,
// docs/format.md#event-types) fit to store: key is replaced by Redacted wherever it stands, and
// an error's message goes through Message (the key's prefix at its end
// redacted, then the cut). The translators keep a server's message whole,
// so that the cut never comes before the redaction; whoever stores a
// reason cleans it, with the key when it has one. A reason that is not an
// error object comes back with only the key replaced.
func CleanReason(reason []byte, key string) []byte {
	if key != "" {
		reason = []byte(strings.ReplaceAll(string(reason), key, Redacted))
	}
	mp, err := codec.FromJSON(nil, reason, codec.Limits{})
	if err != nil {
		return reason
	}
	var kind, message, code string
	pairs(mp, func(k, v []byte) {
		t := token(v)
		if t.Kind != codec.KindString {
			return
		}
		switch string(k) {
		case "kind":
			kind = string(t.Str)
		case "message":
			message = string(t.Str)
		case "code":
			code = string(t.Str)
		}
	})
	if kind != "error" {
		return reason
	}
	return reasonError(Message(message, key), code)
}

// apiError is the error object of an API's error body or error event.
type apiError struct{ message, typ, code string }

// readAPIError reads {message, type, code} from an error object (stored).
func readAPIError(obj []byte) apiError {
	var e apiError
	_ = eachKey(obj, "error", func(key, val []byte) error {
		t := token(val)
		var s string
		switch t.Kind {
		case codec.KindString:
			s = string(t.Str)
		case codec.KindInt:
			s = strconv.FormatInt(t.Int, 10)
		default:
			return nil
		}
		switch string(key) {
		case "message":
			e.message = s
		case "type":
			e.typ = s
		case "code":
			e.code = s
		}
		return nil
	})
	return e // whole: the provider redacts its key, then cuts (Message)
}

// HTTPError maps a non-2xx response to its error (docs/wire.md#openai-chat, docs/wire.md#anthropic-messages):
// the code from the status (and, for 400, from what the body says), the
// message from the body's error.message, else "HTTP N". body may be a
// prefix of the response body. It returns nil for a 2xx status.
//
// A redirect (3xx) is HTTP_3xx with the message "HTTP N: a redirect,
// not followed" whatever the body says: providers never follow one (the
// key would go to the other host), and its body commonly repeats the
// Location, whose query may hold secrets.
//
// The message is the server's text as sent, which may echo the key and
// be long: a provider passes it through Message before storing it.
func (r *Renderer) HTTPError(status int, body []byte) *Error {
	if status >= 200 && status < 300 {
		return nil
	}
	if status >= 300 && status < 400 {
		return &Error{Code: commonCode(status), Message: "HTTP " + strconv.Itoa(status) + ": a redirect, not followed", Status: status}
	}
	var e apiError
	if mp, err := codec.FromJSON(nil, body, codec.Limits{}); err == nil {
		_ = eachKey(mp, "body", func(key, val []byte) error {
			if string(key) == "error" && token(val).Kind == codec.KindObject {
				e = readAPIError(val)
			}
			return nil
		})
	}
	msg := e.message
	if msg == "" {
		msg = "HTTP " + strconv.Itoa(status)
	}
	return &Error{Code: r.errors(status, e), Message: msg, Status: status}
}

// commonCode is the status mapping both APIs share.
func commonCode(status int) string {
	switch {
	case status == 401 || status == 403:
		return "AUTH"
	case status == 429:
		return "RATE_LIMIT"
	case status >= 500:
		return "SERVER"
	}
	return "HTTP_" + strconv.Itoa(status)
}

// says reports whether any of the error's code, type or message contains
// one of the phrases, ignoring case.
func (e apiError) says(phrases ...string) bool {
	for _, f := range []string{e.code, e.typ, e.message} {
		f = strings.ToLower(f)
		for _, p := range phrases {
			if strings.Contains(f, p) {
				return true
			}
		}
	}
	return false
}

func openAIErrorCode(status int, e apiError) string {
	if status == 400 {
		if e.says("maximum context length", "context_length_exceeded", "too many tokens", "context length") {
			return "CONTEXT_WINDOW_EXCEEDED"
		}
		return "INVALID_REQUEST"
	}
	return commonCode(status)
}

func anthropicErrorCode(status int, e apiError) string {
	switch status {
	case 529:
		return "OVERLOADED"
	case 400:
		if e.says("prompt is too long", "maximum context length", "context_length_exceeded", "too many tokens", "context length") {
			return "CONTEXT_WINDOW_EXCEEDED"
		}
		return "INVALID_REQUEST"
	}
	return commonCode(status)
}
