package codec

import "github.com/cockroachdb/errors"

// SessionHeader is the view of a session file's first line (docs/format.md#header-line).
//
// INVARIANTS: Raw is the exact stored payload; the other fields are views.
type SessionHeader struct {
	// Raw is the order-preserving msgpack image of the header line.
	Raw       []byte
	ID        string
	CreatedAt float64
	Cwd       string
	// ParentSession and SeedLength record fork lineage (docs/rules.md#fork);
	// ParentSession is "" and SeedLength 0 for a session that is no fork.
	ParentSession string
	SeedLength    int64
}

// ParseSessionHeader decodes a header line (without its newline).
func ParseSessionHeader(line []byte, lim Limits) (SessionHeader, error) {
	raw, err := FromJSON(nil, line, lim)
	if err != nil {
		return SessionHeader{}, err
	}
	return DecodeSessionHeader(raw)
}

// DecodeSessionHeader decodes and checks a stored header line: type
// "session", version 0 (ErrUnsupported otherwise, or when missing), a
// string id, a numeric createdAt; unknown keys are kept in Raw.
func DecodeSessionHeader(raw []byte) (SessionHeader, error) {
	h := SessionHeader{Raw: raw}
	r := &Reader{b: raw}
	f := Fields{r: r}
	var seen keys
	var typ string
	var version float64
	err := f.Object("session header", func(k []byte) error {
		var err error
		switch string(k) {
		case "type":
			seen |= 1
			typ, err = f.Str("type")
		case "version":
			seen |= 2
			version, err = f.Number("version")
		case "id":
			seen |= 4
			h.ID, err = f.Str("id")
		case "createdAt":
			seen |= 8
			h.CreatedAt, err = f.Number("createdAt")
		case "cwd":
			h.Cwd, err = f.Str("cwd")
		case "parentSession":
			h.ParentSession, err = f.Str("parentSession")
		case "seedLength":
			h.SeedLength, err = f.Count("seedLength")
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		return h, errors.Wrap(err, "session header")
	}
	if r.Len() != 0 {
		return h, corruptf("codec: %d trailing bytes after the session header", errors.Safe(r.Len()))
	}
	switch {
	case seen&1 == 0 || typ != "session":
		return h, invalidf("codec: session header: type must be \"session\"")
	case seen&2 == 0:
		return h, unsupportedf("codec: session header has no version (want 0)")
	case version != 0:
		return h, unsupportedf("codec: session header version %v is not supported (want 0)", errors.Safe(version))
	case seen&4 == 0:
		return h, invalidf("codec: session header has no id")
	case h.ID == "":
		return h, invalidf("codec: session header has an empty id")
	case seen&8 == 0:
		return h, invalidf("codec: session header has no createdAt")
	}
	return h, nil
}

// NewSessionHeader builds the header line of a session the engine creates,
// keys in DSH's order: type, version, id, createdAt, cwd?, parentSession?,
// seedLength? (cwd and parentSession omitted when "", seedLength when
// parentSession is "").
func NewSessionHeader(id string, createdAt float64, cwd, parent string, seedLength int64) SessionHeader {
	n := 4
	if cwd != "" {
		n++
	}
	if parent != "" {
		n += 2
	}
	b := AppendMapHeader(nil, n)
	b = AppendString(AppendString(b, "type"), "session")
	b = AppendInt(AppendString(b, "version"), 0)
	b = AppendString(AppendString(b, "id"), id)
	b = AppendNumber(AppendString(b, "createdAt"), createdAt)
	if cwd != "" {
		b = AppendString(AppendString(b, "cwd"), cwd)
	}
	if parent != "" {
		b = AppendString(AppendString(b, "parentSession"), parent)
		b = AppendInt(AppendString(b, "seedLength"), seedLength)
	}
	return SessionHeader{Raw: b, ID: id, CreatedAt: createdAt, Cwd: cwd, ParentSession: parent, SeedLength: seedLength}
}

// AppendJSON appends the header's canonical JSON line (without newline).
func (h *SessionHeader) AppendJSON(dst []byte) ([]byte, error) {
	out, n, err := ToJSON(dst, h.Raw)
	if err == nil && n != len(h.Raw) {
		err = corruptf("codec: trailing bytes after the session header")
	}
	return out, err
}

// Renamed returns the header of a copy of the session under a new id,
// whose lineage says where its events came from: parentSession is h's id
// and seedLength is events, the number of events copied (docs/rules.md#fork), so
// that request digests recorded under the old id are checked with it.
// Every other key keeps its place and value (docs/format.md#carried-values); id, parentSession
// and seedLength are replaced where they are and appended when missing.
// With events 0 there is nothing to inherit: only the id changes, and a
// lineage h had is kept.
func (h SessionHeader) Renamed(id string, events int64) (SessionHeader, error) {
	r := &Reader{b: h.Raw}
	t, err := r.Next()
	if err != nil || t.Kind != KindObject {
		return SessionHeader{}, corruptf("codec: session header is not an object")
	}
	lineage := events > 0
	var body []byte
	n := 0
	var seen [3]bool // id, parentSession, seedLength
	replaced := [3]string{"id", "parentSession", "seedLength"}
	for i := 0; i < t.N; i++ {
		k, ok, err := r.key()
		if err != nil || !ok {
			return SessionHeader{}, corruptf("codec: session header key %d is not a string", errors.Safe(i))
		}
		v, err := r.Value(maxStoredDepth)
		if err != nil {
			return SessionHeader{}, errors.Wrap(err, "session header")
		}
		key := string(k)
		for j, name := range replaced {
			if key == name {
				seen[j] = true
			}
		}
		body = AppendString(body, key)
		switch {
		case key == "id":
			body = AppendString(body, id)
		case key == "parentSession" && lineage:
			body = AppendString(body, h.ID)
		case key == "seedLength" && lineage:
			body = AppendInt(body, events)
		default:
			body = append(body, v...)
		}
		n++
	}
	for j, key := range replaced {
		if seen[j] || (key != "id" && !lineage) {
			continue
		}
		body = AppendString(body, key)
		switch key {
		case "id":
			body = AppendString(body, id)
		case "parentSession":
			body = AppendString(body, h.ID)
		case "seedLength":
			body = AppendInt(body, events)
		}
		n++
	}
	return DecodeSessionHeader(append(AppendMapHeader(nil, n), body...))
}
