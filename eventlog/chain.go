package eventlog

import "crypto/sha256"

// chainDomain prefixes the first link of every chain hash (docs/rules.md#chain-hash).
// Part of the format: frozen.
const chainDomain = "sessionlog/chain/1"

// ChainStart returns c0, the chain hash of a session with no events:
// SHA-256("sessionlog/chain/1" ‖ headerRecord), where headerRecord is the
// stored (framed) header record, codec.EncodeRecord(header.Raw).
func ChainStart(headerRecord []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(chainDomain))
	h.Write(headerRecord)
	var c [32]byte
	h.Sum(c[:0])
	return c
}

// ChainNext returns c(N+1) = SHA-256(cN ‖ payload), where payload is the
// msgpack payload of event N (codec.Event.Raw, the record without its
// frame).
func ChainNext(c [32]byte, payload []byte) [32]byte {
	h := sha256.New()
	h.Write(c[:])
	h.Write(payload)
	h.Sum(c[:0])
	return c
}
