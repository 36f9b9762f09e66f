package loop_test

import (
	"context"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/loop"
)

// longAnswer streams n text deltas of text and a finish, with no
// block-end: the loop builds the block from its deltas.
type longAnswer struct {
	n    int
	text string
}

func (p longAnswer) Stream(context.Context, *loop.Request) (loop.Stream, error) {
	return &longStream{left: p.n, text: p.text}, nil
}

type longStream struct {
	left    int
	text    string
	started bool
	done    bool
}

func (s *longStream) Next() (loop.Chunk, error) {
	switch {
	case !s.started:
		s.started = true
		return loop.Chunk{Type: loop.ChunkBlockStart, BlockType: "text"}, nil
	case s.left > 0:
		s.left--
		return loop.Chunk{Type: loop.ChunkTextDelta, Text: s.text}, nil
	case !s.done:
		s.done = true
		return loop.Chunk{Type: loop.ChunkFinish, Reason: []byte(`{"kind":"stop"}`)}, nil
	}
	return loop.Chunk{}, io.EOF
}

func (s *longStream) Close() error { return nil }

// countingStore counts the appends of assistant chunks that carry no
// assistant/message: the groups committed ahead of it.
type countingStore struct {
	loop.Store
	ahead   atomic.Int32
	largest atomic.Int32 // the most events in one group
}

func (s *countingStore) Append(ctx context.Context, id string, evs []codec.Event) error {
	if evs[0].Type == codec.TypeAssistantChunk && evs[len(evs)-1].Type == codec.TypeAssistantChunk {
		s.ahead.Add(1)
		if n := int32(len(evs)); n > s.largest.Load() {
			s.largest.Store(n)
		}
	}
	return s.Store.Append(ctx, id, evs)
}

// TestLongAnswerCommittedInGroups (issue 19 item 7): a long answer's
// chunks are committed in groups as they come, so that memory holds the
// blocks being built and not the stream; the message built from 32,768
// deltas (with += per delta this took seconds, and minutes at 20 MB) is
// their concatenation, and the session keeps every rule.
func TestLongAnswerCommittedInGroups(t *testing.T) {
	h := newHarness(t)
	cs := &countingStore{Store: h.store}
	const n, piece = 32768, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" +
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	l, err := loop.Create(context.Background(), cs, "s", loop.Options{Provider: longAnswer{n, piece}, Host: h.host,
		Now: func() float64 { return 7 }})
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.Send(context.Background(), loop.Text("go"), loop.User)
	if err != nil || out.Reason != "completed" {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if got := cs.ahead.Load(); got < 3 {
		t.Fatalf("%d groups of chunks were committed ahead of the message; want ≥ 3 for %d KiB of chunks", got, n*len(piece)>>10)
	}
	_, evs := readSession(t, h.store, "s")
	var msg *codec.AssistantMessage
	for i := range evs {
		if m, ok := evs[i].Data.(*codec.AssistantMessage); ok {
			msg = m
		}
	}
	if msg == nil || len(msg.Content.Blocks) != 1 || msg.Content.Blocks[0].Text != strings.Repeat(piece, n) {
		t.Fatal("the assistant message is not the concatenation of the deltas")
	}
	checkTheorem(t, h.store, "s", nil)
}

// TestLongAnswerSmallChunksGrouped (issue 19 item 7): a group is bounded
// by the memory its chunks take, not by their stored bytes alone. A model
// that streams a word per event sends tens of thousands of events per MiB
// of chunk bytes, and each holds an event and its view in the loop and
// another in the store while the group commits: 1 MiB of chunk bytes
// held 7 MiB at once.
func TestLongAnswerSmallChunksGrouped(t *testing.T) {
	h := newHarness(t)
	cs := &countingStore{Store: h.store}
	const n = 65536
	l, err := loop.Create(context.Background(), cs, "s", loop.Options{Provider: longAnswer{n, "word "}, Host: h.host,
		Now: func() float64 { return 7 }})
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.Send(context.Background(), loop.Text("go"), loop.User)
	if err != nil || out.Reason != "completed" {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if got := cs.largest.Load(); got > 4096 {
		t.Errorf("a group of %d chunks was held before its commit; want at most 4096 (1 MiB at 256 bytes each)", got)
	}
	checkTheorem(t, h.store, "s", nil)
}

// TestLongAnswerHistoryOnce (issue 19 item 7): the loop's record of its
// history (the fold it builds requests from, and the compaction gate's
// view of it) holds a long answer's text once: each projected the
// message, and a 16 MiB answer stayed in memory twice after its turn.
func TestLongAnswerHistoryOnce(t *testing.T) {
	h := newHarness(t)
	const n, piece = 4096, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" +
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	const size = n * len(piece) * 32
	l, err := loop.Create(context.Background(), h.store, "s", loop.Options{Provider: longAnswer{n, strings.Repeat(piece, 32)},
		Host: h.host, Now: func() float64 { return 7 }})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, err := l.Send(context.Background(), loop.Text("go"), loop.User)
	if err != nil || out.Reason != "completed" {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	// The store's applier copies the answer into the tree in the
	// background, holding it a while: done now, it holds nothing when the
	// heap is read (on a loaded machine it was still at work then).
	if err := h.store.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if kept := int64(after.HeapAlloc) - int64(before.HeapAlloc); kept > int64(size)*3/2 {
		t.Errorf("after a %d MiB answer the heap holds %d MiB more; want its text once and a half at most", size>>20, kept>>20)
	}
	runtime.KeepAlive(l)
}
