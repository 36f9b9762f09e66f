// Package powerfstest is the setup every power-cut test repeats: skip
// where powerfs cannot mount (the one-line reason of
// powerfs.Unavailable), make a fresh disk directory and mount point under
// the test's temporary directory, and, for a single mount, unmount it when
// the test ends.
package powerfstest
