// Package permtest is test support for file permissions: Umask sets the
// process's umask for one test, Want checks a path's permission bits. The
// umask is process-wide: a test that sets it must not call t.Parallel
// (top-level tests that do run only after the sequential ones).
package permtest
