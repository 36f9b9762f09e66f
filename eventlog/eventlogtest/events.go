package eventlogtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"

	crdb "github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/errclass"
)

// RefuseType is the event type that NewValidator's validator refuses.
const RefuseType = "eventlogtest/refuse"

// CreatedAt is the createdAt of the suite's session headers.
const CreatedAt = 1767225600000

// NewValidator returns the suite's validator for a session: it accepts
// every event except those of type RefuseType (ErrRefused), and checks
// that it is fed the session's events in seq order from 0 (ErrOrder).
func NewValidator(h codec.SessionHeader) eventlog.Validator {
	return &validator{id: h.ID}
}

type validator struct {
	id   string
	next int64
}

func (v *validator) Validate(ev *codec.Event) error {
	if ev.Seq != v.next {
		return errclass.Mark(crdb.Newf("eventlogtest: session %q: validator fed seq %d, expected %d",
			crdb.Safe(v.id), crdb.Safe(ev.Seq), crdb.Safe(v.next)), ErrOrder)
	}
	if ev.Type == RefuseType {
		return errclass.Mark(crdb.Newf("eventlogtest: session %q seq %d refused", crdb.Safe(v.id), crdb.Safe(ev.Seq)), ErrRefused)
	}
	v.next++
	return nil
}

// header returns the header line of a session the suite creates.
func header(id string) codec.SessionHeader {
	return codec.NewSessionHeader(id, CreatedAt, "/home/dev/project", "", 0)
}

// childHeader returns the header of a fork child of parent at seq at.
func childHeader(id, parent string, at int64) codec.SessionHeader {
	return codec.NewSessionHeader(id, CreatedAt+1, "/home/dev/project", parent, at+1)
}

// parse builds an event from its JSON line.
func parse(t testing.TB, line string) codec.Event {
	t.Helper()
	ev, err := codec.ParseEvent([]byte(line), codec.Limits{})
	if err != nil {
		t.Fatalf("ParseEvent(%s) = %v", line, err)
	}
	return ev
}

// eventTime is the time of the event with seq seq.
func eventTime(seq int64) int64 { return CreatedAt + 1000*(seq+1) }

// turn returns the three events of turn n from seq: turn/start, a user
// message with text, turn/end.
func turn(t testing.TB, seq, n int64, text string) []codec.Event {
	t.Helper()
	q, _, _ := codec.ToJSON(nil, codec.AppendString(nil, text))
	return []codec.Event{
		parse(t, fmt.Sprintf(`{"type":"turn/start","seq":%d,"time":%d,"data":{"turn":%d,"trigger":{"kind":"message","source":{"kind":"user"}}}}`,
			seq, eventTime(seq), n)),
		parse(t, fmt.Sprintf(`{"type":"user/message","seq":%d,"time":%d,"data":{"content":[{"type":"text","text":%s}],"source":{"kind":"user"},"x-unknown":{"b":1,"a":[0.5,1e+21]}},"surfaceOp":"append"}`,
			seq+1, eventTime(seq+1), q)),
		parse(t, fmt.Sprintf(`{"type":"turn/end","seq":%d,"time":%d,"data":{"turn":%d,"reason":{"kind":"completed"}}}`,
			seq+2, eventTime(seq+2), n)),
	}
}

// turns returns n turns from seq 0 (3n events).
func turns(t testing.TB, n int) []codec.Event {
	t.Helper()
	var evs []codec.Event
	for i := 0; i < n; i++ {
		evs = append(evs, turn(t, int64(3*i), int64(i+1), fmt.Sprintf("prompt %d <&> \u2028", i+1))...)
	}
	return evs
}

// note returns an event of a type the engine does not know, carrying tag.
func note(t testing.TB, seq int64, tag string) codec.Event {
	t.Helper()
	q, _, _ := codec.ToJSON(nil, codec.AppendString(nil, tag))
	return parse(t, fmt.Sprintf(`{"type":"x/note","seq":%d,"time":%d,"data":{"tag":%s}}`, seq, eventTime(seq), q))
}

// refuse returns an event the suite's validator refuses.
func refuse(t testing.TB, seq int64) codec.Event {
	t.Helper()
	return parse(t, fmt.Sprintf(`{"type":%q,"seq":%d,"time":%d,"data":{}}`, RefuseType, seq, eventTime(seq)))
}

// sliceSource is a Source over events, then err (io.EOF when nil).
type sliceSource struct {
	evs []codec.Event
	err error
}

func (s *sliceSource) Next() (codec.Event, error) {
	if len(s.evs) == 0 {
		if s.err != nil {
			return codec.Event{}, s.err
		}
		return codec.Event{}, io.EOF
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	return ev, nil
}

// errSourceBroken is the error of a Source that fails midway.
var errSourceBroken = errors.New("eventlogtest: source broke")

// scanAll returns the payloads of the session's events from seq from.
func scanAll(t testing.TB, s eventlog.Store, id string, from int64) [][]byte {
	t.Helper()
	it, err := s.Scan(context.Background(), id, from)
	if err != nil {
		t.Fatalf("Scan(%q, %d) = %v", id, from, err)
	}
	defer func() {
		if err := it.Close(); err != nil {
			t.Errorf("Iterator.Close() = %v", err)
		}
	}()
	var out [][]byte
	for want := from; ; want++ {
		ev, err := it.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("Scan(%q, %d).Next() = %v", id, from, err)
		}
		if ev.Seq != want {
			t.Fatalf("Scan(%q, %d): event seq %d, want %d", id, from, ev.Seq, want)
		}
		out = append(out, append([]byte(nil), ev.Raw...))
	}
}

// raws returns the payloads of evs.
func raws(evs []codec.Event) [][]byte {
	out := make([][]byte, len(evs))
	for i := range evs {
		out[i] = evs[i].Raw
	}
	return out
}

// equalRaws reports whether two lists of payloads are byte-equal.
func equalRaws(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// snapshot is everything the Store says about one session.
type snapshot struct {
	found  bool
	head   eventlog.Head
	events [][]byte
}

func snap(t testing.TB, s eventlog.Store, id string) snapshot {
	t.Helper()
	h, err := s.Head(context.Background(), id)
	if errors.Is(err, eventlog.ErrNotFound) {
		if _, serr := s.Scan(context.Background(), id, 0); !errors.Is(serr, eventlog.ErrNotFound) {
			t.Fatalf("Head(%q) is ErrNotFound but Scan(%q, 0) = %v", id, id, serr)
		}
		return snapshot{}
	}
	if err != nil {
		t.Fatalf("Head(%q) = %v", id, err)
	}
	return snapshot{found: true, head: h, events: scanAll(t, s, id, 0)}
}

func (a snapshot) equal(b snapshot) bool {
	return a.found == b.found && reflect.DeepEqual(a.head, b.head) && equalRaws(a.events, b.events)
}

// wantHead checks h against a recomputation from the header and payloads.
func wantHead(t testing.TB, h eventlog.Head, hdr codec.SessionHeader, evs [][]byte) {
	t.Helper()
	if !bytes.Equal(h.Header.Raw, hdr.Raw) {
		t.Errorf("Head(%q).Header.Raw differs from the created header", hdr.ID)
	}
	c := eventlog.ChainStart(codec.EncodeRecord(nil, hdr.Raw))
	var stored, turns int64
	last := hdr.CreatedAt
	for _, p := range evs {
		c = eventlog.ChainNext(c, p)
		stored += int64(len(codec.EncodeEventRecord(nil, p)))
		ev, err := codec.DecodeEvent(p)
		if err != nil {
			t.Fatalf("DecodeEvent = %v", err)
		}
		if ev.Type == codec.TypeTurnStart {
			turns++
		}
		last = ev.Time
	}
	if h.Next != int64(len(evs)) {
		t.Errorf("Head(%q).Next = %d, want %d", hdr.ID, h.Next, len(evs))
	}
	if h.Turns != turns {
		t.Errorf("Head(%q).Turns = %d, want %d", hdr.ID, h.Turns, turns)
	}
	if h.LastTime != last {
		t.Errorf("Head(%q).LastTime = %v, want %v", hdr.ID, h.LastTime, last)
	}
	if h.StoredBytes != stored {
		t.Errorf("Head(%q).StoredBytes = %d, want %d", hdr.ID, h.StoredBytes, stored)
	}
	if h.Chain != c {
		t.Errorf("Head(%q).Chain = %x, want %x", hdr.ID, h.Chain, c)
	}
}

// mustCreate creates a session with the given events.
func mustCreate(t testing.TB, s eventlog.Store, id string, evs []codec.Event) {
	t.Helper()
	ctx := context.Background()
	if err := s.Create(ctx, header(id)); err != nil {
		t.Fatalf("Create(%q) = %v", id, err)
	}
	if len(evs) > 0 {
		if err := s.Append(ctx, id, evs); err != nil {
			t.Fatalf("Append(%q, %d events) = %v", id, len(evs), err)
		}
	}
}
