package wire

import (
	"strconv"
	"strings"

	"github.com/sessionlog/sessionlog/codec"
)

// maxMessage bounds an error message taken from a server's body.
const maxMessage = 1 << 10

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
	if len(e.message) > maxMessage {
		e.message = e.message[:maxMessage] + "…"
	}
	return e
}

// HTTPError maps a non-2xx response to its error (SPEC §12.2, §12.3):
// the code from the status (and, for 400, from what the body says), the
// message from the body's error.message, else "HTTP N". body may be a
// prefix of the response body. It returns nil for a 2xx status.
func (r *Renderer) HTTPError(status int, body []byte) *Error {
	if status >= 200 && status < 300 {
		return nil
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
