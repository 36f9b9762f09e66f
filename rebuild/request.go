package rebuild

import (
	"crypto/sha256"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/header"
)

// A request's canonical JSON (docs/rules.md#the-request) is written in three parts:
//
//	head:     {"provider":P,"model":M,"messages":[PREFIX…
//	history:  ,MSG,MSG…   (the derived history, comma-joined)
//	tail:     ],"system":S,"tools":[…],"temperature":T,"maxTokens":N,"stop":[…],"sessionId":ID}
//
// The head depends only on the header's provider, model and prefix; the
// tail on the rest of the header and the session id. While neither the
// head nor the surface is rewritten, each step's request extends the
// previous one's head and history, which is what makes the Builder linear.

// appendHead appends the head of a request under h.
func appendHead(dst []byte, h *header.Snapshot) []byte {
	dst = append(dst, '{')
	if h.Config.HasProvider {
		dst = append(dst, `"provider":`...)
		dst = codec.AppendJSONString(dst, []byte(h.Config.Provider))
		dst = append(dst, ',')
	}
	dst = append(dst, `"model":`...)
	dst = codec.AppendJSONString(dst, []byte(h.Config.Model))
	dst = append(dst, `,"messages":[`...)
	return h.AppendPrefixJSON(dst)
}

// appendTail appends the tail of a request under h for session id.
func appendTail(dst []byte, h *header.Snapshot, id string) []byte {
	dst = append(dst, ']')
	if h.System != "" {
		dst = append(dst, `,"system":`...)
		dst = codec.AppendJSONString(dst, []byte(h.System))
	}
	if len(h.Tools) > 0 {
		dst = append(dst, `,"tools":`...)
		dst = h.AppendToolsJSON(dst)
	}
	c := &h.Config
	if c.HasTemperature {
		dst = append(dst, `,"temperature":`...)
		dst = codec.AppendJSONNumber(dst, c.Temperature)
	}
	if c.HasMaxTokens {
		dst = append(dst, `,"maxTokens":`...)
		dst = codec.AppendJSONInt(dst, c.MaxTokens)
	}
	if c.HasStop {
		dst = append(dst, `,"stop":[`...)
		for i, s := range c.Stop {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = codec.AppendJSONString(dst, []byte(s))
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"sessionId":`...)
	dst = codec.AppendJSONString(dst, []byte(id))
	return append(dst, '}')
}

// AppendRequest appends the canonical JSON of the request made of header h,
// the derived history msgs, and session id (docs/rules.md#the-request).
func AppendRequest(dst []byte, h *header.Snapshot, msgs [][]byte, id string) []byte {
	dst = appendHead(dst, h)
	first := len(h.Prefix) == 0
	for _, m := range msgs {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, m...)
	}
	return appendTail(dst, h, id)
}

// appendRequestNodes is AppendRequest over surface nodes, with dst grown
// once to the request's size.
func appendRequestNodes(dst []byte, h *header.Snapshot, nodes []node, id string) []byte {
	size := 256 + len(h.System) + len(id)
	for _, m := range h.Prefix {
		size += len(m) + 1
	}
	for _, t := range h.Tools {
		size += len(t.JSON) + 1
	}
	for _, n := range nodes {
		size += len(n.msg) + 1
	}
	if cap(dst)-len(dst) < size {
		dst = append(make([]byte, 0, len(dst)+size+size/4), dst...) // headroom: the next request is a little longer
	}
	dst = appendHead(dst, h)
	first := len(h.Prefix) == 0
	for _, n := range nodes {
		if n.msg == nil {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, n.msg...)
	}
	return appendTail(dst, h, id)
}

// Digest is the request digest of docs/rules.md#digest: SHA-256 of the canonical JSON.
func Digest(request []byte) [32]byte { return sha256.Sum256(request) }
