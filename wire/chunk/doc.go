// Package chunk cuts a body into content-defined chunks, the unit in
// which the recording gateway stores request and answer bytes (docs/gateway.md#what-is-recorded:
// wire/chunk events, named by their SHA-256).
//
// A session of N growing requests, each re-sending what the one before
// sent, would cost O(N²) bytes stored whole. Cut at fixed offsets, one
// byte inserted early in a body would shift every later chunk; and a
// byte prefix stops at the first change, which Claude Code's moving cache
// marker puts near the start of every request. A content-defined cut
// depends only on the bytes just before it, so chunks after a change fall
// on the same boundaries as before and are stored once per session:
//
//	request 1:  [ a ][  b  ][ c ][   d   ][ e ]
//	request 2:  [ a ][  b  ][ c' ][   d   ][ e ][ f ][ g ]   (c edited, f g new)
//	stored:     a b c d e, then c' f g
//
// # The cut
//
// A gear hash rolls over the body (h = h<<1 + gear[byte], a 64-byte
// window). After Min bytes, a position whose hash has its top 12 bits zero
// ends the chunk; past Avg, 8 bits suffice (FastCDC's normalized
// chunking), and a chunk never exceeds Max. A cut that falls inside a
// UTF-8 character moves back to its first byte, so a chunk of a valid
// UTF-8 body is valid UTF-8 and is stored as text. The gear table comes
// from a fixed seed: the same bytes cut the same way in every process and
// every version, which keeps a session's chunks shared across gateway
// restarts. Boundaries are not part of the format (a body is the
// concatenation of its chunks, whatever they are) and could change
// without a new record version.
//
// Next is allocation-free and runs at memory speed; Split and Digest are
// conveniences over it.
//
// # Answers
//
// Content-defined cuts pay off only for bytes that a later body repeats.
// An answer never is (the next request holds its content re-encoded, not
// its SSE bytes), so Piece cuts an answer at fixed lengths of PieceMax
// (64 KiB), moved back to a character start: one event per piece, which
// the store compresses whole. Measured on the 50-request sessions of
// package gateway's TestGatewayStoredRatio with stream-shaped answers,
// ~1 KiB answer chunks stored 0.108 (Claude Code) and 0.168 (Codex) of
// the bytes sent and answered, one piece per answer 0.058 and 0.058 (the
// chunk lists by seq in both).
package chunk
