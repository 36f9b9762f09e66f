// Package header implements the request header of docs/rules.md#header: the canonical
// EpochHeader (Snapshot), the historical request/header-delta codec (Delta),
// and the fold that gives the header in force at any point of a log.
//
// Everything here is a pure function of its inputs: no I/O, no clock, no
// maps whose order could leak into bytes. Apply and Diff return new values
// and never modify their arguments; decoded values are never mutated after
// Decode returns, so snapshots and folds may be shared and copied freely.
//
// # Storage form
//
// A header is read from, and written as, the order-preserving msgpack image
// of its JSON object (docs/format.md#carried-values), the bytes codec.RequestHeader.Header holds:
//
//	{"config":{"provider"?,"model","temperature"?,"maxTokens"?,"stop"?,
//	           "wire"?,"thinking"?,"reasoningEffort"?,…},
//	 "system"?:S, "tools"?:[{name,description,parameters,…}], "messagePrefix"?:[msg,…]}
//
// A delta is the data object of a request/header-delta event (docs/rules.md#deltas):
//
//	{"system"?:{"keepStart":N,"keepEnd":N,"insert":[S,…]},
//	 "tools"?:{"added":[tool,…],"removed":[name,…],"changed":[tool,…]},
//	 "config"?:{…}, "messagePrefix"?:[msg,…]}
//
// Tools and prefix messages are kept as their exact stored bytes (msgpack
// image and JSON text): equality and requests use JSON bytes, and JSON
// Schemas never pass through a Go map.
//
// # Caveats
//
// System-prompt deltas reproduce ECMAScript Array.prototype.slice exactly,
// including the odd results of out-of-range counts that logs written by the
// reference implementation rely on (docs/rules.md#deltas); see Apply.
package header
