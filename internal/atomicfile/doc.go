// Package atomicfile writes a file so that neither a failed write nor a
// power cut leaves it half-written: through a temporary file in the same
// directory, synced, renamed over the target, and made durable by syncing
// the directory (SyncDir). The commands' output files are written
// with it, each caller naming the permissions of a new file: logtool
// export -o writes session content, ContentPerm (0600 unless the umask is
// stricter); logbench's BENCHMARKS.md holds figures only, 0644 less the
// umask. A file replaced keeps its own permissions.
package atomicfile
