package compact

import "github.com/cockroachdb/errors"

var (
	// ErrGaveUp is returned by Gate.Run when the estimate is still at or
	// above the threshold after the last attempt. It is not fatal: the
	// request goes out with the history as it stands.
	ErrGaveUp = errors.New("compact: still above the threshold after the last attempt")
	// ErrNotSmaller marks an attempt whose framed summary is not estimated
	// smaller than the nodes it would replace.
	ErrNotSmaller = errors.New("compact: summary not smaller than what it replaces")
	// ErrLogChanged marks an attempt during which the log changed while
	// the summarizer ran.
	ErrLogChanged = errors.New("compact: session log changed during summarization")
)
