// Package salvage copies what still verifies out of a damaged store into a
// new one, and reports what was lost, by session and seq range (docs/cli.md
// salvage). It never writes to the damaged store: it reads it through the
// same read-only API verify uses, and writes only the new store.
//
// # What is kept
//
// A session log is a prefix-closed sequence: an event means nothing
// without the ones before it, so salvage keeps, per session, the longest
// prefix of events whose records
//
//   - pass codec.DecodeRecord (frame, CRC32C, strict payload),
//   - decode as events (codec.DecodeEvent),
//   - sit under the key of their own seq, with no seq missing,
//   - and are accepted by the rebuild fold (rebuild.NewFold), the same
//     rules the store checks appends with,
//
// stopping at the head's event count. The prefix is imported into the new
// store with Store.Import, which checks it again; so everything the new
// store holds verifies. A session whose header record is damaged cannot be
// imported at all and is lost whole; so is one whose bucket cannot be
// read. A damaged head record loses nothing by itself (the events carry
// everything), but then the number of events the session had is not known.
//
// # Reading a damaged store
//
// Copy reads through a Source. boltlog.Log is one, but it gives up more
// than the damage costs: its Open reads every session's bucket, so one
// damaged page of one session makes the whole store unopenable, and its
// Records reads a chunk of records whole or not at all. File reads the
// same frozen layout directly with bbolt, one session and one record at a
// time, and Fallback combines the two: eventlog's reader first, File
// where it fails. Open opens a store that way, as logtool salvage does.
//
// # The write-ahead log
//
// A store a crash left behind may hold acknowledged writes in its
// write-ahead log only. eventlog's reader replays them itself; Open lays
// them over the File too (ReadWAL, WAL.Over): a session the log creates
// is read from the log alone, one it appends to reads the tree below the
// log's first seq for it and the log from there, with the log's newest
// head, and the copy checks them as any records (an append that does not
// continue the tree is a gap, a chain hash that does not continue the
// tree's is a Chain cause). A damaged log makes eventlog refuse the
// store; the File then reads the log up to the damage, and Store.WAL
// names the segment and offset where the writes after it were lost.
//
// # Damage that crashes bbolt
//
// bbolt trusts its data pages: a damaged one can make it panic, or fault
// on a pointer past the end of its memory map. Every read of the source
// runs under recover with runtime/debug.SetPanicOnFault, and a panic is
// reported as damage of what was being read (the session list, a
// session's header, its records), never a crash of the caller.
//
// # Caveats
//
// Records after the first damaged one are not copied even when they
// verify (the report counts them): the log has no meaning past a hole.
// A damaged bbolt meta page: bbolt itself falls back to the other one
// (the store then reads one commit back, which eventlog's CheckMeta
// reports). When both are damaged, File finds the tree from the pages
// themselves (boltfmt.FindTree: the page that looks like the root of a
// store whose tree holds the most events) and reads a temporary copy of
// the file whose meta pages name it; its Notes say which tree was taken,
// and what commits after it wrote, if any, cannot be found.
//
// # Damaged pages
//
// Before bbolt reads a page, boltfmt.CheckPages has checked it (its
// header, its elements' bounds, its children): File stops a session's
// records before the first damaged page, and a session whose own bucket
// is damaged is lost whole, rather than letting bbolt read the damage.
package salvage
