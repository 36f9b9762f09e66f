package codec_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/corpus"
)

// class names the error class of err, as the tables spell it.
func class(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, codec.ErrCorrupt):
		return "corrupt"
	case errors.Is(err, codec.ErrUnsupported):
		return "unsupported"
	case errors.Is(err, codec.ErrInvalid):
		return "invalid"
	case errors.Is(err, codec.ErrSyntax):
		return "syntax"
	case errors.Is(err, codec.ErrKeys):
		return "keys"
	}
	return "unclassified"
}

// roundTrip runs FromJSON then ToJSON over in and checks that ToJSON read
// the whole image.
func roundTrip(t *testing.T, in string, lim codec.Limits) (mp []byte, out string) {
	t.Helper()
	mp, err := codec.FromJSON(nil, []byte(in), lim)
	if err != nil {
		t.Fatalf("FromJSON(%q) = %v, want success", in, err)
	}
	js, n, err := codec.ToJSON(nil, mp)
	if err != nil {
		t.Fatalf("ToJSON(FromJSON(%q)) = %v, want success", in, err)
	}
	if n != len(mp) {
		t.Fatalf("ToJSON(FromJSON(%q)) read %d bytes, want %d", in, n, len(mp))
	}
	return mp, string(js)
}

// corpusCases lists the case directories of the DSH corpus (package
// corpus: skipped without ../shared, failed when it is there but the
// corpus is not).
func corpusCases(t testing.TB) []string {
	t.Helper()
	return corpus.Cases(t)
}

// readFile reads a test input or fails the test.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lines splits a JSONL text into its newline-terminated lines (without the
// newline); an unterminated last line is returned separately.
func lines(b []byte) (complete [][]byte, rest []byte) {
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return complete, b
		}
		complete = append(complete, b[:i])
		b = b[i+1:]
	}
}

// hexDump writes b as 16 bytes per line of lowercase hex pairs.
func hexDump(b []byte) string {
	var sb strings.Builder
	for i := 0; i < len(b); i += 16 {
		end := min(i+16, len(b))
		for j := i; j < end; j++ {
			if j > i {
				sb.WriteByte(' ')
			}
			sb.WriteString(hex.EncodeToString(b[j : j+1]))
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// parseHex reads hex pairs, ignoring whitespace and '#' comments to the end
// of each line.
func parseHex(s string) ([]byte, error) {
	var digits strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	return hex.DecodeString(digits.String())
}

// describeEvent prints an event's envelope and typed view on one line, for
// table tests and golden files.
func describeEvent(ev codec.Event) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s seq=%d time=%s", ev.Type, ev.Seq, codec.AppendJSONNumber(nil, ev.Time))
	switch ev.Op.Kind {
	case codec.OpAppend:
		sb.WriteString(" op=append")
	case codec.OpReplace:
		fmt.Fprintf(&sb, " op=replace(%d,%d)", ev.Op.Start, ev.Op.End)
	}
	if ev.HasSources {
		fmt.Fprintf(&sb, " sources=%v", ev.Sources)
	}
	sb.WriteString(" ")
	sb.WriteString(describeData(ev.Data))
	return sb.String()
}

// describeData prints a typed view; byte fields print as JSON.
func describeData(d codec.Data) string {
	switch d := d.(type) {
	case *codec.TurnStart:
		return fmt.Sprintf("TurnStart{turn=%d}", d.Turn)
	case *codec.TurnEnd:
		return fmt.Sprintf("TurnEnd{turn=%d reason=%q}", d.Turn, d.Reason)
	case *codec.StepStart:
		return fmt.Sprintf("StepStart{turn=%d step=%d}", d.Turn, d.Step)
	case *codec.StepEnd:
		return fmt.Sprintf("StepEnd{turn=%d step=%d}", d.Turn, d.Step)
	case *codec.UserMessage:
		return fmt.Sprintf("UserMessage{source=%s content=%s}", describeSource(d.Source), describeContent(d.Content))
	case *codec.PromptBlocked:
		return fmt.Sprintf("PromptBlocked{source=%s content=%s}", describeSource(d.Source), describeContent(d.Content))
	case *codec.ContextMessage:
		return fmt.Sprintf("ContextMessage{source=%s envelope=%q content=%s}", describeSource(d.Source), d.Envelope, describeContent(d.Content))
	case *codec.SteeringMessage:
		return fmt.Sprintf("SteeringMessage{turn=%d source=%s content=%s}", d.Turn, describeSource(d.Source), describeContent(d.Content))
	case *codec.AssistantChunk:
		return fmt.Sprintf("AssistantChunk{turn=%d step=%d kind=%q text=%q}", d.Turn, d.Step, d.Kind, d.Text)
	case *codec.AssistantMessage:
		return fmt.Sprintf("AssistantMessage{turn=%d step=%d provenance=%s content=%s}", d.Turn, d.Step, rawJSON(d.Provenance), describeContent(d.Content))
	case *codec.ToolCall:
		return fmt.Sprintf("ToolCall{turn=%d step=%d callId=%q name=%q arguments=%q}", d.Turn, d.Step, d.CallID, d.Name, d.Arguments)
	case *codec.ToolResult:
		return fmt.Sprintf("ToolResult{turn=%d step=%d callId=%q isError=%v content=%s}", d.Turn, d.Step, d.CallID, d.IsError, describeContent(d.Content))
	case *codec.RequestHeader:
		return fmt.Sprintf("RequestHeader{reason=%q header=%s}", d.Reason, rawJSON(d.Header))
	case *codec.HeaderDelta:
		return fmt.Sprintf("HeaderDelta{%s}", rawJSON(d.Raw))
	case *codec.RequestDigest:
		return fmt.Sprintf("RequestDigest{turn=%d step=%d sha256=%s}", d.Turn, d.Step, d.SHA256)
	case *codec.CompactStart:
		return fmt.Sprintf("CompactStart{turn=%d}", d.Turn)
	case *codec.CompactSummary:
		return fmt.Sprintf("CompactSummary{summary=%s}", describeContent(d.Summary))
	case *codec.CompactEnd:
		return fmt.Sprintf("CompactEnd{turn=%d error=%v}", d.Turn, d.HasError)
	case *codec.Opaque:
		return "Opaque{}"
	case nil:
		return "<nil>"
	}
	return fmt.Sprintf("unknown view %T", d)
}

func describeSource(s codec.Source) string {
	if s.Plugin != "" {
		return s.Kind + ":" + s.Plugin
	}
	return s.Kind
}

func describeContent(c codec.Content) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for i, b := range c.Blocks {
		if i > 0 {
			sb.WriteByte(' ')
		}
		switch b.Type {
		case codec.BlockText, codec.BlockReasoning:
			fmt.Fprintf(&sb, "%s(%q)", b.Type, b.Text)
		case codec.BlockToolCall:
			fmt.Fprintf(&sb, "tool-call(%q,%q,%q)", b.ID, b.Name, b.Arguments)
		case codec.BlockToolResult:
			fmt.Fprintf(&sb, "tool-result(%q,error=%v,%s)", b.ToolCallID, b.IsError, describeContent(b.Inner))
		default:
			fmt.Fprintf(&sb, "opaque%s", rawJSON(b.Raw))
		}
	}
	sb.WriteByte(']')
	return sb.String()
}

// rawJSON prints a stored value as JSON, "-" when absent.
func rawJSON(mp []byte) string {
	if mp == nil {
		return "-"
	}
	js, _, err := codec.ToJSON(nil, mp)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(js)
}
