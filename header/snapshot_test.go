package header

import (
	"bytes"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
)

func toJSON(t *testing.T, mp []byte) string {
	t.Helper()
	out, n, err := codec.ToJSON(nil, mp)
	if err != nil || n != len(mp) {
		t.Fatalf("ToJSON = %d bytes of %d, %v", n, len(mp), err)
	}
	return string(out)
}

func TestConfigAppendMsgpack(t *testing.T) {
	stored := mustDecode(t, `{"config":{"x":1,"model":"m","provider":"p","y":[2,{"b":null}]}}`).Config
	tests := []struct {
		name string
		edit func(c *Config)
		want string
	}{
		{
			name: "unchanged config is written verbatim",
			edit: func(*Config) {},
			want: `{"x":1,"model":"m","provider":"p","y":[2,{"b":null}]}`,
		},
		{
			name: "changed field: DSH order, then unknown keys in stored order",
			edit: func(c *Config) { c.Model = "n" },
			want: `{"provider":"p","model":"n","x":1,"y":[2,{"b":null}]}`,
		},
		{
			name: "added fields",
			edit: func(c *Config) {
				c.Temperature, c.HasTemperature = 0, true
				c.MaxTokens, c.HasMaxTokens = 8, true
				c.HasStop = true
			},
			want: `{"provider":"p","model":"m","temperature":0,"maxTokens":8,"stop":[],"x":1,"y":[2,{"b":null}]}`,
		},
		{
			name: "dropped provider",
			edit: func(c *Config) { c.HasProvider = false },
			want: `{"model":"m","x":1,"y":[2,{"b":null}]}`,
		},
		{
			name: "config built in code",
			edit: func(c *Config) {
				*c = Config{Model: "m", Provider: "p", HasProvider: true, Temperature: 0.25, HasTemperature: true,
					Stop: []string{"a"}, HasStop: true}
			},
			want: `{"provider":"p","model":"m","temperature":0.25,"stop":["a"]}`,
		},
		{
			name: "fractional temperature that prints as an integer",
			edit: func(c *Config) { *c = Config{Model: "m", Temperature: 2, HasTemperature: true} },
			want: `{"model":"m","temperature":2}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := stored
			tt.edit(&c)
			enc := c.AppendMsgpack(nil)
			if got := toJSON(t, enc); got != tt.want {
				t.Fatalf("AppendMsgpack = %s, want %s", got, tt.want)
			}
			back, err := parseConfig(enc, "config")
			if err != nil {
				t.Fatalf("parseConfig(AppendMsgpack) = %v", err)
			}
			if !back.Equal(c) {
				t.Fatalf("parseConfig(AppendMsgpack) = %+v, want %+v", back, c)
			}
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		message bool
		want    string // canonical JSON, or "" for an error
		class   error
	}{
		{name: "tool", text: `{ "name" : "t", "parameters" : {"b":1,"a":2} }`, want: `{"name":"t","parameters":{"b":1,"a":2}}`},
		{name: "tool without name", text: `{"description":"d"}`, class: ErrInvalid},
		{name: "tool not JSON", text: `{"name":`, class: codec.ErrSyntax},
		{name: "tool duplicate key", text: `{"name":"a","name":"b"}`, class: ErrInvalid},
		{name: "message", message: true, text: `{"role":"user","content":[{"type":"text","text":"<a&b>"}],"x":1.50}`,
			want: `{"role":"user","content":[{"type":"text","text":"<a&b>"}],"x":1.5}`},
		{name: "message without content", message: true, text: `{"role":"user"}`, class: ErrInvalid},
		{name: "message with a null role", message: true, text: `{"role":null,"content":[]}`, class: ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []byte
			var err error
			if tt.message {
				got, err = ParseMessage([]byte(tt.text))
			} else {
				var tool Tool
				tool, err = ParseTool([]byte(tt.text))
				got = tool.JSON
				if err == nil && toJSON(t, tool.Raw) != string(tool.JSON) {
					t.Fatalf("ParseTool: Raw and JSON disagree")
				}
			}
			if tt.class != nil {
				if !errors.Is(err, tt.class) {
					t.Fatalf("Parse(%s) = %s, %v; want an error marked %v", tt.text, got, err, tt.class)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("Parse(%s) = %s, %v; want %s", tt.text, got, err, tt.want)
			}
		})
	}
}

func TestDecodeBytes(t *testing.T) {
	valid, err := codec.FromJSON(nil, []byte(`{"config":{"model":"m"},"system":"s"}`), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		mp    []byte
		class error
	}{
		{name: "empty", mp: nil, class: ErrCorrupt},
		{name: "truncated", mp: valid[:len(valid)-1], class: ErrCorrupt},
		{name: "trailing bytes", mp: append(append([]byte(nil), valid...), 0xc0), class: ErrCorrupt},
		{name: "declared length past the end", mp: []byte{0xdf, 0xff, 0xff, 0xff, 0xff}, class: ErrCorrupt},
		{name: "map with an int key", mp: []byte{0x81, 0x01, 0x01}, class: ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Decode(tt.mp); !errors.Is(err, tt.class) {
				t.Fatalf("Decode(%x) = %v, want an error marked %v", tt.mp, err, tt.class)
			}
			if _, err := DecodeDelta(tt.mp); !errors.Is(err, tt.class) {
				t.Fatalf("DecodeDelta(%x) = %v, want an error marked %v", tt.mp, err, tt.class)
			}
		})
	}
}

// TestDecodeCopies checks that decoded values do not alias their input,
// which may be a bbolt page.
func TestDecodeCopies(t *testing.T) {
	text := `{"config":{"model":"m","stop":["s"]},"system":"x","tools":[{"name":"t"}],"messagePrefix":[{"role":"user","content":[]}]}`
	mp, err := codec.FromJSON(nil, []byte(text), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Decode(mp)
	if err != nil {
		t.Fatal(err)
	}
	before := toJSON(t, s.Encode())
	for i := range mp {
		mp[i] = 0
	}
	if after := toJSON(t, s.Encode()); after != before {
		t.Fatalf("after clobbering the input, Encode = %s, want %s", after, before)
	}
}

// TestToolWithoutRaw checks that a Tool holding only its JSON text encodes
// as that value.
func TestToolWithoutRaw(t *testing.T) {
	s := Snapshot{Config: Config{Model: "m"}, Tools: []Tool{{Name: "t", JSON: []byte(`{"name":"t","z":[1]}`)}}}
	want := `{"config":{"model":"m"},"tools":[{"name":"t","z":[1]}]}`
	if got := toJSON(t, s.Encode()); got != want {
		t.Fatalf("Encode = %s, want %s", got, want)
	}
}

func TestFoldClone(t *testing.T) {
	ev := func(line string) *codec.Event {
		t.Helper()
		e, err := codec.ParseEvent([]byte(line), codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return &e
	}
	var f Fold
	if _, ok := f.Current(); ok {
		t.Fatalf("zero Fold has a header")
	}
	if err := f.Add(ev(`{"type":"request/header","seq":0,"time":0,"data":{"header":{"config":{"model":"m"},"system":"a"},"reason":"initial"}}`)); err != nil {
		t.Fatal(err)
	}
	c := f.Clone()
	if err := f.Add(ev(`{"type":"request/header-delta","seq":1,"time":0,"data":{"system":{"keepStart":1,"keepEnd":0,"insert":["b"]}}}`)); err != nil {
		t.Fatal(err)
	}
	got, _ := c.Current()
	if got.System != "a" {
		t.Fatalf("clone after Add on the original: System = %q, want %q", got.System, "a")
	}
	got, _ = f.Current()
	if got.System != "a\nb" {
		t.Fatalf("original after Add: System = %q, want %q", got.System, "a\nb")
	}
}

func TestFoldWrongView(t *testing.T) {
	tests := []struct {
		name string
		ev   codec.Event
	}{
		{name: "header without view", ev: codec.Event{Type: codec.TypeRequestHeader, Seq: 4, Data: &codec.Opaque{}}},
		{name: "delta without view", ev: codec.Event{Type: codec.TypeHeaderDelta, Seq: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Fold{has: true}
			if err := f.Add(&tt.ev); !errors.Is(err, ErrInvalid) {
				t.Fatalf("Add = %v, want an error marked ErrInvalid", err)
			}
		})
	}
}

func TestAppendJSONParts(t *testing.T) {
	s := mustDecode(t, `{"config":{"model":"m"},"tools":[{"name":"a"},{"name":"b","parameters":{}}],"messagePrefix":[{"role":"user","content":[]}]}`)
	if got, want := string(s.AppendToolsJSON([]byte("x"))), `x[{"name":"a"},{"name":"b","parameters":{}}]`; got != want {
		t.Fatalf("AppendToolsJSON = %s, want %s", got, want)
	}
	if got, want := string(s.AppendPrefixJSON(nil)), `{"role":"user","content":[]}`; got != want {
		t.Fatalf("AppendPrefixJSON = %s, want %s", got, want)
	}
	if !bytes.Equal(Snapshot{}.AppendPrefixJSON(nil), nil) {
		t.Fatalf("AppendPrefixJSON of no prefix is not empty")
	}
}
