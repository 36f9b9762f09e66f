// Package layout holds the names and records of eventlog's bbolt layout
// (drawn in eventlog's package doc): the bucket names and keys, the event
// key encoding and the engine records' msgpack tags. They are frozen: a
// change needs a new eventlog.FormatVersion. eventlog writes and reads
// through them, and salvage, which reads a damaged store directly with
// bbolt, reads through the same definitions: one layout, one place.
package layout
