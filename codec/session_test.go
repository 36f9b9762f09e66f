package codec_test

import (
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

// TestParseSessionHeader checks the header line rules of docs/format.md#header-line.
func TestParseSessionHeader(t *testing.T) {
	tests := []struct {
		name string
		line string
		want string // class
		// Views, checked on success.
		id, cwd, parent string
		createdAt       float64
		seedLength      int64
	}{
		{name: "minimal", line: `{"type":"session","version":0,"id":"s1","createdAt":0}`, want: "ok", id: "s1"},
		{name: "with cwd", line: `{"type":"session","version":0,"id":"3b9f6a52","createdAt":1783352209707,"cwd":"/home/dev/project"}`, want: "ok", id: "3b9f6a52", createdAt: 1783352209707, cwd: "/home/dev/project"},
		{name: "fork", line: `{"type":"session","version":0,"id":"c","createdAt":5,"cwd":"/w","parentSession":"p","seedLength":12}`, want: "ok", id: "c", createdAt: 5, cwd: "/w", parent: "p", seedLength: 12},
		{name: "unknown keys kept", line: `{"type":"session","version":0,"extra":{"z":1,"a":[2]},"id":"s","createdAt":1.5,"title":"héllo <&>"}`, want: "ok", id: "s", createdAt: 1.5},
		{name: "keys in another order", line: `{"id":"s","createdAt":3,"version":0,"type":"session"}`, want: "ok", id: "s", createdAt: 3},
		{name: "version as 0.0", line: `{"type":"session","version":0.0,"id":"s","createdAt":0}`, want: "ok", id: "s"},
		{name: "missing version", line: `{"type":"session","id":"s","createdAt":0}`, want: "unsupported"},
		{name: "version 1", line: `{"type":"session","version":1,"id":"s","createdAt":0}`, want: "unsupported"},
		{name: "version 0.5", line: `{"type":"session","version":0.5,"id":"s","createdAt":0}`, want: "unsupported"},
		{name: "version negative", line: `{"type":"session","version":-1,"id":"s","createdAt":0}`, want: "unsupported"},
		{name: "version string", line: `{"type":"session","version":"0","id":"s","createdAt":0}`, want: "invalid"},
		{name: "version null", line: `{"type":"session","version":null,"id":"s","createdAt":0}`, want: "invalid"},
		{name: "type not session", line: `{"type":"turn/start","version":0,"id":"s","createdAt":0}`, want: "invalid"},
		{name: "type missing", line: `{"version":0,"id":"s","createdAt":0}`, want: "invalid"},
		{name: "type number", line: `{"type":1,"version":0,"id":"s","createdAt":0}`, want: "invalid"},
		{name: "missing id", line: `{"type":"session","version":0,"createdAt":0}`, want: "invalid"},
		{name: "empty id", line: `{"type":"session","version":0,"id":"","createdAt":0}`, want: "invalid"},
		{name: "id number", line: `{"type":"session","version":0,"id":7,"createdAt":0}`, want: "invalid"},
		{name: "id null", line: `{"type":"session","version":0,"id":null,"createdAt":0}`, want: "invalid"},
		{name: "createdAt string", line: `{"type":"session","version":0,"id":"s","createdAt":"2026-01-01"}`, want: "invalid"},
		{name: "createdAt missing", line: `{"type":"session","version":0,"id":"s"}`, want: "invalid"},
		{name: "createdAt null", line: `{"type":"session","version":0,"id":"s","createdAt":null}`, want: "invalid"},
		{name: "cwd number", line: `{"type":"session","version":0,"id":"s","createdAt":0,"cwd":1}`, want: "invalid"},
		{name: "parentSession null", line: `{"type":"session","version":0,"id":"s","createdAt":0,"parentSession":null}`, want: "invalid"},
		{name: "seedLength negative", line: `{"type":"session","version":0,"id":"s","createdAt":0,"parentSession":"p","seedLength":-1}`, want: "invalid"},
		{name: "seedLength fraction", line: `{"type":"session","version":0,"id":"s","createdAt":0,"parentSession":"p","seedLength":1.5}`, want: "invalid"},
		{name: "duplicate key", line: `{"type":"session","version":0,"id":"s","id":"t","createdAt":0}`, want: "invalid"},
		{name: "not an object", line: `["session"]`, want: "invalid"},
		{name: "not JSON", line: `{"type":"session",`, want: "syntax"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := codec.ParseSessionHeader([]byte(tt.line), codec.Limits{})
			if got := class(err); got != tt.want {
				t.Fatalf("ParseSessionHeader(%s) = %v (class %s), want %s", tt.line, err, got, tt.want)
			}
			if err != nil {
				return
			}
			if h.ID != tt.id || h.Cwd != tt.cwd || h.ParentSession != tt.parent || h.CreatedAt != tt.createdAt || h.SeedLength != tt.seedLength {
				t.Errorf("ParseSessionHeader(%s) = {id %q cwd %q parent %q createdAt %v seedLength %d}, want {%q %q %q %v %d}",
					tt.line, h.ID, h.Cwd, h.ParentSession, h.CreatedAt, h.SeedLength, tt.id, tt.cwd, tt.parent, tt.createdAt, tt.seedLength)
			}
			out, err := h.AppendJSON(nil)
			if err != nil {
				t.Fatalf("AppendJSON = %v", err)
			}
			want := tt.line
			if tt.name == "version as 0.0" {
				want = `{"type":"session","version":0,"id":"s","createdAt":0}`
			}
			if string(out) != want {
				t.Errorf("AppendJSON(ParseSessionHeader(line)) = %s, want %s", out, want)
			}
		})
	}
}

// TestNewSessionHeader checks the header lines the engine writes: DSH's key
// order, optional keys omitted, and a decode of the result.
func TestNewSessionHeader(t *testing.T) {
	tests := []struct {
		name       string
		id         string
		createdAt  float64
		cwd        string
		parent     string
		seedLength int64
		want       string
	}{
		{name: "plain", id: "s1", createdAt: 1783352209707, want: `{"type":"session","version":0,"id":"s1","createdAt":1783352209707}`},
		{name: "cwd", id: "s1", createdAt: 1, cwd: "/home/dev", want: `{"type":"session","version":0,"id":"s1","createdAt":1,"cwd":"/home/dev"}`},
		{name: "fork", id: "c", createdAt: 2, cwd: "/w", parent: "p", seedLength: 7, want: `{"type":"session","version":0,"id":"c","createdAt":2,"cwd":"/w","parentSession":"p","seedLength":7}`},
		{name: "fork of nothing inherited", id: "c", createdAt: 2, parent: "p", want: `{"type":"session","version":0,"id":"c","createdAt":2,"parentSession":"p","seedLength":0}`},
		{name: "fractional time", id: "s", createdAt: 0.5, want: `{"type":"session","version":0,"id":"s","createdAt":0.5}`},
		{name: "special characters", id: "a\"b", createdAt: 0, cwd: "C:\\x\n<&>", want: `{"type":"session","version":0,"id":"a\"b","createdAt":0,"cwd":"C:\\x\n<&>"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := codec.NewSessionHeader(tt.id, tt.createdAt, tt.cwd, tt.parent, tt.seedLength)
			out, err := h.AppendJSON(nil)
			if err != nil || string(out) != tt.want {
				t.Fatalf("NewSessionHeader(...).AppendJSON = %s, %v; want %s", out, err, tt.want)
			}
			back, err := codec.DecodeSessionHeader(h.Raw)
			if err != nil {
				t.Fatalf("DecodeSessionHeader(NewSessionHeader) = %v", err)
			}
			if back.ID != h.ID || back.CreatedAt != h.CreatedAt || back.Cwd != h.Cwd || back.ParentSession != h.ParentSession || back.SeedLength != h.SeedLength {
				t.Errorf("DecodeSessionHeader(NewSessionHeader) = %+v, want %+v", back, h)
			}
			fromText, err := codec.FromJSON(nil, out, codec.Limits{})
			if err != nil || string(fromText) != string(h.Raw) {
				t.Errorf("FromJSON(export) = %x, %v; want the built image %x", fromText, err, h.Raw)
			}
		})
	}
}

// TestDecodeSessionHeaderCorrupt checks stored header payloads that
// FromJSON cannot produce.
func TestDecodeSessionHeaderCorrupt(t *testing.T) {
	good := mustPayload(t, `{"type":"session","version":0,"id":"s","createdAt":0}`)
	tests := []struct {
		name string
		raw  []byte
		want string
	}{
		{name: "truncated", raw: good[:len(good)-2], want: "corrupt"},
		{name: "trailing", raw: append(append([]byte{}, good...), 0xc0), want: "corrupt"},
		{name: "empty", raw: nil, want: "corrupt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := codec.DecodeSessionHeader(tt.raw)
			if got := class(err); got != tt.want {
				t.Errorf("DecodeSessionHeader(%x) = %v (class %s), want %s", tt.raw, err, got, tt.want)
			}
		})
	}
}

// TestRenamed: a header renamed for a copy keeps every other key in its
// place, replaces the lineage where it is, and appends it when missing.
func TestRenamed(t *testing.T) {
	tests := []struct {
		name, line string
		events     int64
		want       string
	}{
		{"no lineage yet", `{"type":"session","version":0,"id":"a","createdAt":1,"x":{"k":[1]},"cwd":"/w"}`, 5,
			`{"type":"session","version":0,"id":"b","createdAt":1,"x":{"k":[1]},"cwd":"/w","parentSession":"a","seedLength":5}`},
		{"replaces a lineage in place", `{"type":"session","parentSession":"p","version":0,"seedLength":2,"id":"a","createdAt":1}`, 3,
			`{"type":"session","parentSession":"a","version":0,"seedLength":3,"id":"b","createdAt":1}`},
		{"no events: only the id", `{"type":"session","version":0,"id":"a","createdAt":1,"parentSession":"p","seedLength":2}`, 0,
			`{"type":"session","version":0,"id":"b","createdAt":1,"parentSession":"p","seedLength":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := codec.ParseSessionHeader([]byte(tt.line), codec.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := h.Renamed("b", tt.events)
			if err != nil {
				t.Fatal(err)
			}
			line, err := got.AppendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(line) != tt.want {
				t.Errorf("Renamed = %s; want %s", line, tt.want)
			}
			if got.ID != "b" {
				t.Errorf("ID = %q; want b", got.ID)
			}
		})
	}
}
