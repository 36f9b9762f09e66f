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
// # Views
//
// DecodeEvent decodes an Event: the envelope, the surface markers, and a
// typed Data view per event type holding only what rebuild, the loop and
// logtool read. Everything else stays in Event.Raw. Views alias the bytes
// they were decoded from: copy a record out of a bbolt transaction first.
//
// # Errors
//
// Errors are marked ErrCorrupt, ErrInvalid or ErrUnsupported (errors.Is).
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
