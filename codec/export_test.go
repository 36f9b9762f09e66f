package codec

// SealBody seals body as the body of a frame of version form (count the
// events of a pack): for tests that build sealed frames whose insides
// are damaged, which only the key holder can make.
func (s *Sealer) SealBody(dst []byte, form byte, count uint64, body []byte) []byte {
	return s.seal(dst, form, count, body)
}
