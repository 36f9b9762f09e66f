// Package atomicfile writes a file so that neither a failed write nor a
// power cut leaves it half-written: through a temporary file in the same
// directory, synced, renamed over the target, and made durable by syncing
// the directory (eventlog.SyncDir). The commands' output files (logtool
// export -o, logbench's BENCHMARKS.md) are written with it.
package atomicfile
