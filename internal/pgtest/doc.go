// Package pgtest gives tests a PostgreSQL database of their own: the
// server named by $SESSIONLOG_TEST_PG (default
// postgres://postgres@127.0.0.1:5432/test), a schema with a unique name
// created for the test and dropped when it ends, and the URL that selects
// it (search_path). With no server reachable the test skips with one
// line, unless $SESSIONLOG_TEST_PG_REQUIRED=1, under which it fails.
// Lock holds tables locked as another session would, for the tests of
// the store's time bounds. Cluster runs PostgreSQL servers of a test's
// own (a primary, streaming standbys of it) in temporary directories on
// free ports, for the tests of failover and of reads from a standby; it
// needs the server programs (Binaries) and skips without them.
package pgtest
