package eventlog

// SetTestHooks installs the committer's test hooks; call it right after
// Open, before the Log is used.
func SetTestHooks(l *Log, batch func(n int), write func(session string) error) {
	l.hookBatch, l.hookWrite = batch, write
}

// QueueLen is the number of requests waiting for the committer.
func QueueLen(l *Log) int { return len(l.queue) }

// CachedStates is the number of session states in the validator cache.
func CachedStates(l *Log) int { return l.cache.len() }
