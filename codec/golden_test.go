package codec_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/sessionlog/sessionlog/codec"
)

// TestGolden replays testdata/golden: the frozen bytes of every event kind
// (docs/rules.md#store, style R22). Regenerate with
//
//	go test ./codec -run TestGolden -rewrite
//
// and review the diff: a change to an existing record's bytes is a format
// change.
//
// Commands:
//
//	encode            input: one JSON line. Output: the record, annotated.
//	                  Also checks that the record decodes back to the line.
//	decode [fixcrc] [noncanonical]
//	                  input: hex (whitespace and # comments ignored); fixcrc
//	                  rewrites the last 4 bytes with the right CRC first.
//	                  Output: the JSON text and the typed view, or err: …
//	                  Checks the round trip ToJSON → FromJSON → EncodeRecord
//	                  gives the input back (noncanonical: prints the
//	                  canonical re-encoding instead).
func TestGolden(t *testing.T) {
	datadriven.RunTest(t, "testdata/golden", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "encode":
			return goldenEncode(t, d)
		case "decode":
			return goldenDecode(t, d)
		}
		d.Fatalf(t, "unknown command %s", d.Cmd)
		return ""
	})
}

func goldenEncode(t *testing.T, d *datadriven.TestData) string {
	line := strings.TrimSpace(d.Input)
	raw, err := codec.FromJSON(nil, []byte(line), codec.Limits{})
	if err != nil {
		return fmt.Sprintf("err: %s: %v\n", class(err), err)
	}
	rec := codec.EncodeRecord(nil, raw)
	payload, err := codec.DecodeRecord(rec)
	if err != nil {
		d.Fatalf(t, "DecodeRecord(EncodeRecord(%s)) = %v", line, err)
	}
	back, _, err := codec.ToJSON(nil, payload)
	if err != nil || string(back) != line {
		d.Fatalf(t, "ToJSON(DecodeRecord(EncodeRecord(%s))) = %s, %v", line, back, err)
	}
	return annotate(rec)
}

func goldenDecode(t *testing.T, d *datadriven.TestData) string {
	rec, err := parseHex(d.Input)
	if err != nil {
		d.Fatalf(t, "bad hex: %v", err)
	}
	if d.HasArg("fixcrc") {
		if len(rec) < 4 {
			d.Fatalf(t, "fixcrc needs at least 4 bytes")
		}
		body := rec[:len(rec)-4]
		binary.BigEndian.PutUint32(rec[len(rec)-4:], crc32.Checksum(body, castagnoli))
	}
	payload, err := codec.DecodeRecord(rec)
	if err != nil {
		return fmt.Sprintf("err: %s: %v\n", class(err), err)
	}
	js, n, err := codec.ToJSON(nil, payload)
	if err != nil || n != len(payload) {
		d.Fatalf(t, "ToJSON of a decoded record = %v (read %d of %d)", err, n, len(payload))
	}
	var sb strings.Builder
	sb.Write(js)
	sb.WriteByte('\n')
	if hasTypeKey(payload) {
		sb.WriteString(view(payload))
		sb.WriteByte('\n')
	}

	// Round trip: the JSON text stores to the same record.
	again, err := codec.FromJSON(nil, js, codec.Limits{})
	if err != nil {
		d.Fatalf(t, "FromJSON(ToJSON(record)) = %v", err)
	}
	rec2 := codec.EncodeRecord(nil, again)
	switch {
	case d.HasArg("noncanonical"):
		if bytes.Equal(rec2, rec) {
			d.Fatalf(t, "record is canonical; drop the noncanonical argument")
		}
		sb.WriteString("canonical re-encoding:\n")
		sb.WriteString(annotate(rec2))
	case !bytes.Equal(rec2, rec):
		d.Fatalf(t, "round trip changed the record:\n got %x\nwant %x", rec2, rec)
	}
	return sb.String()
}

// view decodes the typed view of a stored payload: a session header when
// its type is "session", else an event.
func view(payload []byte) string {
	if isSessionHeader(payload) {
		h, err := codec.DecodeSessionHeader(payload)
		if err != nil {
			return fmt.Sprintf("view err: %s: %v", class(err), err)
		}
		return fmt.Sprintf("view: session id=%q createdAt=%s cwd=%q parent=%q seedLength=%d",
			h.ID, codec.AppendJSONNumber(nil, h.CreatedAt), h.Cwd, h.ParentSession, h.SeedLength)
	}
	ev, err := codec.DecodeEvent(payload)
	if err != nil {
		return fmt.Sprintf("view err: %s: %v", class(err), err)
	}
	return "view: " + describeEvent(ev)
}

// hasTypeKey reports whether payload is a map with a "type" key: an event
// or a session header, which get a typed view.
func hasTypeKey(payload []byte) bool {
	r := codec.NewReader(payload)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindObject {
		return false
	}
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return false
		}
		if string(k.Str) == "type" {
			return true
		}
		if r.Skip(1024) != nil {
			return false
		}
	}
	return false
}

func isSessionHeader(payload []byte) bool {
	js, _, err := codec.ToJSON(nil, payload)
	return err == nil && bytes.HasPrefix(js, []byte(`{"type":"session"`))
}

// annotate writes a record as hex, one msgpack item per line (long strings
// 16 bytes per line), each with a # comment naming it, indented by depth.
func annotate(rec []byte) string {
	var sb strings.Builder
	emit := func(b []byte, comment string) {
		for i := 0; i < len(b); i += 16 {
			chunk := b[i:min(i+16, len(b))]
			h := strings.TrimSpace(hexDump(chunk))
			if i == 0 {
				fmt.Fprintf(&sb, "%-48s # %s\n", h, comment)
			} else {
				sb.WriteString(h)
				sb.WriteByte('\n')
			}
		}
	}
	if len(rec) < 5 {
		emit(rec, "short record")
		return sb.String()
	}
	emit(rec[:1], fmt.Sprintf("format version %d", rec[0]))
	payload := rec[1 : len(rec)-4]
	r := codec.NewReader(payload)
	// pending counts the items left in each open container; keys marks
	// map key positions.
	type level struct {
		left  int
		isMap bool
		key   bool
	}
	var stack []level
	for r.Len() > 0 {
		start := r.Offset()
		tok, err := r.Next()
		if err != nil {
			emit(payload[start:], "malformed: "+err.Error())
			break
		}
		indent := strings.Repeat("  ", len(stack))
		isKey := false
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			isKey = top.isMap && top.key
			top.key = !top.key
			top.left--
		}
		var c string
		switch tok.Kind {
		case codec.KindNull:
			c = "null"
		case codec.KindBool:
			c = fmt.Sprint(tok.Bool)
		case codec.KindInt:
			c = fmt.Sprintf("int %d", tok.Int)
		case codec.KindFloat:
			c = "float64 " + string(codec.AppendJSONNumber(nil, tok.Float))
		case codec.KindString:
			s := codec.AppendJSONString(nil, tok.Str)
			if len(s) > 50 {
				s = append(s[:47:47], "…"...)
			}
			if isKey {
				c = "key " + string(s)
			} else {
				c = fmt.Sprintf("string(%d) %s", len(tok.Str), s)
			}
		case codec.KindArray:
			c = fmt.Sprintf("array(%d)", tok.N)
		case codec.KindObject:
			c = fmt.Sprintf("map(%d)", tok.N)
		}
		emit(payload[start:r.Offset()], indent+c)
		switch {
		case tok.Kind == codec.KindArray && tok.N > 0:
			stack = append(stack, level{left: tok.N})
		case tok.Kind == codec.KindObject && tok.N > 0:
			stack = append(stack, level{left: 2 * tok.N, isMap: true, key: true})
		}
		for len(stack) > 0 && stack[len(stack)-1].left == 0 {
			stack = stack[:len(stack)-1]
		}
	}
	crc := rec[len(rec)-4:]
	emit(crc, "crc32c "+hex.EncodeToString(crc))
	return sb.String()
}
