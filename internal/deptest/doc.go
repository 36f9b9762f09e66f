// Package deptest is the one implementation of the packages' TestDeps
// (style R28): it reads the imports of a directory's non-test Go files
// and reports banned ones and module dependencies not on the approved
// list. It is test support, imported only by _test.go files.
package deptest
