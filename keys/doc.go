// Package keys holds the keys of encryption at rest (docs/forgetting.md#encryption-at-rest): a
// session's data key (DataKey), which seals its header and events through
// codec.Sealer, and the key-encryption keys (KEKs) that wrap the data
// keys, held outside the store by a Provider.
//
// A store created with a Provider gives every session a new DataKey
// (NewDataKey: 256 bits from crypto/rand) and keeps it only wrapped
// (Provider.Wrap), beside the id of the KEK that wrapped it
// (Provider.KeyID). To read a session's content it unwraps the key
// (Provider.Unwrap, which takes that id, so that a key management service
// holding several keys knows which) and opens the session's frames with
// its Sealer.
//
// Providers: KEK is a key held in this process, read from a key file
// (ReadFile: 32 random bytes, mode 0600, the user's own; CreateFile
// writes one) or from an environment variable (FromEnv: the key in
// base64). Its id is derived from its bytes, "kek-" and 16 hex digits,
// so the same key in a file or a variable opens the same store. A key
// management service implements Provider itself (see the example).
//
// Every error about keys is of class ErrKeys (codec.ErrKeys), which the
// standard library's errors.Is recognises too, and names the key id it
// concerns; no error, String, GoString or fmt verb ever shows a key's
// bytes (DataKey prints as "keys.DataKey(redacted)", KEK as its id).
//
// # The envelope (for the stores)
//
// What a store that seals keeps, and where. The codec's package doc says
// how a frame is sealed and why random nonces are safe; this is the rest
// of the contract the store integration follows.
//
//   - The store's meta records, at creation, that the store seals and
//     the id of the KEK new sessions' data keys are wrapped under. A store
//     seals every session or none: opening a plain store with a Provider
//     is refused, so that nobody believes content sealed that is not.
//     Opening a sealing store without one works for what holds no
//     content (below); every read of content is then an error of class
//     ErrKeys naming the KEK id it needs.
//   - Each session has an envelope record beside its head, written in the
//     transaction that writes its header (Create, the staging of Import
//     and Fork) and deleted with the session: the KEK id, the wrapped data
//     key, and the header's fields that hold no content and that ls,
//     stat and lineage need: createdAt, parentSession and seedLength. In
//     PostgreSQL, the same as columns of the session's row. The head is
//     left as it is (rewritten at every append; the envelope only at
//     rotation).
//   - Sealed (codec.SealRecord, codec.SealPack): the header record and
//     every event payload, wherever they are stored: the bbolt tree's
//     packs, the write-ahead log's records (the log holds content too),
//     PostgreSQL's rows. Engine records (meta, head, envelope) stay plain.
//   - Plain, and so readable without the key: session ids, seqs (the
//     keys), record sizes and each pack's count of events, the head (event
//     and turn counts, the last event's time, the chain hash, bytes
//     stored), the envelope's createdAt, parentSession and seedLength.
//     Event types are sealed with their payloads: a type is a string the
//     host chooses (unknown types are data, docs/format.md#event-types) and can hold
//     anything; their sequence and times tell what an agent did; and a
//     copy outside the seal would cost bytes per event against the size
//     target and have to agree with the sealed one. So without the key
//     "counts" are the head's (events, turns: counted at append by the
//     writer, which holds the key), and stat's counts by type need it.
//   - Without the key: ls, the heads, stat's counts, times, chain hash
//     and sizes; verify's structure and CRC checks (every value's frame
//     whole, codec.CheckFrame; keys are seqs in order; each pack's count
//     covers its seqs with no gap or overlap; the last seq is the head's
//     count less one; the engine records decode); salvage, which copies
//     sealed frames and envelopes as they are. Recomputing the chain hash,
//     the rules of docs/rules.md#validation and every step's request need the key.
//   - Chain hashes are over plaintext, as in a plain store (c0 over the
//     header's version 1 record, codec.EncodeRecord, whatever is stored;
//     each link over a payload): a session's chain is the same sealed or
//     not, so copy between a sealing and a plain store, either way,
//     re-seals and checks the same chain. A per-event digest kept for
//     redaction (chain 2, issue 22) confirms a guess of its payload: a
//     sealing store keeps it sealed.
//   - Data keys: one per session, never shared. Fork gives the child a
//     new one and seals the copied events again (fork reads them anyway,
//     to find the turn/end); copy seals under the target's keys. The
//     store keeps a session's Sealer in its per-session cache: one Unwrap
//     per session per Open, never a data key outside a Sealer.
//   - Limit: an append past 2^30 events in a sealed session is refused
//     (the codec's package doc: the 2^32 seals of a key).
//   - Rotation (logtool keys rotate): record the new KEK's id in the meta
//     first, so that new sessions wrap under it; then, a bounded
//     transaction at a time, unwrap each envelope under another id with
//     the old provider, wrap its data key with the new one and rewrite the
//     envelope. Content is never rewritten. Interrupted, it runs again
//     and goes on with the envelopes still under another id; until it
//     ends, readers need a provider that holds both keys.
//   - Deletion removes the envelope with the session: no copy of its data
//     key is left in the store. A backup taken earlier holds the wrapped
//     key still, and opens with the KEK: to forget what backups hold,
//     rotate to a new KEK and destroy the old one.
package keys
