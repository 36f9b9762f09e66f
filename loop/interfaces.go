package loop

import (
	"context"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/header"
)

// Store is the log the loop writes. *boltlog.Log implements it.
type Store interface {
	Create(ctx context.Context, h codec.SessionHeader) error
	Append(ctx context.Context, session string, events []codec.Event) error
	Head(ctx context.Context, session string) (eventlog.Head, error)
	Scan(ctx context.Context, session string, from int64) (eventlog.Iterator, error)
}

// Forker is a Store that can fork sessions (docs/rules.md#fork).
type Forker interface {
	Store
	Fork(ctx context.Context, source string, at int64, child codec.SessionHeader) error
}

// Provider streams a model's answer to a request.
type Provider interface {
	// Stream sends req and returns its answer as a stream of chunks. The
	// stream must honour ctx: once ctx is done, Next returns an error. A
	// failure carries a *ProviderError when it has a code.
	Stream(ctx context.Context, req *Request) (Stream, error)
}

// Stream is one streamed answer.
type Stream interface {
	// Next returns the next chunk, io.EOF at the end, or the provider's
	// error. A *ProviderError in the error's chain gives the code that
	// turn/end records (otherwise "PROVIDER").
	Next() (Chunk, error)
	// Close releases the stream; it may be called after an error.
	Close() error
}

// Request is what the loop hands a provider: the request's canonical JSON
// (docs/rules.md#the-request), exactly the bytes whose digest the log records, and the
// header it was built under.
//
// Caveats: JSON is valid until the stream is closed; the loop reuses its
// storage for the next request. A provider that keeps it must copy it.
type Request struct {
	Turn, Step int64
	JSON       []byte
	Digest     [32]byte
	Header     header.Snapshot
}

// Host supplies what the agent host decides per step (docs/loop.md#steps, step 1): the
// rendered system prompt, the tools and the call config.
type Host interface {
	Step(ctx context.Context, turn, step int64) (StepSpec, error)
}

// StepSpec is the host's answer for one step.
type StepSpec struct {
	// System is the full system prompt; "" means none.
	System string
	// Tools are offered to the model in this order.
	Tools []Tool
	// Config is the call config; Model is required.
	Config header.Config
}

// Tool is a tool the model may call.
type Tool struct {
	Name        string
	Description string
	// Parameters is the tool's JSON Schema, kept byte-exact.
	Parameters []byte
	// Run executes a call. An error, a panic or a missing Run becomes an
	// error result; the turn goes on.
	Run func(ctx context.Context, c Call) (Result, error)
}

// Call is one tool call of the model: its id, the tool's name and the
// arguments (a string holding raw JSON).
type Call struct {
	ID, Name, Arguments string
}

// Result is a tool's answer.
type Result struct {
	// Content is a content-block array (JSON).
	Content []byte
	IsError bool
}

// Source is where a message came from: {kind:"user"} or
// {kind:"plugin",plugin}.
type Source struct {
	Kind   string
	Plugin string
}

// User is the source of the user's own messages.
var User = Source{Kind: "user"}

// Plugin returns the source of messages a plugin adds.
func Plugin(name string) Source { return Source{Kind: "plugin", Plugin: name} }

// Contributor contributes to the session prefix (docs/loop.md#steps, step 2). It
// receives a Composer (to append events that join this request's history)
// and next, which returns the rest of the waterfall's composition; the
// canonical contribution is [mine, ...next()], which makes registration
// order wire order. Messages are JSON (docs/format.md#content-blocks).
type Contributor func(ctx context.Context, c *Composer, next func() ([][]byte, error)) ([][]byte, error)

// PreStep is what pre-step hooks receive (docs/loop.md#steps, step 4).
type PreStep struct {
	Turn, Step int64
	// System is the full system prompt of the step.
	System string
	// Prefix is the composed session prefix (do not modify).
	Prefix [][]byte
}

// PreStepHook runs before the compaction gate of every step. An error ends
// the turn with code "PRE_STEP".
type PreStepHook func(ctx context.Context, p PreStep) error
