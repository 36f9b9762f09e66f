// Package bolttest holds test helpers that rewrite a closed bbolt store
// in the layouts of older formats, for the tests of the bbolt driver,
// salvage and logtool: the conformance suite (eventlogtest) knows no
// backend's layout.
package bolttest
