package loop

import "github.com/cockroachdb/errors"

var (
	// ErrDisposed is returned by Send and Inject after Dispose.
	ErrDisposed = errors.New("loop: disposed")
	// ErrInvariant marks a step refused because the request the loop built
	// differs from the log's rebuild of it (SPEC §7 step 9).
	ErrInvariant = errors.New("loop: request differs from the log's rebuild")
	// ErrStructure marks an append the loop refused to write because it
	// would break the turn and step structure of SPEC §3.1 (a loop bug).
	ErrStructure = errors.New("loop: append would break the turn structure")
)
