package loop

import (
	"strconv"
	"time"

	"github.com/cockroachdb/errors"
)

// ProviderError is how a provider says why a request failed (docs/loop.md#how-turns-end,
// docs/wire.md): the loop finds it with errors.As in the error Stream or Next
// returns, records Code in turn/end's error reason (its message is
// Message), and hands Code and RetryAfter to the host in the Outcome. An
// error without one is recorded with code "PROVIDER".
//
// The loop never retries: a host that wants to retry a RATE_LIMIT reads
// Outcome.RetryAfter and sends again. Message must not hold user content
// or keys; the providers of this engine put the server's error message
// there, else "HTTP N".
type ProviderError struct {
	// Code is the error's code, e.g. AUTH, RATE_LIMIT, SERVER,
	// CONTEXT_WINDOW_EXCEEDED, STREAM_CLOSED (docs/wire.md#openai-chat).
	Code string
	// Message says what went wrong, for turn/end and for people.
	Message string
	// Status is the HTTP status, when the error came with one (else 0).
	Status int
	// RetryAfter is the server's Retry-After, when it sent one (else 0).
	RetryAfter time.Duration
}

// Error returns "CODE: message", with the HTTP status when known.
func (e *ProviderError) Error() string {
	s := e.Code
	if e.Status != 0 {
		s += " (HTTP " + strconv.Itoa(e.Status) + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// providerError finds the ProviderError in err's chain, if any.
func providerError(err error) (*ProviderError, bool) {
	var pe *ProviderError
	if errors.As(err, &pe) && pe != nil && pe.Code != "" {
		return pe, true
	}
	return nil, false
}
