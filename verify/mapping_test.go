package verify_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/verify"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// TestVerifyMappingAbsent: in a lane session (its header names the lane),
// a request whose mapped events are not there (the gateway recorded the
// bytes alone: the store refused them, or it crashed between) is a
// mapping warning at the seq they were due, and the mapping is not
// checked past it; a session that is no lane is not re-mapped. (A mapped
// event that differs is a finding: gateway's TestGatewayMappingTampered.)
func TestVerifyMappingAbsent(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	chunk := func(s string) wireStep { return wireStep{typ: recorded.TypeChunk, bytes: []byte(s)} }
	req := wireStep{typ: recorded.TypeRequest, parts: []string{body}}
	resp := wireStep{typ: recorded.TypeResponse, parts: []string{"ab"}, request: 1}
	tests := []struct {
		name  string
		lane  bool
		steps []wireStep
		want  []string
	}{
		{"absent, then the answer", true, []wireStep{chunk(body), req, chunk("ab"), resp}, []string{"2 mapping warning"}},
		{"absent at the end", true, []wireStep{chunk(body), req}, []string{"1 wire warning", "2 mapping warning"}},
		{"no lane", false, []wireStep{chunk(body), req, chunk("ab"), resp}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t)
			var o, gw codec.Object
			gw.Str("upstream", "up")
			if tt.lane {
				gw.Str("api", "openai-chat").Str("root", "00")
			}
			o.Str("type", "session").Int("version", 0).Str("id", "gw-1").Number("createdAt", 1).Value(recorded.HeaderKey, gw.Bytes())
			h, err := codec.DecodeSessionHeader(o.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Create(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			if err := s.Append(context.Background(), "gw-1", wireSession(t, tt.steps)); err != nil {
				t.Fatal(err)
			}
			res := mustVerify(t, s, "gw-1", verify.Options{Strict: true})
			var got []string
			for _, f := range res.Findings {
				level := "finding"
				if f.Warning {
					level = "warning"
				}
				got = append(got, fmt.Sprintf("%d %s %s", f.Seq, f.Kind, level))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || res.Failed() {
				t.Errorf("findings %q (failed %v), want %q\n%v", got, res.Failed(), tt.want, res.Findings)
			}
		})
	}
}
