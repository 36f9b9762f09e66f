package codec_test

import (
	"bytes"
	"encoding/hex"
	"math"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

// TestJSONStrings checks string escaping against JSON.stringify (docs/format.md#json-text):
// only '"', '\\' and U+0000–U+001F are escaped, lone surrogates print as
// lowercase \udxxx, everything else is written raw.
func TestJSONStrings(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "plain", in: `"abc"`, want: `"abc"`},
		{name: "empty", in: `""`, want: `""`},
		{name: "quote and backslash", in: `"a\"b\\c"`, want: `"a\"b\\c"`},
		{name: "short escapes", in: `"\b\f\n\r\t"`, want: `"\b\f\n\r\t"`},
		{name: "u escapes of short forms", in: `"\u0008\u000c\u000a\u000d\u0009"`, want: `"\b\f\n\r\t"`},
		{name: "other controls lowercase hex", in: `"\u0000\u0001\u001f\u000B\u001A"`, want: `"\u0000\u0001\u001f\u000b\u001a"`},
		{name: "DEL is raw", in: `"\u007f"`, want: "\"\x7f\""},
		{name: "html characters raw", in: `"<a href=\"x\">&amp;</a>"`, want: `"<a href=\"x\">&amp;</a>"`},
		{name: "escaped html characters raw", in: `"\u003c\u003e\u0026"`, want: `"<>&"`},
		{name: "line separators raw", in: `"\u2028\u2029"`, want: "\"\u2028\u2029\""},
		{name: "raw line separators raw", in: "\"\u2028x\u2029\"", want: "\"\u2028x\u2029\""},
		{name: "solidus raw", in: `"a/b"`, want: `"a/b"`},
		{name: "escaped solidus", in: `"a\/b"`, want: `"a/b"`},
		{name: "non-ASCII raw", in: `"héllo, 世界"`, want: `"héllo, 世界"`},
		{name: "escaped e acute", in: `"\u00e9"`, want: `"é"`},
		{name: "uppercase hex escape", in: `"\u00E9\u4E16"`, want: `"é世"`},
		{name: "astral raw", in: `"😀"`, want: `"😀"`},
		{name: "surrogate pair", in: `"\ud83d\ude00"`, want: `"😀"`},
		{name: "surrogate pair uppercase", in: `"\uD83D\uDE00"`, want: `"😀"`},
		{name: "lone high", in: `"\ud800"`, want: `"\ud800"`},
		{name: "lone low", in: `"\udfff"`, want: `"\udfff"`},
		{name: "lone high uppercase", in: `"\uD800"`, want: `"\ud800"`},
		{name: "high then text", in: `"a\ud83dx"`, want: `"a\ud83dx"`},
		{name: "high at end", in: `"a\ud83d"`, want: `"a\ud83d"`},
		{name: "low then high", in: `"\ude00\ud83d"`, want: `"\ude00\ud83d"`},
		{name: "two highs then low", in: `"\ud83d\ud83d\ude00"`, want: `"\ud83d😀"`},
		{name: "high then escaped non-surrogate", in: `"\ud83d\u0041"`, want: `"\ud83dA"`},
		{name: "high then short escape", in: `"\ud83d\n"`, want: `"\ud83d\n"`},
		{name: "lone in key", in: `{"\udabc":1}`, want: `{"\udabc":1}`},
		{name: "mixed escapes and raw", in: `"tab\there \"q\" é\u0001"`, want: `"tab\there \"q\" é\u0001"`},
		{name: "long string", in: `"` + strings.Repeat("x", 70000) + `"`, want: `"` + strings.Repeat("x", 70000) + `"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mp, got := roundTrip(t, tt.in, codec.Limits{})
			if got != tt.want {
				t.Errorf("ToJSON(FromJSON(%q)) = %q, want %q", tt.in, got, tt.want)
			}
			// The output is canonical: it reproduces itself and the same image.
			mp2, again := roundTrip(t, got, codec.Limits{})
			if again != got || !bytes.Equal(mp2, mp) {
				t.Errorf("second round of %q = %q (image %x), want %q (image %x)", tt.in, again, mp2, got, mp)
			}
		})
	}
}

// TestJSONLoneSurrogateImage checks that a lone surrogate is kept as its
// code unit in WTF-8, not replaced with U+FFFD.
func TestJSONLoneSurrogateImage(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // hex of the msgpack image
	}{
		{name: "high", in: `"\ud800"`, want: "a3eda080"},
		{name: "low", in: `"\udfff"`, want: "a3edbfbf"},
		{name: "pair is UTF-8", in: `"\ud83d\ude00"`, want: "a4f09f9880"},
		{name: "high inside", in: `"a\ud83dx"`, want: "a561eda0bd78"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mp, err := codec.FromJSON(nil, []byte(tt.in), codec.Limits{})
			if err != nil {
				t.Fatalf("FromJSON(%q) = %v", tt.in, err)
			}
			if got := hex.EncodeToString(mp); got != tt.want {
				t.Errorf("FromJSON(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// TestJSONNumbers checks numbers against ECMAScript Number::toString and
// JSON.parse's rounding to float64 (docs/format.md#json-text), and the storage kind.
func TestJSONNumbers(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  string
		isInt bool // stored as a msgpack integer
	}{
		{name: "small int", in: `5`, want: `5`, isInt: true},
		{name: "zero", in: `0`, want: `0`, isInt: true},
		{name: "negative zero", in: `-0`, want: `0`, isInt: true},
		{name: "negative zero fraction", in: `-0.0`, want: `0`, isInt: true},
		{name: "one point zero", in: `1.0`, want: `1`, isInt: true},
		{name: "exponent integer", in: `1E3`, want: `1000`, isInt: true},
		{name: "exponent integer lowercase", in: `2e2`, want: `200`, isInt: true},
		{name: "negative", in: `-17`, want: `-17`, isInt: true},
		{name: "exponent plus", in: `1e+2`, want: `100`, isInt: true},
		{name: "1e21", in: `1e21`, want: `1e+21`},
		{name: "1e20 plain", in: `1e20`, want: `100000000000000000000`},
		{name: "below 1e21", in: `999999999999999900000`, want: `999999999999999900000`},
		{name: "1e-7", in: `1e-7`, want: `1e-7`},
		{name: "0.0000001", in: `0.0000001`, want: `1e-7`},
		{name: "1e-6 plain", in: `0.000001`, want: `0.000001`},
		{name: "1.5e-6 plain", in: `0.0000015`, want: `0.0000015`},
		{name: "9.99e-7", in: `9.99e-7`, want: `9.99e-7`},
		{name: "point two", in: `0.2`, want: `0.2`},
		{name: "point one", in: `0.1`, want: `0.1`},
		{name: "fraction", in: `3.14159`, want: `3.14159`},
		{name: "shortest digits", in: `0.30000000000000004`, want: `0.30000000000000004`},
		{name: "large rounded", in: `123456789012345678901`, want: `123456789012345680000`},
		{name: "beyond 2^53", in: `9007199254740993`, want: `9007199254740992`, isInt: true},
		{name: "2^53", in: `9007199254740992`, want: `9007199254740992`, isInt: true},
		{name: "2^53 plus 3", in: `9007199254740995`, want: `9007199254740996`, isInt: true},
		{name: "15 digits", in: `123456789012345`, want: `123456789012345`, isInt: true},
		{name: "16 digits", in: `1234567890123456`, want: `1234567890123456`, isInt: true},
		{name: "int64 max text", in: `9223372036854775807`, want: `9223372036854776000`},
		{name: "int64 min text", in: `-9223372036854775808`, want: `-9223372036854776000`, isInt: true},
		{name: "max double", in: `1.7976931348623157e308`, want: `1.7976931348623157e+308`},
		{name: "min subnormal", in: `5e-324`, want: `5e-324`},
		{name: "negative small", in: `-1.5e-10`, want: `-1.5e-10`},
		{name: "exponent with leading zeros", in: `1e007`, want: `10000000`, isInt: true},
		{name: "long fraction", in: `1.00000000000000000000000000001`, want: `1`, isInt: true},
		{name: "underflow to zero", in: `1e-400`, want: `0`, isInt: true},
		{name: "negative underflow to zero", in: `-1e-400`, want: `0`, isInt: true},
		{name: "time in ms", in: `1783352209707`, want: `1783352209707`, isInt: true},
		{name: "temperature", in: `0.7`, want: `0.7`},
		{name: "negative fraction", in: `-2.5`, want: `-2.5`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mp, got := roundTrip(t, tt.in, codec.Limits{})
			if got != tt.want {
				t.Errorf("ToJSON(FromJSON(%s)) = %s, want %s", tt.in, got, tt.want)
			}
			tok, err := codec.NewReader(mp).Next()
			if err != nil {
				t.Fatalf("Reader.Next(%x) = %v", mp, err)
			}
			if gotInt := tok.Kind == codec.KindInt; gotInt != tt.isInt {
				t.Errorf("FromJSON(%s) kind = %v (image %x), want int %v", tt.in, tok.Kind, mp, tt.isInt)
			}
			mp2, again := roundTrip(t, got, codec.Limits{})
			if again != got || !bytes.Equal(mp2, mp) {
				t.Errorf("second round of %s = %s (image %x), want %s (image %x)", tt.in, again, mp2, got, mp)
			}
		})
	}
}

// TestAppendJSONNumber checks the number printer directly, including values
// no JSON text produces (−0 as a float, int64 extremes).
func TestAppendJSONNumber(t *testing.T) {
	tests := []struct {
		name string
		f    float64
		want string
	}{
		{name: "negative zero", f: math.Copysign(0, -1), want: "0"},
		{name: "1e21", f: 1e21, want: "1e+21"},
		{name: "-1e21", f: -1e21, want: "-1e+21"},
		{name: "1e-7", f: 1e-7, want: "1e-7"},
		{name: "1.234e-7", f: 1.234e-7, want: "1.234e-7"},
		{name: "1e-100", f: 1e-100, want: "1e-100"},
		{name: "1e100", f: 1e100, want: "1e+100"},
		{name: "1.5e300", f: 1.5e300, want: "1.5e+300"},
		{name: "max", f: math.MaxFloat64, want: "1.7976931348623157e+308"},
		{name: "smallest", f: math.SmallestNonzeroFloat64, want: "5e-324"},
		{name: "2^63", f: 1 << 63, want: "9223372036854776000"},
		{name: "half", f: 0.5, want: "0.5"},
		{name: "1/3", f: 1.0 / 3, want: "0.3333333333333333"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(codec.AppendJSONNumber(nil, tt.f)); got != tt.want {
				t.Errorf("AppendJSONNumber(%v) = %s, want %s", tt.f, got, tt.want)
			}
		})
	}
}

// TestAppendJSONInt checks integers beyond ±2^53 print as the nearest double.
func TestAppendJSONInt(t *testing.T) {
	tests := []struct {
		name string
		v    int64
		want string
	}{
		{name: "zero", v: 0, want: "0"},
		{name: "negative", v: -42, want: "-42"},
		{name: "2^53", v: 1 << 53, want: "9007199254740992"},
		{name: "2^53+1", v: 1<<53 + 1, want: "9007199254740992"},
		{name: "-(2^53+1)", v: -(1<<53 + 1), want: "-9007199254740992"},
		{name: "max", v: math.MaxInt64, want: "9223372036854776000"},
		{name: "min", v: math.MinInt64, want: "-9223372036854776000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(codec.AppendJSONInt(nil, tt.v)); got != tt.want {
				t.Errorf("AppendJSONInt(%d) = %s, want %s", tt.v, got, tt.want)
			}
		})
	}
}

// TestJSONStructure checks whitespace, key order, nesting and empty
// containers.
func TestJSONStructure(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "whitespace dropped", in: " \t\r\n{ \"a\" :\t[ 1 ,\n2 ] ,\"b\" : { } }\r\n ", want: `{"a":[1,2],"b":{}}`},
		{name: "key order kept", in: `{"z":1,"a":2,"m":3}`, want: `{"z":1,"a":2,"m":3}`},
		{name: "integer-like keys kept in place", in: `{"b":1,"10":2,"2":3}`, want: `{"b":1,"10":2,"2":3}`},
		{name: "nested", in: `{"a":{"b":{"c":[1,{"d":[true,false,null]}]}}}`, want: `{"a":{"b":{"c":[1,{"d":[true,false,null]}]}}}`},
		{name: "empty object", in: `{}`, want: `{}`},
		{name: "empty array", in: `[]`, want: `[]`},
		{name: "empty containers nested", in: `[[],{},[[]],{"a":{}}]`, want: `[[],{},[[]],{"a":{}}]`},
		{name: "empty key", in: `{"":1}`, want: `{"":1}`},
		{name: "scalars", in: `[true,false,null,"s",0]`, want: `[true,false,null,"s",0]`},
		{name: "top-level null", in: `null`, want: `null`},
		{name: "top-level string", in: ` "x" `, want: `"x"`},
		{name: "same key in sibling objects", in: `[{"a":1},{"a":1}]`, want: `[{"a":1},{"a":1}]`},
		{name: "same key at two levels", in: `{"a":{"a":1}}`, want: `{"a":{"a":1}}`},
		{name: "16 elements use array16", in: `[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]`, want: `[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]`},
		{name: "many keys", in: manyKeys(40, false), want: manyKeys(40, false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := roundTrip(t, tt.in, codec.Limits{})
			if got != tt.want {
				t.Errorf("ToJSON(FromJSON(%q)) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// manyKeys writes an object with n keys k0…k(n-1); dup repeats the first
// key at the end.
func manyKeys(n int, dup bool) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`"k`)
		sb.WriteString(strings.Repeat("x", i%3))
		sb.WriteString(itoa(i))
		sb.WriteString(`":`)
		sb.WriteString(itoa(i))
	}
	if dup {
		sb.WriteString(`,"k0":0`)
	}
	sb.WriteByte('}')
	return sb.String()
}

func itoa(i int) string { return string(codec.AppendJSONInt(nil, int64(i))) }

// nested returns depth levels of arrays around 1.
func nested(depth int) string {
	return strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth)
}

// TestJSONRefusals checks the class of every refusal of FromJSON.
func TestJSONRefusals(t *testing.T) {
	tests := []struct {
		name string
		in   string
		lim  codec.Limits
		want string
	}{
		{name: "duplicate key", in: `{"a":1,"a":2}`, want: "invalid"},
		{name: "duplicate key nested", in: `{"x":{"a":1,"b":{"c":1,"c":2}}}`, want: "invalid"},
		{name: "duplicate key in array element", in: `[1,{"a":1,"b":2,"a":3}]`, want: "invalid"},
		{name: "duplicate key via escape", in: `{"a":1,"\u0061":2}`, want: "invalid"},
		{name: "duplicate empty key", in: `{"":1,"":2}`, want: "invalid"},
		{name: "duplicate among many keys", in: manyKeys(40, true), want: "invalid"},
		{name: "depth at limit", in: nested(3), lim: codec.Limits{MaxDepth: 3}, want: "ok"},
		{name: "depth over limit", in: nested(4), lim: codec.Limits{MaxDepth: 3}, want: "invalid"},
		{name: "default depth at 512", in: nested(512), want: "ok"},
		{name: "default depth over 512", in: nested(513), want: "invalid"},
		{name: "objects over limit", in: `{"a":{"b":{"c":{}}}}`, lim: codec.Limits{MaxDepth: 3}, want: "invalid"},
		{name: "line at limit", in: `"12345678"`, lim: codec.Limits{MaxLine: 10}, want: "ok"},
		{name: "line over limit", in: `"123456789"`, lim: codec.Limits{MaxLine: 10}, want: "invalid"},
		{name: "invalid UTF-8 in string", in: "\"a\xffb\"", want: "syntax"},
		{name: "invalid UTF-8 after escape", in: "\"\\n\xc3\"", want: "syntax"},
		{name: "overlong UTF-8", in: "\"\xc0\x80\"", want: "syntax"},
		{name: "raw surrogate UTF-8", in: "\"\xed\xa0\x80\"", want: "syntax"},
		{name: "truncated UTF-8", in: "\"\xe4\xb8\"", want: "syntax"},
		{name: "invalid UTF-8 outside string", in: "[1,\xff]", want: "syntax"},
		{name: "raw control char", in: "\"a\x01b\"", want: "syntax"},
		{name: "raw newline in string", in: "\"a\nb\"", want: "syntax"},
		{name: "raw tab in string", in: "\"a\tb\"", want: "syntax"},
		{name: "raw NUL in string", in: "\"a\x00b\"", want: "syntax"},
		{name: "raw NUL between tokens", in: "[1,\x002]", want: "syntax"},
		{name: "raw control after escape", in: "\"\\n\x1f\"", want: "syntax"},
		{name: "bad escape", in: `"\x41"`, want: "syntax"},
		{name: "escaped single quote", in: `"\'"`, want: "syntax"},
		{name: "uppercase U escape", in: `"\U0041"`, want: "syntax"},
		{name: "short u escape", in: `"\u12"`, want: "syntax"},
		{name: "non-hex u escape", in: `"\u12g4"`, want: "syntax"},
		{name: "escape at end", in: `"\`, want: "syntax"},
		{name: "unterminated string", in: `"abc`, want: "syntax"},
		{name: "unterminated after lone high", in: `"\ud800`, want: "syntax"},
		{name: "trailing comma array", in: `[1,]`, want: "syntax"},
		{name: "trailing comma object", in: `{"a":1,}`, want: "syntax"},
		{name: "leading comma", in: `[,1]`, want: "syntax"},
		{name: "missing comma", in: `[1 2]`, want: "syntax"},
		{name: "missing comma object", in: `{"a":1 "b":2}`, want: "syntax"},
		{name: "missing colon", in: `{"a" 1}`, want: "syntax"},
		{name: "unquoted key", in: `{a:1}`, want: "syntax"},
		{name: "single quotes", in: `'a'`, want: "syntax"},
		{name: "leading zero", in: `01`, want: "syntax"},
		{name: "negative leading zero", in: `-01`, want: "syntax"},
		{name: "leading plus", in: `+1`, want: "syntax"},
		{name: "bare minus", in: `-`, want: "syntax"},
		{name: "trailing dot", in: `1.`, want: "syntax"},
		{name: "leading dot", in: `.5`, want: "syntax"},
		{name: "empty exponent", in: `1e`, want: "syntax"},
		{name: "signed empty exponent", in: `1e+`, want: "syntax"},
		{name: "hex number", in: `0x10`, want: "syntax"},
		{name: "underscore number", in: `1_000`, want: "syntax"},
		{name: "NaN", in: `NaN`, want: "syntax"},
		{name: "Infinity", in: `Infinity`, want: "syntax"},
		{name: "negative Infinity", in: `-Infinity`, want: "syntax"},
		{name: "truncated literal", in: `tru`, want: "syntax"},
		{name: "capitalised literal", in: `True`, want: "syntax"},
		{name: "literal with trailing text", in: `nulll`, want: "syntax"},
		{name: "trailing text", in: `{"a":1} x`, want: "syntax"},
		{name: "two values", in: `1 2`, want: "syntax"},
		{name: "two objects", in: `{}{}`, want: "syntax"},
		{name: "empty input", in: ``, want: "syntax"},
		{name: "only whitespace", in: " \n\t ", want: "syntax"},
		{name: "unclosed array", in: `[1,2`, want: "syntax"},
		{name: "unclosed object", in: `{"a":1`, want: "syntax"},
		{name: "mismatched close", in: `[1}`, want: "syntax"},
		{name: "comment", in: `/*x*/1`, want: "syntax"},
		{name: "form feed whitespace", in: "\f1", want: "syntax"},
		{name: "huge exponent", in: `1e400`, want: "invalid"},
		{name: "negative huge exponent", in: `-1e400`, want: "invalid"},
		{name: "huge integer", in: "1" + strings.Repeat("0", 400), want: "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("prefix")
			out, err := codec.FromJSON(dst, []byte(tt.in), tt.lim)
			if got := class(err); got != tt.want {
				t.Fatalf("FromJSON(%.60q) = %v (class %s), want class %s", tt.in, err, got, tt.want)
			}
			if err != nil && string(out) != "prefix" {
				t.Errorf("FromJSON(%.60q) failed but returned dst %q, want it unchanged", tt.in, out)
			}
			if err != nil && !strings.Contains(err.Error(), "byte") {
				t.Errorf("FromJSON(%.60q) error %q does not name the byte offset", tt.in, err)
			}
		})
	}
}

// TestFromJSONAppends checks that FromJSON appends to dst and leaves the
// prefix intact, and that ToJSON consumes exactly one value.
func TestFromJSONAppends(t *testing.T) {
	mp, err := codec.FromJSON([]byte{0x01}, []byte(`{"a":[1,"x"]}`), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if mp[0] != 0x01 {
		t.Fatalf("FromJSON overwrote dst: %x", mp)
	}
	two := append(append([]byte{}, mp[1:]...), mp[1:]...)
	out, n, err := codec.ToJSON([]byte("> "), two)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(mp)-1 || string(out) != `> {"a":[1,"x"]}` {
		t.Errorf("ToJSON(two values) = %q, %d; want %q, %d", out, n, `> {"a":[1,"x"]}`, len(mp)-1)
	}
}

// TestAppendBuilders checks that values built with the Append functions
// transcode like the same JSON text, and use the shortest headers.
func TestAppendBuilders(t *testing.T) {
	var b []byte
	b = codec.AppendMapHeader(b, 6)
	b = codec.AppendString(b, "n")
	b = codec.AppendNil(b)
	b = codec.AppendString(b, "t")
	b = codec.AppendBool(b, true)
	b = codec.AppendString(b, "f")
	b = codec.AppendBool(b, false)
	b = codec.AppendString(b, "i")
	b = codec.AppendInt(b, -300)
	b = codec.AppendString(b, "x")
	b = codec.AppendFloat(b, 0.25)
	b = codec.AppendString(b, "a")
	b = codec.AppendArrayHeader(b, 2)
	b = codec.AppendNumber(b, 3)
	b = codec.AppendNumber(b, 1.5)
	const want = `{"n":null,"t":true,"f":false,"i":-300,"x":0.25,"a":[3,1.5]}`
	got, n, err := codec.ToJSON(nil, b)
	if err != nil || n != len(b) || string(got) != want {
		t.Fatalf("ToJSON(built) = %q, %d, %v; want %q, %d, nil", got, n, err, want, len(b))
	}
	fromText, err := codec.FromJSON(nil, []byte(want), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fromText, b) {
		t.Errorf("FromJSON(%s) = %x, want the built image %x", want, fromText, b)
	}
	if err := codec.ValidateValue(b); err != nil {
		t.Errorf("ValidateValue(built) = %v", err)
	}

	headers := []struct {
		name string
		got  []byte
		want string
	}{
		{name: "fixstr 31", got: codec.AppendStringHeader(nil, 31), want: "bf"},
		{name: "str8 32", got: codec.AppendStringHeader(nil, 32), want: "d920"},
		{name: "str8 255", got: codec.AppendStringHeader(nil, 255), want: "d9ff"},
		{name: "str16 256", got: codec.AppendStringHeader(nil, 256), want: "da0100"},
		{name: "str32 65536", got: codec.AppendStringHeader(nil, 65536), want: "db00010000"},
		{name: "fixarray 15", got: codec.AppendArrayHeader(nil, 15), want: "9f"},
		{name: "array16 16", got: codec.AppendArrayHeader(nil, 16), want: "dc0010"},
		{name: "array32", got: codec.AppendArrayHeader(nil, 65536), want: "dd00010000"},
		{name: "fixmap 15", got: codec.AppendMapHeader(nil, 15), want: "8f"},
		{name: "map16 16", got: codec.AppendMapHeader(nil, 16), want: "de0010"},
		{name: "map32", got: codec.AppendMapHeader(nil, 65536), want: "df00010000"},
		{name: "number -0", got: codec.AppendNumber(nil, math.Copysign(0, -1)), want: "00"},
		{name: "number 2^63 is float", got: codec.AppendNumber(nil, 1<<63), want: "cb43e0000000000000"},
		{name: "number -2^63 is int", got: codec.AppendNumber(nil, -(1 << 63)), want: "d38000000000000000"},
	}
	for _, h := range headers {
		t.Run(h.name, func(t *testing.T) {
			if got := hex.EncodeToString(h.got); got != h.want {
				t.Errorf("%s = %s, want %s", h.name, got, h.want)
			}
		})
	}
}

// TestJSONOrNil checks JSONOrNil on good and malformed images.
func TestJSONOrNil(t *testing.T) {
	tests := []struct {
		name string
		mp   []byte
		want string
	}{
		{name: "value", mp: []byte{0x92, 0x01, 0xc3}, want: "[1,true]"},
		{name: "truncated", mp: []byte{0x92, 0x01}, want: ""},
		{name: "trailing", mp: []byte{0x01, 0x02}, want: ""},
		{name: "ext type", mp: []byte{0xd4, 0x01, 0x00}, want: ""},
		{name: "empty", mp: nil, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := codec.JSONOrNil(tt.mp)
			if string(got) != tt.want || (tt.want == "" && got != nil) {
				t.Errorf("JSONOrNil(%x) = %q, want %q", tt.mp, got, tt.want)
			}
		})
	}
}

// TestDepthLimitConsistent checks that a value FromJSON accepts under any
// Limits.MaxDepth can be read back: ToJSON and DecodeRecord allow 1024
// levels, so FromJSON must refuse deeper values (or the readers must accept
// them), never store a record that later reads as corrupt.
func TestDepthLimitConsistent(t *testing.T) {
	tests := []struct {
		name  string
		depth int
		lim   codec.Limits
	}{
		{name: "1024 levels", depth: 1024, lim: codec.Limits{MaxDepth: 2000}},
		{name: "1500 levels", depth: 1500, lim: codec.Limits{MaxDepth: 2000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mp, err := codec.FromJSON(nil, []byte(nested(tt.depth)), tt.lim)
			if err != nil {
				if class(err) != "invalid" {
					t.Fatalf("FromJSON(%d levels) = %v, want success or invalid", tt.depth, err)
				}
				return
			}
			if _, _, err := codec.ToJSON(nil, mp); err != nil {
				t.Errorf("ToJSON(FromJSON(%d levels)) = %v, want success", tt.depth, err)
			}
			if _, err := codec.DecodeRecord(codec.EncodeRecord(nil, mp)); err != nil {
				t.Errorf("DecodeRecord(EncodeRecord(FromJSON(%d levels))) = %v, want success", tt.depth, err)
			}
		})
	}
}

// TestJSONStringifyOracle replays testdata/jsonstringify.tsv: thousands of
// numbers (random doubles, decimal spellings of every shape, powers of two,
// every decimal exponent) and strings (escapes, lone surrogates, raw and
// escaped code units) with the text Node's JSON.stringify(JSON.parse(x))
// writes for them. ToJSON(FromJSON(x)) must write the same bytes.
func TestJSONStringifyOracle(t *testing.T) {
	data := readFile(t, "testdata/jsonstringify.tsv")
	n := 0
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		in, want, ok := bytes.Cut(line, []byte("\t"))
		if !ok {
			t.Fatalf("line %d: no tab", i+1)
		}
		mp, err := codec.FromJSON(nil, in, codec.Limits{})
		if err != nil {
			t.Errorf("line %d: FromJSON(%s) = %v", i+1, in, err)
			continue
		}
		got, _, err := codec.ToJSON(nil, mp)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("line %d: ToJSON(FromJSON(%s)) = %s, %v; JSON.stringify writes %s", i+1, in, got, err, want)
		}
		n++
	}
	if n < 1000 {
		t.Fatalf("only %d oracle cases", n)
	}
}

// TestJSONParseOracle replays testdata/jsonparse.tsv: mutated JSON texts
// with Node's verdict — the JSON.stringify of what JSON.parse read, or "!"
// when it threw. Text JSON.parse refuses must be refused as ErrSyntax; text
// it reads must be read the same way (or refused as ErrInvalid where
// docs/format.md#json-text is stricter: duplicate keys, numbers beyond float64).
func TestJSONParseOracle(t *testing.T) {
	data := readFile(t, "testdata/jsonparse.tsv")
	var accepted, refused int
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		in, want, ok := bytes.Cut(line, []byte("\t"))
		if !ok {
			t.Fatalf("line %d: no tab", i+1)
		}
		mp, err := codec.FromJSON(nil, in, codec.Limits{})
		if string(want) == "!" {
			if class(err) != "syntax" {
				t.Errorf("line %d: FromJSON(%s) = %v (class %s); JSON.parse refuses it, want syntax", i+1, in, err, class(err))
			}
			refused++
			continue
		}
		if err != nil {
			if class(err) != "invalid" {
				t.Errorf("line %d: FromJSON(%s) = %v; JSON.parse reads it as %s", i+1, in, err, want)
			}
			continue
		}
		got, _, err := codec.ToJSON(nil, mp)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("line %d: ToJSON(FromJSON(%s)) = %s, %v; JSON.stringify writes %s", i+1, in, got, err, want)
		}
		accepted++
	}
	if accepted == 0 || refused == 0 {
		t.Fatalf("oracle has %d accepted and %d refused cases", accepted, refused)
	}
}
