// Package powerfs is a FUSE filesystem for tests that forgets what was
// never synced: a loopback over a real directory (the "disk") that passes
// every operation through, so the processes on the mount read, write and
// map the real files, while it records what a power cut would lose. Cut
// then unmounts it and rolls the directory back to what was durable, in one
// of three modes. Only tests import it (stress's power-loss proofs,
// atomicfile's power-cut test, its own); it needs root and /dev/fuse, and
// mounts with mount(2) directly, no fusermount.
//
// # What is durable
//
// A file's data and size become durable on fsync or fdatasync of that file
// (through any descriptor). A name (create, mknod, link, symlink, unlink,
// rename, in either directory) becomes durable on fsync of its directory.
// Until then, for every file written it keeps, per 512-byte sector first
// touched since the file's last sync, the sector's durable bytes (zeros
// past the durable size), and the list of writes and truncations in order;
// for every directory whose names changed since its last sync, the
// non-directory entries it had at its last sync (name → inode). A file whose
// durable name is removed or replaced, and every file written, is held by
// a hard link in a scratch directory beside the disk (Options.Scratch), so
// a cut can give a lost name its old inode back.
//
// Directories themselves (mkdir, rmdir, renaming a directory) are durable
// at once; the stores under test create none. Extended attributes, modes
// and times are passed through and not rolled back.
//
// # Cut modes
//
// After the writer is killed, Cut unmounts and then, on the disk:
//
//   - Drop: every unsynced write and truncation is lost: each file gets its
//     durable bytes and size back.
//   - Tear: each unsynced 512-byte sector independently survives or not
//     (a coin per sector), and the size is the durable one or the last one
//     (a coin per file); a sector never mixes bytes of both.
//   - Reorder: a random suffix of each file's unsynced writes survives and
//     the writes before it are lost, so a later write can outlive an
//     earlier one; the size is what the surviving suffix leaves.
//
// In every mode each directory then gets exactly its durable names back:
// unsynced new names are removed, lost names relinked to their old inodes.
// A Report counts what was lost and kept, so a test can assert a cut did
// real work.
//
// # The page cache
//
// The mount keeps the kernel's page cache on (no direct I/O, no writeback
// cache): writes go through to this process at once, in order, and update
// the cached pages a writer's shared read-only mmap sees, as bbolt needs;
// kernel passthrough is refused, since it would bypass the recording. A
// cut happens with the filesystem unmounted, so no stale page survives it.
//
// The process serving the mount must not itself touch files on it through
// mmap (a page fault served by its own stopped goroutines can deadlock the
// Go runtime): the writer under test is another process, and the serving
// process reads the disk directly after a cut.
//
// What is not simulated: the disk's own volatile cache (fsync is taken as
// reaching the platter), and bit rot on synced data (the corruption sweep
// of stress covers damage to durable bytes).
package powerfs
