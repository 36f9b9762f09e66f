// Package recorded is the format of the bytes the recording gateway keeps
// (SPEC §15.3): the wire/chunk, wire/request and wire/response events. It
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
//	wire/request   {"api","method","path","headers":{…},"chunks":[HEX…],"size","digest"}
//	…              (phase 2: the mapped events of the request)
//	wire/chunk …   the answer's new chunks, appended in batches while it streams
//	wire/response  {"request":SEQ,"status","headers":{…},"chunks":[HEX…]|null,
//	                "size","digest","streamed","cut"?}
//	…              (phase 2: the mapped events of the answer)
//
// A body is the concatenation of the chunks its record names, in order;
// digest is the SHA-256 of the whole body, and every chunk is named by its
// own SHA-256, so a chunk recorded once serves every later body of the
// session that holds the same bytes (package wire/chunk cuts them). The
// events of exchanges that overlap in time may interleave, which is why a
// wire/response names its wire/request by seq (a member SPEC §15.3 does
// not list; unknown members of these events are skipped). A wire/response
// without a body (chunks null: no answer came from the upstream) has size
// 0 and the digest of no bytes.
//
// Session reads a session's events in order and checks them. A
// wire/request without a wire/response is a warning, not a finding: the
// gateway crashed or stopped before the answer ended (it appends the
// request before it forwards a byte, and the answer's chunks in batches
// while they stream), or the answer is still streaming; the answer's
// chunks recorded so far are then used by no record yet, and are part of
// that warning.
package recorded
