package eventlogtest

import "github.com/cockroachdb/errors"

var (
	// ErrRefused is the refusal of NewValidator's validator for an event
	// of type RefuseType.
	ErrRefused = errors.New("eventlogtest: event refused by the test validator")
	// ErrOrder is returned by NewValidator's validator for an event that
	// is not the next in seq order: the Store fed it a wrong sequence
	// (no replay after a cache miss, or state kept after a refusal).
	ErrOrder = errors.New("eventlogtest: validator fed out of order")
)
