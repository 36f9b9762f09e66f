package codec

import (
	"strings"

	"github.com/cockroachdb/errors"
)

// Block type names the engine reads (docs/format.md#content-blocks). Any other block type is
// opaque and passed through to requests unchanged.
const (
	BlockText       = "text"
	BlockReasoning  = "reasoning"
	BlockToolCall   = "tool-call"
	BlockToolResult = "tool-result"
)

// Content is a content-block array (docs/format.md#content-blocks).
type Content struct {
	Blocks []Block
}

// Block is one content block: the fields the engine reads for the known
// block types, and the stored block itself.
type Block struct {
	Type string
	// Text is the text of a text or reasoning block.
	Text string
	// ID, Name and Arguments are set for tool-call blocks.
	ID, Name, Arguments string
	// ToolCallID, Inner and IsError are set for tool-result blocks.
	ToolCallID string
	Inner      Content
	IsError    bool
	// Raw is the block's stored form (msgpack), aliasing the event.
	Raw []byte
}

// AppendJSON appends the array's JSON text. The blocks were checked when
// they were decoded, so this cannot fail.
func (c Content) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	dst = c.AppendElements(dst)
	return append(dst, ']')
}

// AppendElements appends the JSON of the blocks separated by commas,
// without the brackets (for splicing content into a wrapped message).
func (c Content) AppendElements(dst []byte) []byte {
	for i, b := range c.Blocks {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = b.AppendJSON(dst)
	}
	return dst
}

// AppendJSON appends the block's JSON text.
func (b Block) AppendJSON(dst []byte) []byte {
	out, _, err := ToJSON(dst, b.Raw)
	if err != nil {
		return dst
	}
	return out
}

func decodeContent(f Fields, key string) (Content, error) {
	var c Content
	// Room for the blocks the header declares, up to a few: every block
	// takes bytes, but a declared count is not yet a decoded one.
	if n := min(arrayLen(f.r), maxPresized); n > 0 {
		c.Blocks = make([]Block, 0, n)
	}
	err := f.Array(key, func(int) error {
		b, err := decodeBlock(f, key)
		c.Blocks = append(c.Blocks, b)
		return err
	})
	return c, err
}

// maxPresized bounds the capacity decodeContent gives a block slice
// before it has decoded a block.
const maxPresized = 8

// elemKey is key+"[]", the name of an element of the array key in
// errors, without allocating for the arrays of blocks the codec reads.
func elemKey(key string) string {
	switch key {
	case "content":
		return "content[]"
	case "summary":
		return "summary[]"
	case "block.content":
		return "block.content[]"
	case "block":
		return "block[]"
	}
	return key + "[]"
}

// Block fields, as bits of blockKeys.
const (
	bkText = 1 << iota
	bkID
	bkName
	bkArguments
	bkToolCallID
	bkContent
	bkIsError
)

// blockKeys records which block fields were present (seen) and which had
// the kind the known block types need (typed). An opaque block may use the
// same names with other kinds, so kinds are checked only once the type is
// known, in check.
type blockKeys struct{ seen, typed uint8 }

// The string fields of a block, as indices of blockStrings.
const (
	bsText = iota
	bsID
	bsName
	bsArguments
	bsToolCallID
	numBlockStrings
)

// blockStrings are where a block's string fields lie in the buffer (start
// and end offsets; empty for a field absent or of another kind), so that
// they can be copied out in one allocation once the block's type is known.
type blockStrings [numBlockStrings][2]int

// set copies the fields into b: one allocation for them all.
func (bs *blockStrings) set(buf []byte, b *Block) {
	total, n := 0, 0
	for _, s := range bs {
		if s[1] > s[0] {
			total += s[1] - s[0]
			n++
		}
	}
	if n == 0 {
		return
	}
	var all string
	if n == 1 {
		for _, s := range bs {
			if s[1] > s[0] {
				all = string(buf[s[0]:s[1]])
			}
		}
	} else {
		var sb strings.Builder
		sb.Grow(total)
		for _, s := range bs {
			sb.Write(buf[s[0]:s[1]])
		}
		all = sb.String()
	}
	fields := [numBlockStrings]*string{&b.Text, &b.ID, &b.Name, &b.Arguments, &b.ToolCallID}
	at := 0
	for i, s := range bs {
		if s[1] > s[0] {
			*fields[i] = all[at : at+s[1]-s[0]]
			at += s[1] - s[0]
		}
	}
}

func decodeBlock(f Fields, key string) (Block, error) {
	var b Block
	var bk blockKeys
	var bs blockStrings
	var inner []byte
	start := f.r.off
	err := f.Object(elemKey(key), func(k []byte) error {
		var err error
		switch string(k) {
		case "type":
			b.Type, err = f.Name("block.type")
		case "text":
			bs[bsText], err = bk.str(f, bkText)
		case "id":
			bs[bsID], err = bk.str(f, bkID)
		case "name":
			bs[bsName], err = bk.str(f, bkName)
		case "arguments":
			bs[bsArguments], err = bk.str(f, bkArguments)
		case "toolCallId":
			bs[bsToolCallID], err = bk.str(f, bkToolCallID)
		case "content":
			// Only a tool-result's content is read, and the type may come
			// later: keep the bytes and decode them once the type is known.
			bk.seen |= bkContent
			if c := f.r.peek(); c&0xf0 == 0x90 || c == mpArray16 || c == mpArray32 {
				bk.typed |= bkContent
			}
			inner, err = f.Raw("block.content")
		case "isError":
			bk.seen |= bkIsError
			if c := f.r.peek(); c == mpTrue || c == mpFalse {
				bk.typed |= bkIsError
				b.IsError = c == mpTrue
			}
			err = f.Skip()
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		bs.set(f.r.b, &b)
		return b, err
	}
	switch b.Type {
	case "", BlockText, BlockReasoning, BlockToolCall, BlockToolResult:
		bs.set(f.r.b, &b)
	default:
		// Opaque: check keeps none of the fields.
	}
	b.Raw = f.r.b[start:f.r.off]
	if b.Type == BlockToolResult && bk.has(bkContent) {
		var err error
		if b.Inner, err = decodeContent(Fields{r: &Reader{b: inner}}, "block.content"); err != nil {
			return b, err
		}
	}
	return b, b.check(bk)
}

// str reads the value of a block's string field, marking bit seen, and
// typed when the value is a string; it returns where the string's bytes
// lie in the buffer (nothing for another kind, whose value it skips).
func (bk *blockKeys) str(f Fields, bit uint8) ([2]int, error) {
	bk.seen |= bit
	if s, ok := f.r.strBytes(); ok {
		if f.r.strict && !validString(s) {
			return [2]int{}, errStrict
		}
		bk.typed |= bit
		return [2]int{f.r.off - len(s), f.r.off}, nil
	}
	t, err := f.r.Next()
	if err != nil {
		return [2]int{}, corruptOrShort(err)
	}
	if t.Kind == KindString {
		if f.r.strict && !validString(t.Str) {
			return [2]int{}, errStrict
		}
		bk.typed |= bit
		return [2]int{f.r.off - len(t.Str), f.r.off}, nil
	}
	if f.r.strict {
		return [2]int{}, f.r.validateRest(t, f.r.depth)
	}
	return [2]int{}, corruptOrShort(f.r.skipRest(t, maxStoredDepth))
}

// has reports whether every field in bits was present with the right kind.
func (bk blockKeys) has(bits uint8) bool { return bk.typed&bits == bits }

// check enforces the field types of the known block kinds.
func (b *Block) check(bk blockKeys) error {
	switch b.Type {
	case "":
		return invalidf("codec: content block without a type")
	case BlockText, BlockReasoning:
		if !bk.has(bkText) {
			return invalidf("codec: %s block needs a string text", errors.Safe(b.Type))
		}
	case BlockToolCall:
		if !bk.has(bkID | bkName | bkArguments) {
			return invalidf("codec: tool-call block needs string id, name and arguments")
		}
	case BlockToolResult:
		if !bk.has(bkToolCallID | bkContent) {
			return invalidf("codec: tool-result block needs a string toolCallId and a content array")
		}
		if bk.seen&bkIsError != 0 && !bk.has(bkIsError) {
			return invalidf("codec: tool-result block: isError must be a boolean")
		}
	default:
		// Opaque: drop fields that were filled under other kinds' names.
		*b = Block{Type: b.Type, Raw: b.Raw}
	}
	return nil
}

// DecodeBlock decodes one content block in storage form (FromJSON's
// output) and checks it by the rules the event decoder applies to the
// blocks of an event (docs/format.md#content-blocks): a type; a string text on text and
// reasoning blocks; string id, name and arguments on a tool-call; a string
// toolCallId, a content array of valid blocks and a boolean isError, if
// any, on a tool-result. Other block types are opaque. Errors are marked
// ErrInvalid or ErrCorrupt.
func DecodeBlock(mp []byte) (Block, error) {
	r := &Reader{b: mp}
	b, err := decodeBlock(Fields{r: r}, "block")
	if err == nil && r.Len() != 0 {
		err = corruptf("codec: %d trailing bytes after the block", errors.Safe(r.Len()))
	}
	return b, err
}
