// Package verify checks a stored session end to end (docs/rules.md#verify):
// the records (frame, CRC, key = seq, no gaps), the chain hash and count
// of the head, every rule of the log through the same fold the store
// validates appends with, the turn structure of docs/rules.md#turns-and-steps (warnings unless
// strict), that every step rebuilds, and every recorded request digest,
// including those a fork child inherited, which are checked with the id of
// the session that wrote them; and, in a session the recording gateway
// wrote, that the recorded bytes add up (package wire/recorded: every
// chunk's digest, every body's chunks, size and digest, every chunk used;
// an exchange without an answer is a warning; a request recorded with a
// redactor is checked against its redacted body, and reported as
// Redacted: "digest not checkable (redacted content)", a warning unless
// strict), and, in a lane session
// (its header names the lane's api and root), that the mapped events are
// the mapping of the recorded bytes: package transcript's mapping is
// re-run over every wire/request and wire/response with their seqs and
// times, and the first differing event is a Mapping finding.
//
// Verify reads; it never writes. A session that cannot be rebuilt past a
// damaged record is reported there, and its later records are still
// checked for damage.
package verify
