package audit

// AlignForTest aligns two requests whose messages are the bytes of t and
// w (equal bytes, equal messages): the pairs of indexes align gives, -1
// on the side that lacks the message.
func AlignForTest(t, w string) [][2]int {
	key := func(s string) []digestKey {
		out := make([]digestKey, len(s))
		for i := range s {
			out[i][0] = s[i]
		}
		return out
	}
	var out [][2]int
	for _, op := range align(key(t), key(w)) {
		out = append(out, [2]int{op.t, op.w})
	}
	return out
}
