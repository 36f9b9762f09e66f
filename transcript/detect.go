package transcript

import (
	"bytes"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
)

// DetectLines is how many leading lines Detect reads at most.
const DetectLines = 64

// Detect tells DSH session JSONL, Codex rollouts and Claude Code
// transcripts apart by their first JSON lines (docs/transcripts.md auto): the first
// line that is decisive wins. head is the start of the file (a torn last
// line in it is ignored). A file with no decisive line among its first
// DetectLines lines is refused with ErrFormat.
//
//   - DSH: {"type":"session","version":…} (its header line)
//   - Codex: {"timestamp":…,"type":T,"payload":{…}} (every rollout line)
//   - Claude Code: a line with "sessionId", or with "uuid" and a
//     "parentUuid" key, or of type "summary" with "leafUuid"
func Detect(head []byte) (Format, error) {
	var mp []byte
	for i := 0; i < DetectLines && len(head) > 0; i++ {
		nl := bytes.IndexByte(head, '\n')
		if nl < 0 {
			break
		}
		line := head[:nl]
		head = head[nl+1:]
		var err error
		mp, err = codec.FromJSON(mp[:0], line, codec.Limits{})
		if err != nil {
			continue
		}
		v := value(mp)
		typ, _ := v.get("type").str()
		switch {
		case typ == "session" && v.get("version") != nil:
			return DSH, nil
		case typ != "" && v.get("payload").kind() == codec.KindObject && v.get("timestamp") != nil:
			return Codex, nil
		case v.get("sessionId").kind() == codec.KindString,
			v.get("uuid") != nil && v.get("parentUuid") != nil,
			typ == "summary" && v.get("leafUuid") != nil:
			return ClaudeCode, nil
		}
	}
	return "", formatf("transcript: not a DSH session file, a Codex rollout or a Claude Code transcript (no line among the first %d says which)",
		errors.Safe(DetectLines))
}

// ParseFormat reads a format name as logtool's --format takes it.
func ParseFormat(s string) (Format, bool) {
	switch f := Format(s); f {
	case DSH, Codex, ClaudeCode:
		return f, true
	}
	return "", false
}
