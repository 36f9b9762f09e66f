// Package loggen generates random, valid session logs in the interchange
// format, deterministically from a seed: the input of the rebuild
// property tests, the fuzz targets and the benchmarks.
package loggen
