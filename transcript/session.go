package transcript

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
)

// Format names a session file format.
type Format string

// The formats import reads (docs/transcripts.md). DSH is this engine's own.
const (
	DSH        Format = "dsh"
	Codex      Format = "codex"
	ClaudeCode Format = "claude-code"
	GeminiCLI  Format = "gemini-cli"
)

// TypeSourceLine is the event type of a verbatim source line (docs/transcripts.md).
// To rebuild it is an unknown type: opaque data (docs/format.md#event-types).
const TypeSourceLine = "source/line"

// Options configures Open. The zero value means the defaults.
type Options struct {
	// ID replaces the session id the source records.
	ID string
	// Parent is the session id of the parent of a subagent file; it
	// becomes the header's parentSession (with seedLength 0: a subagent
	// inherits no events).
	Parent string
	// Name is the file's name: used in errors and, when the source
	// records no session id, as the id (its base name without extension).
	Name string
	// Limits bounds line length and JSON nesting; zero means codec's.
	Limits codec.Limits
}

// Usage is a sum of token counts as docs/format.md#event-types defines them (disjoint
// buckets: billed input = Input + CacheRead + CacheWrite).
type Usage struct {
	Input, Output, CacheRead, CacheWrite, Reasoning int64
}

// KindCount counts the lines of one source line kind by what became of
// them.
type KindCount struct {
	// Mapped lines produced events of docs/format.md#event-types (or header fields).
	Mapped int
	// Kept lines are of a known kind that is not mapped (or not in this
	// place: another branch, a sidechain, a duplicate), kept verbatim.
	Kept int
	// Unknown lines are not JSON objects or of a kind the importer does not
	// know; kept verbatim.
	Unknown int
}

// Stats says what an import made of its source. It is complete once the
// Session returned io.EOF.
type Stats struct {
	Lines, Mapped, Kept, Unknown int
	// Torn is set when the last line has no newline and is not a whole
	// JSON object: kept verbatim, never mapped.
	Torn bool
	// Kinds counts lines by kind ("type" or "type/payload.type").
	Kinds map[string]*KindCount
	// What the mapped events hold.
	Turns, Steps, Prompts, ToolCalls, ToolResults, Compactions int
	// Usage sums the usage of the mapped assistant messages.
	Usage Usage
	// Requests counts the model requests of the conversation the source
	// records itself (Claude Code's api-request lines); Rebuilt of them
	// were rebuilt whole from the file, and Verified of those have the
	// digest the source recorded for the request.
	Requests, Rebuilt, Verified int
	// Events is the number of events produced, source lines included.
	Events int64
}

func (s *Stats) count(kind string, how int) {
	if s.Kinds == nil {
		s.Kinds = make(map[string]*KindCount)
	}
	k := s.Kinds[kind]
	if k == nil {
		k = &KindCount{}
		s.Kinds[kind] = k
	}
	switch how {
	case lineMapped:
		k.Mapped++
		s.Mapped++
	case lineKept:
		k.Kept++
		s.Kept++
	default:
		k.Unknown++
		s.Unknown++
	}
}

// What became of a line.
const (
	lineUnknown = iota
	lineKept
	lineMapped
)

// mapper turns the lines of one format into mapped events through a
// builder. line is called once per source line, after the line's
// source/line event; it returns the line's kind and what became of it.
type mapper interface {
	line(b *builder, n int, v value) (kind string, how int, err error)
	finish(b *builder) error
	// parsed returns the first pass's storage form of line n, when it
	// kept it (nil: the line is not JSON).
	parsed(n int) ([]byte, bool)
}

// Session is an imported source file as an eventlog.Source: Next yields
// its events (source lines and mapped events) in order, then io.EOF.
type Session struct {
	// Header is the session header line (docs/transcripts.md: id, createdAt, cwd).
	Header codec.SessionHeader
	// Format is the source's format.
	Format Format

	name  string
	lim   codec.Limits
	lr    *lineReader
	m     mapper
	b     *builder
	qi    int
	done  bool
	err   error
	stats Stats
	mp    []byte
	// lastTS is the last timestamp parsed: lines often repeat it.
	lastTS []byte
}

// Stats returns what the import made of the source so far.
func (s *Session) Stats() Stats {
	st := s.stats
	st.Events = s.b.seq
	return st
}

// Open reads a source of format f (Codex, ClaudeCode or GeminiCLI) in two passes
// over src: the first finds the session header (and, for Claude Code, the
// branch to map), the second is streamed by Next. size is src's length.
func Open(src io.ReaderAt, size int64, f Format, opts Options) (*Session, error) {
	s := &Session{Format: f, name: opts.Name, lim: opts.Limits}
	if s.name == "" {
		s.name = "input"
	}
	maxLine := opts.Limits.MaxLine
	if maxLine <= 0 {
		maxLine = 64 << 20
	}
	var (
		info headerInfo
		err  error
	)
	pass1 := newLineReader(io.NewSectionReader(src, 0, size), maxLine)
	switch f {
	case Codex:
		var cm *codexMapper
		info, cm, err = scanCodex(pass1, s.lim)
		s.m = cm
	case ClaudeCode:
		var cm *claudeMapper
		info, cm, err = scanClaude(pass1, s.lim)
		s.m = cm
	case GeminiCLI:
		info, err = scanGemini(pass1, s.lim)
		s.m = &geminiMapper{}
	default:
		return nil, formatf("transcript: %s: format %q is not a transcript format", errors.Safe(s.name), errors.Safe(string(f)))
	}
	if err != nil {
		return nil, errors.Wrapf(err, "%s", errors.Safe(s.name))
	}
	id := info.id
	if opts.ID != "" {
		id = opts.ID
	}
	if id == "" && opts.Name != "" {
		id = strings.TrimSuffix(filepath.Base(opts.Name), filepath.Ext(opts.Name))
	}
	if opts.Parent != "" && id == opts.Parent {
		// A subagent file that names its parent's session: its own id is
		// the parent's, qualified by the file.
		id = opts.Parent + "/" + strings.TrimSuffix(filepath.Base(opts.Name), filepath.Ext(opts.Name))
	}
	if id == "" || id == "." {
		return nil, invalidf("transcript: %s records no session id; name one (--id)", errors.Safe(s.name))
	}
	s.Header = codec.NewSessionHeader(id, info.created, info.cwd, opts.Parent, 0)
	s.lr = newLineReader(io.NewSectionReader(src, 0, size), maxLine)
	s.b = &builder{format: f, time: info.created, stats: &s.stats}
	return s, nil
}

// headerInfo is what the first pass learns for the session header.
type headerInfo struct {
	id      string
	created float64
	cwd     string
}

// Next implements eventlog.Source. The events carry Raw, Type, Seq, Time
// and their surface markers, but no typed view (Data is nil): decoding
// every mapped event here would be done twice, as Store.Import decodes
// what it stores from Raw. Decode with codec.DecodeEvent where the view is
// needed.
func (s *Session) Next() (codec.Event, error) {
	for {
		if s.err != nil {
			return codec.Event{}, s.err
		}
		if s.qi < len(s.b.queue) {
			ev := s.b.queue[s.qi]
			s.b.queue[s.qi] = codec.Event{}
			s.qi++
			return ev, nil
		}
		s.b.queue, s.qi = s.b.queue[:0], 0
		if s.done {
			return codec.Event{}, io.EOF
		}
		if err := s.step(); err != nil {
			s.err = errors.Wrapf(err, "%s", errors.Safe(s.name))
		}
	}
}

// step reads one line and queues its events, or finishes at the end.
func (s *Session) step() error {
	line, nl, err := s.lr.next()
	if err == io.EOF {
		s.done = true
		return s.m.finish(s.b)
	}
	if err != nil {
		return err
	}
	n := s.lr.n
	s.stats.Lines++
	if err := s.b.sourceLine(n, line, nl); err != nil {
		return err
	}
	var v value
	if img, ok := s.m.parsed(n); ok {
		// The first pass parsed the line with the same limits.
		v = value(img)
		if img == nil {
			err = codec.ErrSyntax
		}
	} else {
		s.mp, err = codec.FromJSON(s.mp[:0], line, s.lim)
		v = value(s.mp)
	}
	if err != nil || v.kind() != codec.KindObject {
		if !nl {
			s.stats.Torn = true
			s.stats.count("(torn last line)", lineUnknown)
			return nil
		}
		s.stats.count("(not a JSON object)", lineUnknown)
		return nil
	}
	if ts := v.get("timestamp"); ts != nil && !bytes.Equal(ts, s.lastTS) {
		if t, ok := millis(ts); ok {
			s.b.time = t
			s.lastTS = append(s.lastTS[:0], ts...)
		}
	}
	kind, how, err := s.m.line(s.b, n, v)
	if err != nil {
		return errors.Wrapf(err, "line %d", errors.Safe(n))
	}
	s.stats.count(kind, how)
	return nil
}

// sourceLine queues the verbatim event of line n, built directly into one
// buffer.
func (b *builder) sourceLine(n int, line []byte, newline bool) error {
	text, key := line, "text"
	if !utf8.Valid(line) {
		// A string must be UTF-8; bytes that are not are kept as base64.
		text, key = []byte(encodeBase64(line)), "base64"
	}
	var data codec.Object
	data.Str("format", string(b.format)).Int("line", int64(n))
	data.Value(key, codec.AppendStringHeader(nil, len(text)))
	raw := rawEvent(TypeSourceLine, b.seq, b.time, &data, codec.SurfaceOp{}, nil, len(text)+16)
	// data is the envelope's last member and ends with the text's string
	// header: the text, and the newline flag, are appended in place, so
	// the whole event is one buffer.
	dataStart := len(raw) - data.Size()
	raw = append(raw, text...)
	if !newline {
		raw[dataStart]++ // data is a fixmap (3 members): one more
		raw = codec.AppendBool(codec.AppendString(raw, "newline"), false)
	}
	b.queue = append(b.queue, codec.Event{Raw: raw, Type: TypeSourceLine, Seq: b.seq, Time: b.time})
	b.seq++
	return nil
}
