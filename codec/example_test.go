package codec_test

import (
	"fmt"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
)

// FromJSON keeps keys in their order and numbers as JavaScript reads
// them; ToJSON writes the value back as JSON.stringify would.
func ExampleFromJSON() {
	in := []byte(` {"b": 1.0, "a": [1e21, -0, "\u003c&\ud800"], "c": 123456789012345678901} `)
	mp, err := codec.FromJSON(nil, in, codec.Limits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _, err := codec.ToJSON(nil, mp)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s\n", out)
	fmt.Printf("% x\n", mp[:8])

	_, err = codec.FromJSON(nil, []byte(`{"a":1,"a":2}`), codec.Limits{})
	fmt.Println(errors.Is(err, codec.ErrInvalid), err)
	_, err = codec.FromJSON(nil, []byte(`[1,]`), codec.Limits{})
	fmt.Println(errors.Is(err, codec.ErrSyntax))
	// Output:
	// {"b":1,"a":[1e+21,0,"<&\ud800"],"c":123456789012345680000}
	// 83 a1 62 01 a1 61 93 cb
	// true codec: byte 7: duplicate object key
	// true
}

// ToJSON transcodes a value built with the Append functions.
func ExampleToJSON() {
	var mp []byte
	mp = codec.AppendMapHeader(mp, 2)
	mp = codec.AppendString(mp, "text")
	mp = codec.AppendString(mp, "tab\there & <there>")
	mp = codec.AppendString(mp, "temperature")
	mp = codec.AppendNumber(mp, 0.7)
	out, n, err := codec.ToJSON(nil, mp)
	fmt.Printf("%s %v %v\n", out, n == len(mp), err)
	// Output:
	// {"text":"tab\there & <there>","temperature":0.7} true <nil>
}

// ParseEvent decodes an event line: the envelope, the surface markers and
// a typed view of data. Export writes the line back unchanged, unknown keys
// included.
func ExampleParseEvent() {
	line := []byte(`{"type":"tool/result","seq":23,"time":1783352209707,"data":{"turn":1,"step":2,"callId":"c1","content":[{"type":"text","text":"42"}],"isError":false,"meta":{"z":1,"a":2}},"sourceEventSeqs":[21],"surfaceOp":"append"}`)
	ev, err := codec.ParseEvent(line, codec.Limits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := ev.Data.(*codec.ToolResult)
	fmt.Println(ev.Type, ev.Seq, ev.Op.Kind == codec.OpAppend, ev.Sources)
	fmt.Println(res.CallID, res.IsError, res.Content.Blocks[0].Text)
	out, _ := ev.AppendJSON(nil)
	fmt.Println(string(out) == string(line))

	_, err = codec.ParseEvent([]byte(`{"type":"turn/start","seq":7,"time":0,"data":{"turn":"1"}}`), codec.Limits{})
	fmt.Println(errors.Is(err, codec.ErrInvalid), err)
	// Output:
	// tool/result 23 true [21]
	// c1 false 42
	// true
	// true seq 7: codec: turn: want integer, got string
}

// Each layer adds only the place it knows and the error does not name
// yet: the session once, the seq once.
func ExampleAt() {
	leaf := errors.Mark(errors.New("codec: bad value"), codec.ErrInvalid)
	err := codec.AtSeq(leaf, 3)  // the fold knows the seq
	err = codec.At(err, "s1", 3) // the store knows the session and seq
	err = codec.At(err, "s1", 3) // passed up once more: nothing new
	fmt.Println(err, errors.Is(err, codec.ErrInvalid))
	// Output:
	// session "s1": seq 3: codec: bad value true
}
