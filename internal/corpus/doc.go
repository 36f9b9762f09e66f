// Package corpus locates the DSH corpus for the corpus tests of every
// package: the project's shared test data, ../shared beside the
// repository (shared/testdata/dsh/cases, one directory per case holding its
// session.jsonl, listed in INDEX.tsv; see its ORIGIN.md). It is test
// support, imported only by _test.go files.
//
// A user's clone has no ../shared: then Cases skips the test, and the
// process says so once on stderr. When ../shared is there, the corpus must
// be too, laid out as described: an empty or moved corpus, or an INDEX.tsv
// naming a case that is not there, fails the test instead of letting it
// pass on nothing.
package corpus
