// Package eventlogtest is the conformance suite of eventlog.Store
// (docs/rules.md#distribution): every implementation, the embedded bbolt Log and any distributed
// one, runs Run from its own tests and must pass it unchanged.
//
// The suite drives the Store through its interface only: create, append
// and scan round trips (byte-equal payloads), head records and their chain
// hash, conflicts, refused appends that change nothing, atomicity, fork
// and import rules, and concurrent writers. Its events are built from JSON
// lines with codec.ParseEvent.
//
// The Store under test must validate with NewValidator (its
// Options.NewValidator or equivalent): that validator refuses events of
// type RefuseType, and refuses any event that does not come in seq order
// from 0, which is how the suite checks that a Store replays a session's
// events into a fresh validator and forgets the state of a refused append.
package eventlogtest
