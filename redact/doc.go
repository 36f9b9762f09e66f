// Package redact finds secrets and other unwanted text inside the string
// values of events and JSON documents and replaces each span with
// "[REDACTED]" (docs/forgetting.md#redaction), changing nothing else: no key, number,
// boolean, null or nesting, and no byte outside the spans it replaces.
//
// A Redactor applies Matchers: the ready ones for common secrets
// (SecretMatchers, Secrets: provider API keys, bearer tokens, AWS keys,
// private key blocks, JWTs), regular expressions (Regexp), or any type
// that finds spans in a string. Its methods take the forms a value has
// in this module:
//
//	Text   one string
//	Value  a stored value (msgpack, the storage form of docs/format.md#carried-values)
//	Event  an event's payload: the string values of its data
//	JSON   a JSON text, byte for byte outside the spans (a recorded body)
//
// Each returns the count of spans replaced (its input itself when that
// is 0, without allocating) and never the text matched: what a matcher
// found is not returned, logged or put in an error. Values under keys
// that name the schema (type, kind, role, the ids that pair calls and
// results, digests; see Structural) are never redacted, so a redacted
// event keeps its meaning; Event checks that the event still decodes.
//
// The result is a fixed point: Marker text is never matched, and what a
// replacement leaves is matched again until nothing matches, so
// redacting twice is redacting once and the count is exactly the number
// of markers added. Spans are widened to whole characters.
//
// The loop redacts user content and tool results with one before it
// logs them (loop.Options.Redactor), so the model sees what the log
// holds; the recording gateway redacts the bodies it records
// (gateway.Options.Redactor) and forwards the bytes it was sent.
//
// Speed: every ready matcher, and every Regexp that begins with a
// literal, has anchors (sk-, AIza, ghp_, AKIA, BEGIN, password=, …). A
// gate compares the first six bytes of each anchor at every pair of
// bytes that could begin one, in one pass over a value (tables of 6×256
// bits): a value that holds no anchor is returned without being walked,
// and a string that holds none of a matcher's is not given to it; the
// matchers then find their literals with bytes.Index. Strings shorter
// than the shortest match are not looked at. Over the 12,540 events of
// the DSH corpus (3.1 MB stored), Event with the ready matchers ran at
// 600–800 MB/s of CPU time, a third of the time decoding the same
// events takes; a --match pattern with a literal at 170–940 MB/s, one
// without (\b[A-Z0-9]{20}\b, every string through package regexp) at
// 35–50 MB/s (logbench -only redact, 2026-12-02, load average 10 on 2
// cores).
package redact
