package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/transcript"
)

// transcriptResult compares importing one generated transcript (docs/transcripts.md)
// with reading it line by line with encoding/json.
type transcriptResult struct {
	format transcript.Format
	bytes  int64 // the source file's size
	lines  int
	events int64
	// ours and json are MB/s per round; ratio is json time ÷ ours, per
	// round.
	ours, json, ratio stat
	// stored is the sum of the stored record sizes; file the store file's
	// size after the import.
	stored, file int64
}

// transcriptSize is the size of each generated transcript.
func (c config) transcriptSize() int {
	if c.quick {
		return 1 << 20
	}
	return 10 << 20
}

// measureTranscripts times transcript.Open and its events against
// bufio.Scanner + json.Unmarshal of every line into an any, interleaved,
// on a generated Codex rollout and Claude Code transcript of
// transcriptSize bytes; then imports each once into a store for its size.
func measureTranscripts(ctx context.Context, c config, work string, p progress) ([]transcriptResult, error) {
	var out []transcriptResult
	for _, f := range []transcript.Format{transcript.Codex, transcript.ClaudeCode} {
		data := genTranscript(f, c.transcriptSize())
		res := transcriptResult{format: f, bytes: int64(len(data)), lines: bytes.Count(data, []byte{'\n'})}
		ours := func() error {
			s, err := transcript.Open(bytes.NewReader(data), int64(len(data)), f, transcript.Options{Name: "bench.jsonl"})
			if err != nil {
				return err
			}
			for {
				ev, err := s.Next()
				if err == io.EOF {
					res.events = s.Stats().Events
					return nil
				}
				if err != nil {
					return err
				}
				codecSink += len(ev.Raw)
			}
		}
		std := func() error {
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
			for sc.Scan() {
				var v any
				if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
					return err
				}
				codecSink++
			}
			return sc.Err()
		}
		var so, sj, sr []float64
		for r := range c.rounds {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			o, j, err := timePair(c.verifyMinTime(), c.slice, ours, std)
			if err != nil {
				return nil, errors.Wrapf(err, "%s", errors.Safe(string(f)))
			}
			mb := float64(len(data)) / 1e6
			so, sj, sr = append(so, mb/(o.NsPerOp/1e9)), append(sj, mb/(j.NsPerOp/1e9)), append(sr, j.NsPerOp/o.NsPerOp)
			p.printf("  transcript %s round %d/%d done", f, r+1, c.rounds)
		}
		res.ours, res.json, res.ratio = summarize(so), summarize(sj), summarize(sr)
		if err := storeTranscript(ctx, work, f, data, &res); err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// storeTranscript imports data into a new store and records its sizes.
func storeTranscript(ctx context.Context, work string, f transcript.Format, data []byte, res *transcriptResult) error {
	path := filepath.Join(work, "transcript-"+string(f)+".db")
	st, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: validator}, nil)
	if err != nil {
		return err
	}
	s, err := transcript.Open(bytes.NewReader(data), int64(len(data)), f, transcript.Options{Name: "bench.jsonl"})
	if err == nil {
		_, err = st.Import(ctx, s.Header, s)
	}
	if err == nil {
		var h eventlog.Head
		h, err = st.Head(ctx, s.Header.ID)
		res.stored = h.StoredBytes
	}
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errors.Wrapf(err, "import %s", errors.Safe(string(f)))
	}
	fi, err := os.Stat(path)
	if err != nil {
		return errors.Wrap(err, "store size")
	}
	res.file = fi.Size()
	return os.Remove(path)
}

// genTranscript writes a deterministic transcript of about size bytes:
// turns of a prompt, reasoning, a tool call, its output and an answer,
// with usage, in the shapes the shared corpus shows.
func genTranscript(f transcript.Format, size int) []byte {
	var b bytes.Buffer
	text := func(i, n int) string {
		s := strings.Repeat(fmt.Sprintf("line %d of a tool output, with \"quotes\" and \\ slashes; ", i), n)
		return s
	}
	q := func(s string) string { j, _ := json.Marshal(s); return string(j) }
	ts := func(i int) string { return fmt.Sprintf("2025-06-01T%02d:%02d:%02d.000Z", i/3600%24, i/60%60, i%60) }
	if f == transcript.Codex {
		fmt.Fprintf(&b, `{"timestamp":%q,"type":"session_meta","payload":{"id":"bench-codex","timestamp":%q,"cwd":"/w","base_instructions":{"text":%s}}}`+"\n",
			ts(0), ts(0), q(text(0, 20)))
		fmt.Fprintf(&b, `{"timestamp":%q,"type":"turn_context","payload":{"cwd":"/w","model":"gpt-5"}}`+"\n", ts(0))
		for i := 1; b.Len() < size; i++ {
			t := ts(i)
			fmt.Fprintf(&b, `{"timestamp":%q,"type":"event_msg","payload":{"type":"task_started","turn_id":"t%d"}}`+"\n", t, i)
			fmt.Fprintf(&b, `{"timestamp":%q,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":%s}]}}`+"\n", t, q(text(i, 2)))
			fmt.Fprintf(&b, `{"timestamp":%q,"type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":%s}],"encrypted_content":"%s"}}`+"\n", t, q(text(i, 1)), strings.Repeat("QUJD", 100))
			fmt.Fprintf(&b, `{"timestamp":%q,"type":"response_item","payload":{"type":"function_call","call_id":"c%d","name":"shell","arguments":%s}}`+"\n", t, i, q(`{"command":["ls","-la"]}`))
			fmt.Fprintf(&b, `{"timestamp":%q,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d},"last_token_usage":{"input_tokens":1000,"cached_input_tokens":800,"output_tokens":50}}}}`+"\n", t, 1000*i, 800*i, 50*i)
			fmt.Fprintf(&b, `{"timestamp":%q,"type":"response_item","payload":{"type":"function_call_output","call_id":"c%d","output":%s}}`+"\n", t, i, q(text(i, 30)))
			fmt.Fprintf(&b, `{"timestamp":%q,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":%s}]}}`+"\n", t, q(text(i, 3)))
			fmt.Fprintf(&b, `{"timestamp":%q,"type":"event_msg","payload":{"type":"task_complete","turn_id":"t%d"}}`+"\n", t, i)
		}
		return b.Bytes()
	}
	parent := "null"
	line := func(uuid, rest string) {
		fmt.Fprintf(&b, `{"parentUuid":%s,"isSidechain":false,"sessionId":"bench-claude","cwd":"/w","uuid":%q,%s}`+"\n", parent, uuid, rest)
		parent = q(uuid)
	}
	for i := 1; b.Len() < size; i++ {
		t := ts(i)
		line(fmt.Sprintf("u%d", i), fmt.Sprintf(`"type":"user","timestamp":%q,"message":{"role":"user","content":%s}`, t, q(text(i, 2))))
		usage := `"usage":{"input_tokens":12,"cache_creation_input_tokens":300,"cache_read_input_tokens":9000,"output_tokens":80}`
		line(fmt.Sprintf("a%d", i), fmt.Sprintf(`"type":"assistant","timestamp":%q,"message":{"id":"m%d","role":"assistant","model":"claude-x","content":[{"type":"thinking","thinking":%s,"signature":"%s"}],%s}`, t, i, q(text(i, 1)), strings.Repeat("U0lH", 100), usage))
		line(fmt.Sprintf("b%d", i), fmt.Sprintf(`"type":"assistant","timestamp":%q,"message":{"id":"m%d","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"tu%d","name":"Bash","input":{"command":"ls -la"}}],%s}`, t, i, i, usage))
		line(fmt.Sprintf("r%d", i), fmt.Sprintf(`"type":"user","timestamp":%q,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu%d","content":%s}]}`, t, i, q(text(i, 30))))
		line(fmt.Sprintf("c%d", i), fmt.Sprintf(`"type":"assistant","timestamp":%q,"message":{"id":"n%d","role":"assistant","model":"claude-x","content":[{"type":"text","text":%s}],%s}`, t, i, q(text(i, 3)), usage))
	}
	return b.Bytes()
}

func (r *report) writeTranscripts(b *strings.Builder) {
	if len(r.transcripts) == 0 {
		return
	}
	b.WriteString("## Transcript import\n\n")
	fmt.Fprintf(b, "Importing other agents' transcripts (docs/transcripts.md): `transcript.Open` and every event it yields (both\n"+
		"passes: the header and branch scan, which parses every line once, then the mapping into source/line\n"+
		"and mapped events in storage form, not stored) against reading the same file line by line with\n"+
		"`bufio.Scanner` and `json.Unmarshal` into an `any`, which maps nothing and keeps nothing. The files are\n"+
		"generated: turns of a prompt, reasoning, a tool call, its output and an answer, with usage. Interleaved\n"+
		"as the codec rows, until each side has run %s per round. \"stored\" is the sum of the stored records\n"+
		"after importing the file into a store (no compression yet); \"file\" the store file's size.\n\n", dur(r.cfg.verifyMinTime()))
	t := newTable("format", "source", "lines", "events", "ours MB/s", "encoding/json MB/s", "ours ÷ encoding/json (speed)", "stored ÷ source", "file ÷ source")
	t.align[0] = false
	for _, tr := range r.transcripts {
		t.add(string(tr.format), mib(float64(tr.bytes))+" MiB", group(int64(tr.lines)), group(tr.events),
			num(tr.ours.Median), num(tr.json.Median), ratioRange(tr.ratio),
			ratio(float64(tr.stored)/float64(tr.bytes)), ratio(float64(tr.file)/float64(tr.bytes)))
	}
	t.write(b)
}
