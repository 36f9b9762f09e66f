// Package errclass marks errors with a class that errors.Is answers from
// the standard library and from cockroachdb/errors alike.
//
// The packages of this module classify their errors with sentinels
// (eventlog.ErrCorrupt, provider.ErrBaseURL, …) and tell callers to test
// them with errors.Is. cockroachdb/errors' Mark records a class that only
// its own errors.Is sees: the standard library's walks the Unwrap chain
// and finds no sentinel there, so a host that imports "errors" got false
// for every class. Mark here wraps the error in a link whose Is method
// answers the class, which both libraries consult, and which prints
// nothing of its own: the message, the safe details (redaction) and the
// stack traces stay cockroachdb/errors' own.
package errclass
