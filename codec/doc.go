// Package codec is the event model of sessionlog: the interchange format
// (DSH session JSONL, SPEC §2), its storage form, and typed views of the
// fields the engine reads.
//
// # Values
//
// A JSON value is stored as its order-preserving msgpack image (SPEC §2.7):
// objects become msgpack maps with the same keys in the same order, arrays
// arrays, strings strings (WTF-8: a lone \udxxx escape is kept as that code
// unit), true/false/null themselves, and numbers become an integer when
// JSON.stringify prints them as one and the value fits an int64, else a
// float64. Integers are written in their shortest msgpack form. FromJSON
// writes this image from JSON text; ToJSON writes JSON text from it,
// following ECMAScript JSON.stringify byte for byte (SPEC §2.2). Because
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
//	       | ver=2  | one zstd frame of    | CRC32C of ver‖   |
//	       | 1 byte | the payload (n bytes)| frame, BE u32    |
//	       +--------+----------------------+------------------+
//
// EncodeRecord writes version 1: header records and the store's engine
// records, whose bytes are fixed (the chain hash starts from the framed
// header record, SPEC §8.2). EncodeEventRecord writes an event's record:
// version 2 when its payload has at least CompressMin (32) bytes and the
// zstd frame is smaller, else version 1. The frame is single-segment,
// declares its content size and the id of the dictionary embedded in this
// package (zstd.dict, DictionaryID; trained on generated sessions only,
// frozen), has no xxhash (the CRC32C covers it), and is written at
// SpeedFastest with literals left raw: the same payload always gives the
// same bytes. CompressMin and zstdLevel give the measurements behind these
// choices: records of 0.361× JSONL for the 100,000-event generated session
// and 0.509× for the DSH corpus, against 0.801× and 0.851× uncompressed.
// DecodeRecord reads both versions: a version 1 payload aliases the record
// (no allocation), a version 2 one is decompressed into a new buffer after
// its declared size is checked against MaxRecord, so a frame that claims a
// huge size, or decodes to more or less than it claims, is ErrCorrupt and
// never an allocation of that size. The chain hash covers payloads, not
// records, so compression changes no chain.
//
// Compression costs time on both sides (logbench, 2026-12-01, load
// average ~9 on 2 cores): decompressing is about as costly as validating,
// so decode is 2.51× faster than encoding/json for a 1 KB assistant/message
// and 1.74× for a 154-byte chunk (3.38× and 3.62× uncompressed), and
// EncodeEventRecord takes ~5 µs for the message, ~2 µs for the chunk
// (the encoder resets its dictionary state on every call).
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
// Scanner applies the crash-tail rule of SPEC §2.3 to whole files; a line
// decoded on its own with ParseEvent knows nothing about its position.
package codec
