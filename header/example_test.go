package header_test

import (
	"fmt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/header"
)

func decode(text string) header.Snapshot {
	mp, err := codec.FromJSON(nil, []byte(text), codec.Limits{})
	if err != nil {
		panic(err)
	}
	s, err := header.Decode(mp)
	if err != nil {
		panic(err)
	}
	return s
}

func ExampleDiff() {
	prev := decode(`{"config":{"model":"m"},"system":"You are terse.\nMode: ask.\nBe careful.","tools":[{"name":"read"},{"name":"write"}]}`)
	next := decode(`{"config":{"model":"m"},"system":"You are terse.\nMode: code.\nBe careful.","tools":[{"name":"read"},{"name":"write"},{"name":"bash"}]}`)

	d, ok := header.Diff(prev, next)
	out, _, _ := codec.ToJSON(nil, d.Encode())
	fmt.Println(string(out), ok)

	// A pure reorder cannot be written as a delta: write a fallback snapshot.
	reordered := decode(`{"config":{"model":"m"},"system":"You are terse.\nMode: ask.\nBe careful.","tools":[{"name":"write"},{"name":"read"}]}`)
	_, ok = header.Diff(prev, reordered)
	fmt.Println(ok)
	// Output:
	// {"system":{"keepStart":1,"keepEnd":1,"insert":["Mode: code."]},"tools":{"added":[{"name":"bash"}],"removed":[],"changed":[]}} true
	// false
}

func ExampleApply() {
	prev := decode(`{"config":{"model":"m"},"system":"a\nb\nc"}`)
	// keepEnd larger than the line count is a negative slice index, as in
	// ECMAScript: slice(3 - 5) = slice(-2) keeps the last two lines.
	next := header.Apply(prev, header.Delta{System: &header.SystemDelta{KeepStart: 0, KeepEnd: 5, Insert: []string{"x"}}})
	fmt.Printf("%q\n", next.System)
	// Output:
	// "x\nb\nc"
}
