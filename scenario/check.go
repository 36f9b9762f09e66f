package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// A scenario file is checked whole before anything runs: JSON syntax and
// value types by the decoder (errors give line and column), keys against
// the file structs' own json tags (so the list of keys has one source),
// then every content block by the codec's block rules (errors name the
// scenario turn, reply and block).

// position returns "line L, column C" for a byte offset of data (both
// counted from 1; the column in bytes).
func position(data []byte, off int64) string {
	if off < 0 {
		off = 0
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// decodeError turns an error of encoding/json into the scenario's: where
// in the file, and what was wrong in JSON's words.
func decodeError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		// Offset counts the bytes read, the offending one included.
		return invalidf("scenario: %s: JSON syntax: %s", errors.Safe(position(data, syn.Offset-1)), errors.Safe(syn.Error()))
	case errors.As(err, &typ):
		return invalidf("scenario: %s: %s is %s where %s belongs", errors.Safe(position(data, typ.Offset-1)),
			errors.Safe(typ.Field), errors.Safe(article(typ.Value)), errors.Safe(article(jsonKind(typ.Type))))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return invalidf("scenario: %s: the JSON ends early", errors.Safe(position(data, int64(len(data)))))
	}
	return errclass.Mark(errors.Wrap(err, "scenario"), ErrInvalid)
}

// article prefixes a JSON kind with "a" or "an".
func article(kind string) string {
	if strings.IndexByte("aeiou", kind[0]) >= 0 {
		return "an " + kind
	}
	return "a " + kind
}

// jsonKind names the JSON kind a Go type of the file structs decodes.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "number"
	case reflect.Slice:
		return "array"
	}
	return "object"
}

// checkKeys walks data (valid JSON that decodes into a file) and refuses
// the first object key the file structs have no field for, naming its
// line, column and JSON path. Values the structs keep as json.RawMessage
// are opaque and not walked.
func checkKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	return walk(data, dec, reflect.TypeOf(file{}), "")
}

var rawMessage = reflect.TypeOf(json.RawMessage(nil))

func walk(data []byte, dec *json.Decoder, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessage {
		var skip json.RawMessage
		return dec.Decode(&skip)
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok || d == ']' || d == '}' {
		return nil // a scalar (or null): the typed decode checked its type
	}
	switch {
	case d == '[' && t.Kind() == reflect.Slice:
		for i := 0; dec.More(); i++ {
			if err := walk(data, dec, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case d == '{' && t.Kind() == reflect.Map:
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			if err := walk(data, dec, t.Elem(), fmt.Sprintf("%s[%q]", path, k)); err != nil {
				return err
			}
		}
	case d == '{' && t.Kind() == reflect.Struct:
		for dec.More() {
			at := dec.InputOffset()
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := k.(string)
			f, ok := fieldOf(t, key)
			if !ok {
				return invalidf("scenario: %s: unknown key %q in %s (known: %s)",
					errors.Safe(position(data, keyStart(data, at))), errors.Safe(key), errors.Safe(where(path)),
					errors.Safe(strings.Join(keysOf(t), ", ")))
			}
			if err := walk(data, dec, f.Type, path+"."+key); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

// keyStart skips the separators between the end of the previous token
// (at) and the key's opening quote.
func keyStart(data []byte, at int64) int64 {
	for at < int64(len(data)) && strings.IndexByte(" \t\r\n,{", data[at]) >= 0 {
		at++
	}
	return at
}

// where names a JSON path for a message: "the scenario object" at the top.
func where(path string) string {
	if path == "" {
		return "the scenario object"
	}
	return strings.TrimPrefix(path, ".")
}

// fieldOf returns the field of struct t whose json name is key.
func fieldOf(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// keysOf lists the json names of struct t's fields.
func keysOf(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}

// checkContent checks that js is an array of content blocks, each valid by
// the codec's block rules, and returns each block's JSON. what names the
// array for errors ("scenario turn 2, reply 1").
func checkContent(js []byte, what string) ([][]byte, error) {
	mp, err := codec.FromJSON(nil, js, codec.Limits{})
	if err != nil {
		return nil, errors.Wrapf(asInvalid(err), "%s", errors.Safe(what))
	}
	r := codec.NewReader(mp)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindArray {
		return nil, invalidf("%s: content is not an array of blocks", errors.Safe(what))
	}
	out := make([][]byte, 0, t.N)
	for i := 0; i < t.N; i++ {
		b, err := r.Value(maxDepth)
		if err != nil {
			return nil, errors.Wrapf(asInvalid(err), "%s, block %d", errors.Safe(what), errors.Safe(i+1))
		}
		if _, err := codec.DecodeBlock(b); err != nil {
			return nil, errors.Wrapf(asInvalid(err), "%s, block %d", errors.Safe(what), errors.Safe(i+1))
		}
		c, _, err := codec.ToJSON(nil, b)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// maxDepth bounds the nesting of a block read from a scenario.
const maxDepth = 1024

// invalidf returns an error marked ErrInvalid, created one frame up.
func invalidf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrInvalid)
}

// asInvalid marks err ErrInvalid: a scenario is the caller's input, so
// bytes the codec calls corrupt are invalid here.
func asInvalid(err error) error {
	if errors.Is(err, codec.ErrCorrupt) {
		return errclass.Mark(errors.Handled(err), ErrInvalid)
	}
	return errclass.Mark(err, ErrInvalid)
}
