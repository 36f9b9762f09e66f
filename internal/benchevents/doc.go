// Package benchevents holds the typical events the codec is measured on,
// and the Go structs encoding/json decodes them into for the comparison:
// shared by the codec's benchmarks and cmd/logbench, so both measure the
// same thing.
package benchevents
