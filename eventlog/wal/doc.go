// Package wal is the write-ahead log's file format: a directory of segment
// files holding CRC-framed, chained records, appended and fdatasynced one at
// a time, read back in order, and deleted a segment at a time once applied.
//
// eventlog puts it in front of bbolt: the committer encodes a batch of
// writes as one opaque payload and calls Append, which returns once the
// record is on disk; an applier later writes the batch into bbolt with the
// record's lsn and calls Release; Open replays the records bbolt has not
// applied. The package knows nothing of what a payload means.
//
// # Durability
//
// When Append returns without error, its record is written and
// fdatasynced, and the name of its segment file is durable (a segment's
// directory entry is fsynced when the segment is created, before any record
// in it is written). With Options.NoSync nothing is synced: a record
// survives a crash of the process but not of the machine. After a failed
// write or sync, what is on disk is unknown; every later Append returns
// ErrBroken, and reopening reads back what is there.
//
// # Files
//
// A WAL is a directory of segment files named by the lsn of their first
// record, "%016x.wal" (0000000000000001.wal, ...), so names sort in lsn
// order. Other files in the directory are ignored. Integers are
// little-endian; every crc is CRC-32C (Castagnoli).
//
// The records are content (the prompts and tool results of writes not yet
// applied), so they are the owner's alone, like the store file: Open
// creates the directory 0700 and segments 0600 (a stricter umask makes
// them stricter), and takes the group's and others' permissions off an
// existing directory and its segments. Read changes nothing.
//
// A segment begins with a 32-byte header:
//
//	0         8         12        16                  24        28        32
//	+---------+---------+---------+-------------------+---------+---------+
//	| magic   | version | link    | first lsn         | 0       | crc     |
//	| 8 bytes | u32 = 1 | u32     | u64               | u32     | u32     |
//	+---------+---------+---------+-------------------+---------+---------+
//
// magic is "slogwal\n"; link is the crc of the record before the segment's
// first (0 for the very first record of a WAL); crc covers bytes 0..28. The
// header's first lsn must equal the one the file name states.
//
// Records follow the header back to back:
//
//	0         4         8                   16            16+n      20+n
//	+---------+---------+-------------------+-------------+---------+
//	| length  | link    | lsn               | payload     | crc     |
//	| u32 = n | u32     | u64               | n bytes     | u32     |
//	+---------+---------+-------------------+-------------+---------+
//
// crc covers bytes 0..16+n. A record's link is the crc of the record
// before it (through the segment header's link for a segment's first
// record), so the records form a chain across segments. LSNs start at 1
// (or after the applied lsn given to Open for a new WAL), are consecutive
// across segments, and never repeat. A payload is at most MaxPayload
// (256 MiB) bytes.
//
// A segment holds up to Options.SegmentSize bytes (default 64 MiB). It is
// cut when the next record would not fit; a record larger than a segment
// gets a segment of its own. Ahead of its records a segment is filled with
// zeros (see Preallocation); zeros after the last record are not damage (a
// frame of zeros never has a matching crc).
//
// # Reading: torn tails and damage
//
// A read checks every frame, every lsn and every link, including those of
// records at or below the applied lsn, which it does not hand on. Only the
// last record of the last segment can be torn, since record k+1 is written
// only after record k's fdatasync returned. So a bad frame (crc mismatch,
// impossible length) at offset o of the last segment is a torn tail if and
// only if no intact frame starts at any later offset of that segment: the
// scan goes forward byte by byte, computing a crc only where the length
// fits and the lsn could follow (at least the wanted lsn, at most one more
// per 20 bytes on), so it is about linear; past a budget of crc work
// (crafted bytes) it gives up and calls the segment damaged. A torn tail
// is dropped and reported (Report.TornBytes counts its bytes up to its last
// non-zero byte, Report.TornAt names the file and offset); Open zeros it.
// A last segment shorter than a header, or all zeros, was created but never
// written: it is dropped too, and Open deletes it.
//
// Everything else is ErrCorrupt, naming the segment file and offset: a bad
// frame in any segment but the last, or one followed by an intact frame; a
// frame with a matching crc but the wrong lsn or link (a torn write cannot
// make one); a bad segment header; a gap or repeat of lsns between
// segments; a first segment starting past the applied lsn + 1, or a WAL
// ending before it. The first segment's link is trusted, since the
// segments before it were released.
//
// # Preallocation
//
// Measured on this machine (BenchmarkPrealloc, fdatasync of one 1 KiB
// record into a 64 MiB segment, virtio disk, quiet machine): plain append
// growing the file 291–299 µs, fallocate'd segment 290–329 µs, zero-filled
// segment 212–217 µs. A write into a zero-filled file changes no metadata,
// so fdatasync flushes data only; appending changes the file size, and
// writing into fallocate'd (unwritten) extents converts them, both of which
// make fdatasync commit a journal transaction. So a segment is filled with
// zeros ahead of its records, 4 MiB at a time (never past SegmentSize):
// one Append in ~4,000 of 1 KiB writes 4 MiB of zeros (a few ms), and its
// fdatasync carries the size change; the others write over zeros. Filling
// a whole 64 MiB segment at its cut instead cost 70 ms on the Append that
// cut it, and 64 MiB of disk for even a tiny WAL. A cut itself (header,
// fdatasync, directory fsync) takes about 7 ms (BenchmarkCut, loaded
// machine).
//
// # Bounding
//
// Size reports the bytes of the live segment files (preallocation
// included, at most 4 MiB past a segment's last record). Release deletes
// the segments whose records are all applied, never the one being written,
// so the WAL holds the unapplied records plus at most one segment; the
// caller bounds it by applying and releasing.
//
// # Concurrency
//
// A WAL has one writer: Append and Close are serialized by a mutex, and
// Append syncs each record before returning, so callers that want to
// share a sync batch their writes into one payload. Release (the applier)
// may run beside Append: it holds the mutex only to pick its segments, and
// deletes them and syncs the directory without it. Read and Open
// of the same directory from two processes at once are not coordinated
// here; eventlog's store lock covers them.
package wal
