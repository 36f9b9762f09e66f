// Package codec is the event model of sessionlog: the interchange format
// (DSH session JSONL, docs/format.md#interchange), its storage form, and typed views of the
// fields the engine reads.
//
// # Values
//
// A JSON value is stored as its order-preserving msgpack image (docs/format.md#carried-values):
// objects become msgpack maps with the same keys in the same order, arrays
// arrays, strings strings (WTF-8: a lone \udxxx escape is kept as that code
// unit), true/false/null themselves, and numbers become an integer when
// JSON.stringify prints them as one and the value fits an int64, else a
// float64. Integers are written in their shortest msgpack form. FromJSON
// writes this image from JSON text; ToJSON writes JSON text from it,
// following ECMAScript JSON.stringify byte for byte (docs/format.md#json-text). Because
// nothing is ever decoded into a Go map, import then export is
// byte-identical for every canonical file, unknown keys and event types
// included.
//
// # Records
//
// Every stored value (an event, a session header line) is framed as a
// record. The layouts are part of the on-disk format and frozen:
//
//	offset 0        1                      n+1                n+5
//	       +--------+----------------------+------------------+
//	       | ver=1  | payload: msgpack     | CRC32C (Castag-  |
//	       | 1 byte | image of the value   | noli) of ver‖    |
//	       |        | (n bytes)            | payload, BE u32  |
//	       +--------+----------------------+------------------+
//	       | ver=2  | one S2 block of the  | CRC32C of ver‖   |
//	       | 1 byte | payload (n bytes)    | block, BE u32    |
//	       +--------+----------------------+------------------+
//	       | ver=3  | a pack: uvarint n,   | CRC32C of ver‖   |
//	       | 1 byte | one S2 block of n ×  | count‖block, BE  |
//	       |        | (uvarint len‖payload)| u32              |
//	       +--------+----------------------+------------------+
//	       | ver=4  | sealed: form (1-3),  | CRC32C of all    |
//	       | 1 byte | a pack's uvarint n,  | before it, BE    |
//	       |        | 12-byte nonce, the   | u32              |
//	       |        | form's body under    |                  |
//	       |        | AES-256-GCM, 16-byte |                  |
//	       |        | tag                  |                  |
//	       +--------+----------------------+------------------+
//
// A pack (AppendPack, DecodePack) holds the payloads of several
// consecutive events, compressed together: the bbolt store keeps events in
// packs of up to PackTarget (4 KiB) before compression (eventlog's
// pack.go). One by one, the DSH corpus's events compress to 0.505× their
// JSONL; packed, to 0.326×: most events are small, and what they repeat is
// in their neighbours. DecodeRecord refuses a pack (ErrCorrupt): a reader
// that finds one where a record was expected reads damage.
//
// EncodeRecord writes version 1: header records and the store's engine
// records, whose bytes are fixed (the chain hash starts from the framed
// header record, docs/rules.md#chain-hash). EncodeEventRecord writes an event's record:
// version 2 when its payload has at least CompressMin (32) bytes and the
// S2 block is smaller, else version 1. The block is S2's block format (a
// uvarint of the decoded length, then literals and copies; no framing, no
// checksum of its own: the CRC32C covers it), written by
// (*s2.Dict).Encode with the dictionary embedded in this package (s2.dict;
// built from generated sessions only, frozen): the same payload always
// gives the same bytes. Records are 0.332× JSONL for the 100,000-event
// generated session and 0.505× for the DSH corpus, against 0.801× and
// 0.851× uncompressed. DecodeRecord reads both versions: a version 1
// payload aliases the record (no allocation), a version 2 one is
// decompressed into a new buffer after its declared length is checked
// against MaxRecord, so a block that claims a huge size, or decodes to
// more or less than it claims, is ErrCorrupt and never an allocation of
// that size. The chain hash covers payloads, not records, so compression
// changes no chain.
//
// Readers of stored payloads call DecodeStoredEvent, which performs every
// check of ValidateValue while it builds the view, in one pass: 1.34 µs
// for the 1 KB assistant/message and 0.26 µs for the chunk, uncompressed,
// against 3.0 µs and 0.69 µs for ValidateValue then DecodeEvent (7.4× and
// 7.7× faster than encoding/json; BenchmarkDecodeVsJSON, 2026-12-01).
// The figures below are of the two passes it replaced.
//
// Compression costs decode 15–20% (logbench, 2026-12-01 17:22 UTC, load
// average 5.8 falling to 3.5 on 2 cores, 9 rounds): decode is 2.53×
// (2.47–2.68) faster than encoding/json for a 1 KB assistant/message and
// 2.54× for a 154-byte chunk; the same build writing only version 1
// records, a minute later, gave 3.24× and 3.11×. Of a message's decode, S2
// takes ~350 ns (the block and its buffer); ValidateValue and DecodeEvent
// take the rest, as for version 1. EncodeEventRecord adds ~1.4 µs to
// encoding the message, ~0.8 µs to the chunk. The zstd frames this format
// version first used (same dictionary size and training data,
// SpeedFastest, literals raw) made records of 0.361× and 0.506× JSONL,
// decoded 2.51× and 1.74× faster than encoding/json and took ~5 µs to
// encode the message: zstd's per-frame setup dominates a 100-byte event.
//
// The JSON key names are the permanent storage tags of events: an event
// record's payload is a map with the keys type, seq, time, data and, on
// surface types, surfaceOp and sourceEventSeqs, in the order they had.
// DecodeRecord checks a record strictly (size cap, CRC, version, msgpack
// kinds, UTF-8, duplicate keys, depth, no trailing bytes); every failure is
// marked ErrCorrupt.
//
// # Sealed records
//
// A store that encrypts its content (docs/forgetting.md#encryption-at-rest) writes version 4
// instead: SealRecord and SealPack seal the body a version 1, 2 or 3
// frame would hold (the payload, its S2 block, a pack's block: sealing
// comes after compression, which finds nothing in sealed bytes) with
// AES-256-GCM under the session's data key (Sealer, made from a key of
// package keys). The form byte says which body is sealed; a pack's count
// stays in the clear, so that the store's structure (which seqs a value
// holds) can be checked without the key (CheckFrame). The plain header —
// version, form, count — is authenticated as the additional data, after
// the domain "sessionlog/sealed/1\x00". The CRC32C covers the sealed
// bytes: a flipped or torn frame is ErrCorrupt before the key is tried,
// and a whole frame that does not open is ErrKeys (a frame altered on
// purpose with its CRC recomputed reads the same as a wrong key). The
// plain readers (DecodeRecord, Unframe, DecodePack) refuse a sealed frame
// as ErrUnsupported; the sealed ones (OpenRecord, OpenPack) refuse a plain
// frame as ErrCorrupt, so that a store whose content is sealed never
// takes plaintext in place of what it sealed. Opening allocates what
// decoding a plain frame does (the payload, or a pack's block); the
// sealed bytes are opened into a pooled buffer.
//
// Nonces are random, 96 bits, drawn for each frame
// (cipher.NewGCMWithRandomNonce). A nonce derived from a position would
// repeat: the store rewrites a session's last pack, under the same key
// and the same key seq, every time it fills it further. NIST SP 800-38D
// (section 8.3) bounds a key used with random nonces to 2^32 seals, which keeps
// the chance that two seals share a nonce (q seals: about q²/2^97) under
// 2^-32. A data key seals one session alone (package keys: forks and
// copies get their own and seal again), so the bound is per session. A
// session's events are sealed at most three times each in the bbolt store
// (once in the write-ahead log; in the tree, each applier round or import
// transaction that reaches the session seals its reopened last pack once
// and each new pack once, and each holds at least one new event), once
// in PostgreSQL; its header once. The store has no limit of its own on a
// session's events (seqs are int64), so a store that seals refuses an
// append past 2^30 events in a session: 3 × 2^30 seals leave 2^30 under
// the bound for rewrites such as redaction (issue 22), and a collision
// chance of about 2^-34 at the limit, ten thousand times the longest
// session the store is measured with. That one, 100,000 events, takes
// some 300,000 seals: a chance near 2^-61.
//
// The additional data names no session and no seq, for three reasons.
// Each payload names its own place, inside the seal: an event's payload
// holds its seq (which the readers check against the key they found it
// under) and a header its session id. A data key is one session's, so a
// frame moved from another session does not open. And frames move: a
// pack's key is its last seq, which changes as it fills; salvage copies
// sealed frames as they are, without the key; a binding to a place would
// have to be recomputed by writers that may not hold the key. What the
// additional data does bind is the domain and the frame's own plain
// header, so that neither can be changed, nor a frame taken for another
// form, without the tag failing.
//
// Sealing adds 29 bytes to a frame (form, nonce, tag). On the DSH corpus
// (164 sessions, 12,540 events), packs and header records as the bbolt
// tree holds them take 1.019× the plain frames' bytes; one record per
// event (the write-ahead log, PostgreSQL's rows), 1.19×.
//
// # Views
//
// DecodeEvent decodes an Event: the envelope, the surface markers, and a
// typed Data view per event type holding only what rebuild, the loop and
// logtool read. Everything else stays in Event.Raw. Views alias the bytes
// they were decoded from: copy a record out of a bbolt transaction first.
//
// # Errors
//
// Errors are marked ErrCorrupt, ErrInvalid or ErrUnsupported (errors.Is),
// or are of class ErrKeys (MarkKeys: recognised by the standard library's
// errors.Is too).
// Their text says each thing once: the package that found the problem
// names itself at the front, and the layers an error passes up through add
// only the session and seq it does not name yet, with At and AtSeq (see
// NamesSeq, NamesSession).
//
// # Caveats
//
// Scanner applies the crash-tail rule of docs/format.md#torn-tails to whole files; a line
// decoded on its own with ParseEvent knows nothing about its position.
package codec
