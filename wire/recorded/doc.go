// Package recorded is the format of the bytes the recording gateway keeps
// (docs/gateway.md#what-is-recorded): the wire/chunk, wire/request and wire/response events. It
// builds their data (for package gateway, which writes them), decodes
// them, reassembles recorded bodies (for logtool replay --wire
// --recorded) and checks a session's (for package verify). It does no I/O
// and knows no store.
//
// Per exchange, in the session:
//
//	wire/chunk     {"digest":HEX,"text":STRING}   one per chunk of the body
//	wire/chunk     {"digest":HEX,"base64":STRING} the session did not hold yet
//	…                                             (base64: not valid UTF-8)
//	wire/request   {"api","method","path","headers":{…},"chunks":[[SEQ,N]…],"size","digest",
//	                "redacted"?:{"spans","size","digest"}}
//	…              (phase 2: the mapped events of the request)
//	wire/chunk …   the answer's bytes, a piece of up to 64 KiB at a time while it streams
//	wire/response  {"request":SEQ,"status","headers":{…},"chunks":[[SEQ,N]…]|null,
//	                "size","digest","streamed","cut"?}
//	…              (phase 2: the mapped events of the answer)
//
// A body is the concatenation of the chunks its record names, in order:
// each [SEQ,N] of chunks (a Run) names the N wire/chunk events from seq
// SEQ on, all before the record. A request's chunks are content-defined
// (package wire/chunk cuts them), so a chunk recorded once serves every
// later body of the session that holds the same bytes; an answer, which
// no later body repeats, is kept in pieces of up to chunk.PieceMax bytes
// (one event per piece, not one per KiB). digest is the SHA-256 of the
// whole body, and every wire/chunk holds its own SHA-256, which Session
// checks against its bytes. Chunks are named by seq rather than by
// digest: a 64-hex digest per ~1 KiB chunk made a growing session's
// chunk lists cost more than the new bytes it stored, while a run costs
// a few bytes however many chunks it names, and a seq is where the store
// finds the event. The events of exchanges that overlap in time may
// interleave, which is why a wire/response names its wire/request by seq
// (a member docs/gateway.md#what-is-recorded does not list; unknown members of these events are
// skipped). A wire/response without a body (chunks null: no answer came
// from the upstream) has size 0 and the digest of no bytes.
//
// Session reads a session's events in order and checks them. A
// wire/request without a wire/response is a warning, not a finding: the
// gateway crashed or stopped before the answer ended (it appends the
// request before it forwards a byte, and the answer's chunks in batches
// while they stream), or the answer is still streaming; the answer's
// chunks recorded so far are then used by no record yet, and are part of
// that warning.
package recorded
