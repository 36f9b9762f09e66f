//go:build !race

package main

// raceBuild is set when the tests run under the race detector, whose
// shadow memory TestBrokenLongLineMemory allows for.
const raceBuild = false
