//go:build race

package codec_test

// raceEnabled: the race detector's build allocates where a normal build
// does not (slices.Grow's append of a made slice, say), so counts of
// allocations are checked without it only.
const raceEnabled = true
