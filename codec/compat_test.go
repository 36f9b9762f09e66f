package codec_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/vmihailenco/msgpack/v5"
)

// normalize maps decoded values onto one shape so that encoding/json's
// view of a JSON text and vmihailenco/msgpack's view of our image compare
// equal: every number becomes a float64.
func normalize(v interface{}) interface{} {
	switch x := v.(type) {
	case map[string]interface{}:
		for k, e := range x {
			x[k] = normalize(e)
		}
		return x
	case []interface{}:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	case int8:
		return float64(x)
	case int16:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case uint8:
		return float64(x)
	case uint16:
		return float64(x)
	case uint32:
		return float64(x)
	case uint64:
		return float64(x)
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return x
		}
		return f
	}
	return v
}

// TestMsgpackCompatibility checks that the storage form is standard
// msgpack: github.com/vmihailenco/msgpack/v5 decodes our image of a JSON
// value to the same value encoding/json decodes from the text.
func TestMsgpackCompatibility(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{name: "scalars", in: `[null,true,false,0,1,-1,127,128,255,256,-32,-33,-128,-129,65535,65536,-32768,-32769,4294967295,4294967296,-2147483648,-2147483649]`},
		{name: "large ints", in: `[9007199254740992,-9007199254740992,1e18,-1e18,9223372036854775807]`},
		{name: "floats", in: `[0.5,-0.25,1e21,1e-7,5e-324,1.7976931348623157e308,0.1]`},
		{name: "strings", in: `["","a","héllo","😀","<>&","\u2028","` + string(bytes.Repeat([]byte("s"), 40)) + `","` + string(bytes.Repeat([]byte("m"), 300)) + `","` + string(bytes.Repeat([]byte("L"), 70000)) + `"]`},
		{name: "objects", in: `{"z":{"y":{"x":[1,{"w":[]}]}},"a":{},"m":[{"k":"v"}]}`},
		{name: "16 keys", in: manyKeys(16, false)},
		{name: "70000 elements", in: "[" + string(bytes.Repeat([]byte("1,"), 69999)) + "1]"},
		{name: "event", in: `{"type":"assistant/message","seq":3,"time":1783352209707,"data":{"turn":1,"step":1,"content":[{"type":"text","text":"hi"}],"usage":{"inputTokens":10,"outputTokens":3}},"sourceEventSeqs":[],"surfaceOp":"append"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mp, err := codec.FromJSON(nil, []byte(tt.in), codec.Limits{})
			if err != nil {
				t.Fatalf("FromJSON = %v", err)
			}
			var fromMsgpack interface{}
			dec := msgpack.NewDecoder(bytes.NewReader(mp))
			if err := dec.Decode(&fromMsgpack); err != nil {
				t.Fatalf("msgpack.Decode(FromJSON(%.40s)) = %v", tt.in, err)
			}
			var fromJSON interface{}
			jd := json.NewDecoder(bytes.NewReader([]byte(tt.in)))
			jd.UseNumber()
			if err := jd.Decode(&fromJSON); err != nil {
				t.Fatalf("json.Decode = %v", err)
			}
			got, want := normalize(fromMsgpack), normalize(fromJSON)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("msgpack view of FromJSON(%.60s) = %.200v, want %.200v", tt.in, got, want)
			}
			// And our Reader reads what msgpack writes for the same value.
			var raw msgpack.RawMessage
			if err := msgpack.Unmarshal(mp, &raw); err != nil || !bytes.Equal(raw, mp) {
				t.Errorf("msgpack.RawMessage of our image = %x, %v; want the image back", raw[:min(len(raw), 16)], err)
			}
		})
	}
}

// TestAppendIntMatchesMsgpack checks integers against
// github.com/vmihailenco/msgpack/v5: our shortest form is what its EncodeInt
// writes (Marshal of an int, or of an int64 with UseCompactInts). A plain
// Marshal(int64) writes the fixed 9-byte form instead, so that is checked
// only to decode to the same value.
func TestAppendIntMatchesMsgpack(t *testing.T) {
	values := []int64{
		0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1,
		math.MaxInt64, -1, -32, -33, -128, -129, -32768, -32769,
		math.MinInt32, math.MinInt32 - 1, math.MinInt64, 1 << 53, -(1 << 53),
	}
	for _, v := range values {
		ours := codec.AppendInt(nil, v)
		t.Run(hex.EncodeToString(ours), func(t *testing.T) {
			viaInt, err := msgpack.Marshal(int(v))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ours, viaInt) {
				t.Errorf("AppendInt(%d) = %x, msgpack.Marshal(int) = %x", v, ours, viaInt)
			}
			var buf bytes.Buffer
			enc := msgpack.NewEncoder(&buf)
			enc.UseCompactInts(true)
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ours, buf.Bytes()) {
				t.Errorf("AppendInt(%d) = %x, compact msgpack.Encode(int64) = %x", v, ours, buf.Bytes())
			}
			plain, err := msgpack.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			var back int64
			if err := msgpack.Unmarshal(ours, &back); err != nil || back != v {
				t.Errorf("msgpack.Unmarshal(AppendInt(%d)) = %d, %v", v, back, err)
			}
			// Our reader accepts msgpack's fixed-width form too.
			tok, err := codec.NewReader(plain).Next()
			if err != nil || tok.Kind != codec.KindInt || tok.Int != v {
				t.Errorf("Reader.Next(msgpack.Marshal(int64(%d)) = %x) = %+v, %v", v, plain, tok, err)
			}
		})
	}
}

// TestAppendFloatMatchesMsgpack checks float64 bytes against msgpack.
func TestAppendFloatMatchesMsgpack(t *testing.T) {
	for _, f := range []float64{0.5, -1.25, 1e21, 5e-324, math.MaxFloat64} {
		want, err := msgpack.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := codec.AppendFloat(nil, f); !bytes.Equal(got, want) {
			t.Errorf("AppendFloat(%v) = %x, msgpack.Marshal = %x", f, got, want)
		}
	}
}

// TestAppendStringMatchesMsgpack checks string and container headers
// against msgpack for each header width.
func TestAppendStringMatchesMsgpack(t *testing.T) {
	for _, n := range []int{0, 31, 32, 255, 256, 65535, 65536} {
		s := string(bytes.Repeat([]byte("x"), n))
		want, err := msgpack.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := codec.AppendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%d bytes) header = %x, msgpack = %x", n, got[:min(5, len(got))], want[:min(5, len(want))])
		}
	}
	for _, n := range []int{0, 15, 16, 65535, 65536} {
		arr := make([]bool, n)
		want, err := msgpack.Marshal(arr)
		if err != nil {
			t.Fatal(err)
		}
		got := codec.AppendArrayHeader(nil, n)
		for i := 0; i < n; i++ {
			got = codec.AppendBool(got, false)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("AppendArrayHeader(%d) = %x, msgpack = %x", n, got[:min(5, len(got))], want[:min(5, len(want))])
		}
	}
}
