package salvage

import (
	"fmt"
	"strings"

	"github.com/sessionlog/sessionlog/internal/printable"
)

// Cause says why a session was not copied whole.
type Cause uint8

const (
	// None: every event the session had was copied.
	None Cause = iota
	// CRC: a record's CRC32C does not match its bytes.
	CRC
	// Frame: a record is too short or too long, has an unknown format
	// version, or its payload is not exactly one well-formed stored value.
	Frame
	// Decode: a record's payload does not decode as an event (docs/format.md#events).
	Decode
	// Gap: the record of a seq is missing; the next key is a later seq
	// (or keys are out of order).
	Gap
	// Key: a record holds another seq than its key.
	Key
	// Fold: an event breaks a rule of the log given the events before it
	// (the surface, the header fold; docs/rules.md#surface, docs/rules.md#header).
	Fold
	// Read: the store could not be read past this point: bbolt failed or
	// panicked on a damaged page, or a key is malformed.
	Read
	// Missing: the records end before the count of the session's head.
	Missing
	// Extra: every event of the head's count was copied, but the store
	// holds records past it, which were never published.
	Extra
	// Chain: every event was copied, but their chain hash (docs/rules.md#chain-hash)
	// disagrees with the head's: a record or the head changed without
	// failing its CRC.
	Chain
	// Header: the session's header record is damaged; the session is lost
	// whole.
	Header
	// Bucket: the session's header record could not be read; the session
	// is lost whole.
	Bucket
	// Duplicate: the session list names the id a second time (a damaged
	// list); the first one was copied.
	Duplicate
	// Refused: the new store refused an event (or the header) that passed
	// salvage's own checks; it is kept out, with what follows it.
	Refused
	// Unpublished: an Import or Fork was still filling the session when
	// the store was last written; it was never published, and is skipped.
	// This is not damage.
	Unpublished
)

func (c Cause) String() string {
	switch c {
	case None:
		return "none"
	case CRC:
		return "crc"
	case Frame:
		return "frame"
	case Decode:
		return "decode"
	case Gap:
		return "gap"
	case Key:
		return "key"
	case Fold:
		return "fold rule"
	case Read:
		return "unreadable"
	case Missing:
		return "missing"
	case Extra:
		return "extra records"
	case Chain:
		return "chain hash"
	case Header:
		return "header record"
	case Bucket:
		return "session bucket"
	case Duplicate:
		return "duplicate id"
	case Refused:
		return "refused"
	case Unpublished:
		return "never published"
	}
	return "unknown"
}

// Session is what salvage did with one session of the source.
type Session struct {
	ID string
	// Copied is the number of events copied into the new store: the
	// source's seqs [0, Copied).
	Copied int64
	// Lost is set when the session is not in the new store at all (its
	// header record or bucket is damaged, or its id is a duplicate).
	Lost bool
	// End is the number of events the session had: the head's count; when
	// the head record (or, for a lost session, the header record) is
	// damaged, one past the last seq found (at least Copied); -1 when not
	// known. The lost range is [Copied, End).
	End int64
	// Cause is why the copy stopped before End, or why the session was
	// lost or flagged; None when it was copied whole and checks out.
	Cause Cause
	// At is the seq where the cause was found; -1 for the session as a
	// whole.
	At int64
	// Err describes the cause; nil when Cause is None.
	Err error
	// Later counts the records past At, within the lost range, that still
	// pass their frame and CRC check: they are not copied, since the log
	// has no meaning past a hole.
	Later int64
	// HeadErr is set when the head record could not be read or decoded:
	// then End is a lower bound.
	HeadErr error
}

// Whole reports whether the session was copied whole and checked out.
func (s *Session) Whole() bool { return !s.Lost && s.Cause == None && s.HeadErr == nil }

// Skipped reports whether the session was skipped because it was never
// published (an import that did not finish); that is not damage.
func (s *Session) Skipped() bool { return s.Cause == Unpublished }

// LostEvents returns the number of events lost, and whether that number is
// known (it is not when the head is damaged and the records could not be
// walked to their end).
func (s *Session) LostEvents() (int64, bool) {
	if s.End < 0 {
		return 0, false
	}
	return max(0, s.End-s.Copied), true
}

// String is the session's line of the salvage report: the id, "ok",
// "damaged" or "lost", what was copied and what was lost, and why.
// Messages name positions and classes, never content.
func (s *Session) String() string {
	var b strings.Builder
	id := printable.ID(s.ID)
	switch {
	case s.Skipped():
		fmt.Fprintf(&b, "%s skipped: never published (an import or fork that did not finish)", id)
		return b.String()
	case s.Lost:
		fmt.Fprintf(&b, "%s lost: nothing copied", id)
		if s.End >= 0 {
			fmt.Fprintf(&b, ", lost seqs [0,%d)", s.End)
		} else {
			b.WriteString(", lost seqs [0,?)")
		}
	case s.Whole():
		fmt.Fprintf(&b, "%s ok: copied %d %s", id, s.Copied, plural(s.Copied, "event", "events"))
		return b.String()
	default:
		n := s.Copied
		fmt.Fprintf(&b, "%s damaged: copied %d", id, s.Copied)
		if s.End >= 0 {
			fmt.Fprintf(&b, " of %d", s.End)
			n = s.End
		}
		fmt.Fprintf(&b, " %s", plural(n, "event", "events"))
		switch {
		case s.End > s.Copied:
			fmt.Fprintf(&b, ", lost seqs [%d,%d)", s.Copied, s.End)
		case s.End < 0:
			fmt.Fprintf(&b, ", lost seqs [%d,?)", s.Copied)
		}
	}
	if s.Cause != None {
		fmt.Fprintf(&b, "; %s", s.Cause)
		if s.At >= 0 {
			fmt.Fprintf(&b, " at seq %d", s.At)
		}
		if s.Err != nil {
			fmt.Fprintf(&b, ": %v", s.Err)
		}
	}
	if s.Later > 0 {
		fmt.Fprintf(&b, "; %d later %s still pass their CRC but follow the damage", s.Later, plural(s.Later, "record", "records"))
	}
	if s.HeadErr != nil {
		fmt.Fprintf(&b, "; head record unreadable, so the event count is a lower bound: %v", s.HeadErr)
	}
	return b.String()
}

// Report is what Copy or Into did, one Session per session of the source
// in the order of its session list.
type Report struct {
	Sessions []Session
	// List is set when the session list could not be read whole: sessions
	// past the damage are not known, and not in Sessions.
	List error
}

// Damaged reports whether anything was lost or found wrong: a session not
// copied whole, or a damaged session list.
func (r *Report) Damaged() bool {
	if r.List != nil {
		return true
	}
	for i := range r.Sessions {
		if s := &r.Sessions[i]; !s.Whole() && !s.Skipped() {
			return true
		}
	}
	return false
}

// Totals counts the sessions copied whole, damaged (copied in part, or
// copied but found wrong) and lost, and the events copied and (known to
// be) lost.
type Totals struct {
	Whole, Damaged, Lost int
	// Skipped counts sessions never published (not damage).
	Skipped            int
	Copied, LostEvents int64
	// Unknown is set when some session's lost count is not known.
	Unknown bool
}

// Totals adds up the report.
func (r *Report) Totals() Totals {
	var t Totals
	for i := range r.Sessions {
		s := &r.Sessions[i]
		switch {
		case s.Skipped():
			t.Skipped++
			continue
		case s.Lost:
			t.Lost++
		case s.Whole():
			t.Whole++
		default:
			t.Damaged++
		}
		t.Copied += s.Copied
		n, ok := s.LostEvents()
		t.LostEvents += n
		t.Unknown = t.Unknown || !ok
	}
	return t
}

// Summary is the report's last line: the counts of sessions and events,
// and the damaged session list, if it was.
func (r *Report) Summary() string {
	t := r.Totals()
	var b strings.Builder
	fmt.Fprintf(&b, "salvage: %d %s: %d copied whole, %d damaged, %d lost; %d %s copied",
		len(r.Sessions), plural(int64(len(r.Sessions)), "session", "sessions"), t.Whole, t.Damaged, t.Lost,
		t.Copied, plural(t.Copied, "event", "events"))
	switch {
	case t.Unknown:
		fmt.Fprintf(&b, ", at least %d lost", t.LostEvents)
	default:
		fmt.Fprintf(&b, ", %d lost", t.LostEvents)
	}
	if t.Skipped > 0 {
		fmt.Fprintf(&b, "; %d never published, skipped", t.Skipped)
	}
	if r.List != nil {
		fmt.Fprintf(&b, "; the session list is damaged, sessions past the damage are not known: %v", r.List)
	}
	return b.String()
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
