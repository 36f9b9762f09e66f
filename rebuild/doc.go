// Package rebuild reconstructs, byte for byte, the request a loop sent at
// any step of a session, from nothing but the session's header line and its
// events (docs/rules.md#the-fold). It reads no clock, no environment and no
// configuration.
//
// Three pieces share one fold:
//
//   - Fold checks every rule that needs the log so far (seq order, the
//     surface and its replaces, the header fold) and keeps the surface and
//     the header in force; a fold that derives messages hands out each
//     surface node's (Message), for a caller to share rather than project
//     again. The store validates appends and imports with it,
//     so a log the store accepts is a log that rebuilds.
//   - Builder folds events one at a time and yields each step's request and
//     digest, in time linear in the log.
//   - Request and Steps rebuild from scratch. They are the reference the
//     Builder is tested against.
//
// A step's history is the derived history (Project) of the surface folded
// over the events strictly before its step/start; its header is the one in
// force at its first chunk, else at its step/end, else at the end of the
// log; a step with no header in force has a null request. The request's
// canonical JSON follows docs/rules.md#the-request key order and docs/format.md#json-text text rules, and its
// SHA-256 is the digest of docs/rules.md#digest.
package rebuild
