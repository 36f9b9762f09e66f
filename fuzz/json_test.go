package fuzz

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

// FuzzJSONLine checks FromJSON, ToJSON and ParseEvent on arbitrary text:
// no panics; a value FromJSON accepts transcodes back; FromJSON(ToJSON(x))
// is the same image (stability); ToJSON output is canonical (it reproduces
// itself); and a parsed event exports to a line that parses to the same
// event.
func FuzzJSONLine(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		mp, err := codec.FromJSON(nil, line, codec.Limits{})
		if err != nil {
			checkClass(t, "FromJSON", err, codec.ErrSyntax, codec.ErrInvalid)
		} else {
			js, n, err := codec.ToJSON(nil, mp)
			if err != nil || n != len(mp) {
				t.Fatalf("ToJSON(FromJSON(%q)) = %v, read %d of %d", line, err, n, len(mp))
			}
			mp2, err := codec.FromJSON(nil, js, codec.Limits{})
			if err != nil {
				t.Fatalf("FromJSON(ToJSON(FromJSON(%q))) = %v; text %q", line, err, js)
			}
			if !bytes.Equal(mp2, mp) {
				t.Fatalf("FromJSON(ToJSON(x)) != x for %q:\n first %x\nsecond %x", line, mp, mp2)
			}
			js2, _, err := codec.ToJSON(nil, mp2)
			if err != nil || !bytes.Equal(js2, js) {
				t.Fatalf("export is not canonical for %q: %q then %q (%v)", line, js, js2, err)
			}
			if bytes.Equal(js, line) && !bytes.Equal(mp2, mp) {
				t.Fatalf("canonical input %q re-encodes differently", line)
			}
			if err := codec.ValidateValue(mp); err != nil {
				t.Fatalf("ValidateValue(FromJSON(%q)) = %v", line, err)
			}
		}

		ev, err := codec.ParseEvent(line, codec.Limits{})
		if err != nil {
			checkClass(t, "ParseEvent", err, codec.ErrSyntax, codec.ErrInvalid)
		} else {
			out, err := ev.AppendJSON(nil)
			if err != nil {
				t.Fatalf("AppendJSON(ParseEvent(%q)) = %v", line, err)
			}
			ev2, err := codec.ParseEvent(out, codec.Limits{})
			if err != nil {
				t.Fatalf("ParseEvent(AppendJSON(ParseEvent(%q))) = %v; line %q", line, err, out)
			}
			if !bytes.Equal(ev2.Raw, ev.Raw) {
				t.Fatalf("event Raw changed through export of %q:\n first %x\nsecond %x", line, ev.Raw, ev2.Raw)
			}
			if !reflect.DeepEqual(ev2, ev) {
				t.Fatalf("event view changed through export of %q:\n first %+v\nsecond %+v", line, ev, ev2)
			}
		}

		if h, err := codec.ParseSessionHeader(line, codec.Limits{}); err != nil {
			checkClass(t, "ParseSessionHeader", err, codec.ErrSyntax, codec.ErrInvalid, codec.ErrUnsupported)
		} else if _, err := h.AppendJSON(nil); err != nil {
			t.Fatalf("SessionHeader.AppendJSON(%q) = %v", line, err)
		}
	})
}
