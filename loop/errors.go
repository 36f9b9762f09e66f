package loop

import "github.com/cockroachdb/errors"

var (
	// ErrDisposed is returned by Send and Inject after Dispose.
	ErrDisposed = errors.New("loop: disposed")
	// ErrInvariant marks a step refused because the request the loop built
	// differs from the log's rebuild of it (docs/loop.md#steps, step 9).
	ErrInvariant = errors.New("loop: request differs from the log's rebuild")
	// ErrStructure marks an append the loop refused to write because it
	// would break the turn and step structure of docs/rules.md#turns-and-steps (a loop bug).
	ErrStructure = errors.New("loop: append would break the turn structure")
	// ErrStoreTimeout marks a store call that did not answer within
	// Options.StoreTimeout. After a timed-out append the instance is
	// broken: every later call returns this error, and the session is
	// reopened with Open (which closes the turn left open).
	ErrStoreTimeout = errors.New("loop: the store did not answer in time")
	// ErrInTurn is returned by Dispose called from inside the instance's
	// own turn (a tool, the provider, a hook or a contributor, with the
	// context the loop gave it): the turn is told to end disposed, but
	// Dispose cannot wait for the turn it runs in.
	ErrInTurn = errors.New("loop: Dispose called from inside the turn it would wait for")
)
