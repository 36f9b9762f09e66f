// Package boltfmt is the one home of the bbolt store's on-disk format,
// for the bbolt driver (eventlog/boltlog) and for salvage, which reads a
// damaged store directly: the bucket names and keys, the event key
// encoding, the engine records and their msgpack tags, the write-ahead
// log's entry codec, the values of an events bucket (packs and single
// records) and the one walk over them, the bounds check before a value
// leaves the memory map, bbolt's page and meta page checks, and the
// finder of a tree whose meta pages are both damaged.
//
// It is internal, as bbolt's own internal/common and internal/surgeon
// are: the format is frozen (a change needs a new FormatVersion) and is
// drawn in package boltlog's doc, but none of this is API for a host.
// Errors are marked with codec's classes, which eventlog's are.
package boltfmt
