// Package fuzz holds Go native fuzz targets over sessionlog's exported
// APIs: the codec's JSON lines (FromJSON, ToJSON, ParseEvent), stored
// records (DecodeRecord, DecodeEvent) and whole session files (Scanner),
// and the rebuild of mutated logs. It has no non-test code.
//
// Plain go test runs every checked-in seed under testdata/fuzz/FuzzXxx/ and
// the f.Add seeds as subtests. Fuzz one target at a time:
//
//	go test -run '^$' -fuzz '^FuzzJSONLine$' -fuzztime 60s ./fuzz
//
// A crasher the fuzzer finds is written to testdata/fuzz/FuzzXxx/; keep it
// there as a regression seed once the bug is fixed. The seed files are
// regenerated (from the codec fixtures, the edge-case tables and generated
// logs) with
//
//	go test ./fuzz -run TestGenerateSeeds -gen-seeds
package fuzz
