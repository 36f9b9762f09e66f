// Command gendict builds the S2 dictionary of codec's compressed records
// (codec/s2.dict) from generated sessions only: loggen's output for fixed
// seeds, never the DSH corpus or any other real data. The dictionary is part
// of the on-disk format once records use it, so this was run once and its
// output committed and frozen (codec's TestDictionaryFrozen pins its hash).
// Building is not bit-for-bit reproducible (two runs differ in a few
// bytes); the program is kept to show where the bytes come from.
//
//	go run ./codec/internal/gendict -o codec/s2.dict
package main
