// Package boltlog is the bbolt driver of eventlog's Store: Log keeps
// append-only, per-session event logs in one bbolt file (docs/rules.md#store), with
// a write-ahead log beside it while it is open. What every store does
// alike (checks, validation, group commit, staging, the iterator) is the
// shared engine's (eventlog/internal/engine), which Log embeds; this
// package holds the bbolt I/O.
//
// Hosts open a store with sessionlog.Open, which takes a bbolt path or a
// postgres:// URL and wires the default validation. This package's Open
// is the bbolt Log alone: a writable open needs
// eventlog.Options.NewValidator or an explicit Unvalidated, else
// ErrNoValidation.
//
// # On-disk layout
//
// The bucket names, keys and record layouts below are part of the on-disk
// format and frozen; a change needs a new FormatVersion. Their one
// definition is package internal/boltfmt, which salvage reads through too.
//
//	sessions.db                               the bbolt file (the tree)
//	sessions.db-wal/                          the write-ahead log (package wal), while open
//	└── <first lsn, 16 hex digits>.wal        segment files
//
//	root (in the bbolt file)
//	├── meta                                  bucket
//	│   ├── "format"  → engine record {f: FormatVersion}
//	│   └── "wal"     → engine record {a: last applied lsn}   (from the first apply)
//	└── sessions                              bucket
//	    └── <session id>                      bucket, one per session
//	        ├── "header"  → record: msgpack image of the header line
//	        ├── "head"    → engine record {n, t, l, c, b}   (present ⟺ published)
//	        ├── "staging" → 01   (present only while an Import or Fork fills it)
//	        └── events                        bucket, FillPercent 1.0
//	            ├── 00 00 00 00 00 00 00 03 → pack: events seq 0..3
//	            ├── 00 00 00 00 00 00 00 07 → pack: events seq 4..7
//	            └── …   key = seq of the value's last event, 8 bytes
//	                    big-endian; value = pack (or, in stores written
//	                    before format 3, one event's record)
//
// Every value is framed by codec: a version byte, a body, and a CRC32C
// (Castagnoli, big-endian) over both. Header and engine records are
// version 1 (codec.EncodeRecord: the body is the msgpack payload). Events
// are stored in packs (codec.AppendPack, version 3): the payloads of
// consecutive events, up to codec.PackTarget (4 KiB) of them, in one S2
// block with codec's dictionary; the applier and Import fill a session's
// last pack before they start a new one (boltfmt.PutEvents). A pack is keyed by its
// last event's seq, so a seek for any seq lands on the pack that holds it.
// Stores of formats 1 and 2 hold one record per event, under its seq
// (version 1, or 2: an S2 block of the payload); the readers take both,
// and a read-write Open upgrades such a store by its format number alone.
// A program that knows an older format refuses a newer store
// (ErrUnsupported) rather than misread it. New stores have 1 KiB pages
// (boltfmt.PageSize), and Close truncates the file to the pages it
// uses: a closed store is its pages only.
// bbolt checksums only its meta pages, so the record CRC is what detects a
// damaged data page. bbolt trusts the structure of its pages (element
// offsets and sizes, page ids), and reading a damaged one can fault or,
// under the race detector, die of a checkptr fatal error; so Open first
// walks the tree from the file (CheckPages: every page's header, element
// bounds and children against the file's size). Damage above the sessions
// refuses the store (ErrCorrupt); damage inside a session is remembered,
// and the readers stop before it with ErrCorrupt naming the session and
// the first seq on the damaged page. Every value is also checked to lie
// within the store's pages before it is copied. Event and header payloads are the order-preserving
// msgpack images of their JSON (docs/format.md#carried-values; see package codec). Engine
// records are typed msgpack maps with short, permanent tags:
//
//	meta/format   f  int64    store format version (3; 2 before packs, 1 before the log)
//	meta/wal      a  int64    lsn of the last log record the tree holds
//	head          n  int64    next seq = number of events
//	              t  int64    number of turn/start events
//	              l  float64  time of the last event (createdAt if none)
//	              c  bin 32   chain hash (docs/rules.md#chain-hash; ChainStart, ChainNext)
//	              b  int64    sum of the events' record sizes as the log holds them
//
// A store whose format is newer than FormatVersion is refused with
// ErrUnsupported, never misread; a read-write Open upgrades a format 1 or
// 2 store to format 3 in place.
//
// # Writes and durability
//
// Append and Create are atomic and durable when they return nil: the
// events are checked and validated first (codec.DecodeEvent, then the
// session's Validator), and a refused write writes nothing. Then the
// write is appended to the write-ahead log as part of one log record and
// acknowledged once that record's fdatasync has returned: after a crash
// or a power cut, the next Open replays it. Writes to different sessions
// that are in flight together share one record and one fdatasync (group
// commit: the engine's committer, commit.go). Appends to one session are serialised, so a
// second writer sees the first's effect (ErrConflict). A failed log write
// or sync fails its writes and every later one until the store is
// reopened (after a failed fdatasync nobody knows which bytes reached the
// disk; the next Open reads what did, and a write whose caller got an
// error may be there).
//
// The applier (apply.go) copies acknowledged writes into the bbolt tree in
// one fsynced transaction per round, which also records the last applied
// lsn under meta/wal, and then deletes the log segments the tree holds. A
// round runs every WALOptions.ApplyInterval (100 ms), or at once when the
// unapplied writes reach ApplyBytes (8 MiB); writers wait while they
// reach MaxUnapplied (64 MiB), which bounds both the memory they take and
// the log a crashed store replays on Open. Segments are SegmentSize
// (64 MiB) each. Readers never wait for the applier: a read merges the
// unapplied writes, held in memory (tail.go), with the tree. Close applies
// everything and removes the log, so a closed store is one file again.
//
// Open replays the log past meta/wal: a read-write Open applies it before
// it returns (and a read-only Open reads it into memory, writing
// nothing). Only the last record of the log can be torn (a record is
// written after the previous one's fdatasync returned): a bad last record
// is a write that was never acknowledged, and is dropped and reported
// (Log.WALReport, a warning in the log); a bad record anywhere else is
// ErrCorrupt. A flipped byte in the last record cannot be told from a torn
// write; it is reported the same way, never read. Segments are filled
// with zeros ahead of their records (package wal), so a final record that
// damage zeroed whole looks like the unwritten space after it: the one
// loss no check can see.
//
// NoSync skips every fdatasync and fsync, of the log and of the tree: a
// crash of the process loses nothing (the kernel has the bytes), a power
// cut may lose acknowledged writes. For tests and bulk loads.
//
// A read-write Open also fsyncs the store's directory, so the file's name
// is as durable as its bytes (stress's TestPowerCut cuts the power to
// prove both).
// Import and Fork stage a session in several transactions, marked
// "staging", and publish it with the final transaction, which deletes the
// mark and writes the head; a read-write Open removes what a crash left
// staged. A session with neither head nor mark is damage: listed by
// SessionIDs, reported as corrupt, never removed.
//
// # Reads
//
// Scan reads in chunks, one short read transaction each, copying records
// out of the mmap, so memory stays bounded whatever the session's length.
// Records and HeaderRecord give verify and salvage the stored bytes.
//
// # Caveats
//
// Events returned by Scan alias their chunk's buffer: keeping one event
// keeps its chunk alive. Values passed to the callback of Records are
// valid only during the call. Damage that bbolt itself trips on (a zeroed
// or truncated page) is reported as ErrCorrupt, never a crash; a panic
// inside bbolt's own Open leaves its memory map behind, which is
// harmless but not reclaimed until the process exits.
package boltlog
