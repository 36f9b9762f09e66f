package transcript

import (
	"bytes"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
)

// DetectLines is how many leading lines Detect reads at most.
const DetectLines = 64

// Detect tells DSH session JSONL, Codex rollouts, Claude Code transcripts
// and Gemini CLI sessions apart by their first JSON lines (docs/transcripts.md
// auto). It never guesses: every line among the first DetectLines that
// says which format it is must say the same, and at least one must say
// it; a file with no such line, or with lines of two formats, is refused
// with ErrFormat. head is the start of the file (a torn last line in it
// is ignored).
//
//   - DSH: {"type":"session","version":…} (its header line)
//   - Codex: {"timestamp":…,"type":T,"payload":{…}} (every rollout line)
//   - Claude Code: a line with a "uuid" and a "parentUuid" key, of type
//     "summary" with "leafUuid", or with a string "sessionId" and a
//     string "type"
//   - Gemini CLI: its header line {"sessionId","projectHash",…}, a
//     {"$set":{…}} line, or a record of type "gemini" with an "id"
func Detect(head []byte) (Format, error) {
	var mp []byte
	var found Format
	at := 0
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
		f := lineFormat(value(mp))
		if f == "" {
			continue
		}
		if found != "" && f != found {
			return "", formatf("transcript: line %d reads as %s, line %d as %s: not one format",
				errors.Safe(at), errors.Safe(string(found)), errors.Safe(i+1), errors.Safe(string(f)))
		}
		if found == "" {
			found, at = f, i+1
		}
	}
	if found == "" {
		return "", formatf("transcript: not a DSH session file, a Codex rollout, a Claude Code transcript or a Gemini CLI session (no line among the first %d says which)",
			errors.Safe(DetectLines))
	}
	return found, nil
}

// lineFormat is the format one line says its file is, "" when it says
// none.
func lineFormat(v value) Format {
	f := v.fields("type", "version", "payload", "timestamp", "sessionId", "uuid", "parentUuid", "leafUuid", "projectHash")
	typ, hasType := f[0].str()
	switch {
	case v.kind() != codec.KindObject:
		return ""
	case typ == "session" && f[1] != nil:
		return DSH
	case typ != "" && f[2].kind() == codec.KindObject && f[3] != nil:
		return Codex
	case f[4].kind() == codec.KindString && f[8] != nil && !hasType,
		v.members() == 1 && v.get("$set").kind() == codec.KindObject,
		typ == "gemini" && v.get("id").kind() == codec.KindString && f[5] == nil:
		return GeminiCLI
	case f[5] != nil && f[6] != nil,
		typ == "summary" && f[7] != nil,
		f[4].kind() == codec.KindString && hasType && f[8] == nil:
		return ClaudeCode
	}
	return ""
}

// ParseFormat reads a format name as logtool's --format takes it.
func ParseFormat(s string) (Format, bool) {
	switch f := Format(s); f {
	case DSH, Codex, ClaudeCode, GeminiCLI:
		return f, true
	}
	return "", false
}
