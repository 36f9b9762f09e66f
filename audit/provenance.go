package audit

import (
	"context"
	"sort"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
)

// Provenance says where the requests a session rebuilds come from, for
// the note logtool and the UI show beside a rebuilt request, a rendered
// wire body or a cache figure. A session imported from an agent's own
// transcript (docs/transcripts.md: its first event is a source/line) rebuilds each
// request from what the transcript records of it, which is not all the
// agent sent; where the recording gateway recorded the same agent
// session (docs/gateway.md#sessions: its header's gateway.agentSession is the imported
// session's id), that record holds the bytes the model received.
type Provenance struct {
	// Format is the transcript's format ("codex", "claude-code",
	// "gemini-cli"); "" when the session was not imported.
	Format string
	// Missing lists, for people, what the transcript does not record of
	// the requests the agent sent.
	Missing []string
	// Recorded lists the sessions the gateway recorded of the same agent
	// session, its main lane (no parentSession) first.
	Recorded []string
}

// Imported reports whether the session was imported from a transcript.
func (p Provenance) Imported() bool { return p.Format != "" }

// Note is the note for people ("" for a session not imported): that the
// requests are reconstructed from the transcript, what it does not
// record, and the gateway's record of the same session where there is
// one.
func (p Provenance) Note() string {
	if !p.Imported() {
		return ""
	}
	s := "reconstructed from the " + p.Format + " transcript, not what the agent sent: the transcript does not record " +
		strings.Join(p.Missing, "; ") + "."
	switch len(p.Recorded) {
	case 0:
	case 1:
		s += " The gateway recorded this session as " + p.Recorded[0] + ": 'replay " + p.Recorded[0] +
			" --wire --recorded' prints the bytes the model received."
	default:
		s += " The gateway recorded this session as " + strings.Join(p.Recorded, ", ") + " (its lanes): 'replay " +
			p.Recorded[0] + " --wire --recorded' prints the bytes the model received."
	}
	return s
}

// Lister lists a store's sessions; every eventlog.Store is one.
type Lister interface {
	Sessions(ctx context.Context) ([]eventlog.Head, error)
}

// headerScan bounds the events SessionProvenance reads looking for the
// session's first header snapshot.
const headerScan = 4096

// SessionProvenance reads where the requests of the session of head come
// from: its first event (a source/line names the format it was imported
// from), its first request/header (what the transcript records of the
// system prompt and tools), and, when st is a Lister, the sessions the
// gateway recorded of the same agent session.
func SessionProvenance(ctx context.Context, st Store, head eventlog.Head) (Provenance, error) {
	var p Provenance
	id := head.Header.ID
	var first []byte // the first header snapshot, storage form
	n := 0
	err := Scan(ctx, st, id, 0, head.Next-1, func(ev *codec.Event) error {
		if n == 0 {
			if ev.Type != "source/line" {
				return ErrStop
			}
			p.Format = LookupString(ev.Raw, "data", "format")
		}
		n++
		if ev.Type == codec.TypeRequestHeader {
			if h, ok := ev.Data.(*codec.RequestHeader); ok {
				first = h.Header
			} else {
				first, _, _ = Lookup(ev.Raw, "data", "header")
			}
			return ErrStop
		}
		if n >= headerScan {
			return ErrStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrStop) {
		return p, err
	}
	if !p.Imported() {
		return p, nil
	}
	p.Missing = missingOf(p.Format, first)
	if l, ok := st.(Lister); ok {
		heads, err := l.Sessions(ctx)
		if err != nil {
			return p, errors.Wrap(err, "audit: list the sessions")
		}
		var main, lanes []string
		for _, h := range heads {
			hj, err := h.Header.AppendJSON(nil)
			if err != nil {
				continue
			}
			mp, err := codec.FromJSON(nil, hj, codec.Limits{})
			if err != nil || LookupString(mp, "gateway", "agentSession") != id {
				continue
			}
			if h.Header.ParentSession == "" {
				main = append(main, h.Header.ID)
			} else {
				lanes = append(lanes, h.Header.ID)
			}
		}
		sort.Strings(main)
		sort.Strings(lanes)
		p.Recorded = append(main, lanes...)
	}
	return p, nil
}

// missingOf says what a transcript of format f does not record of the
// requests, given the first header snapshot it mapped (storage form; nil:
// none).
func missingOf(f string, h []byte) []string {
	system := LookupString(h, "system") != ""
	tools := false
	if t, ok, _ := Lookup(h, "tools"); ok {
		tok := Scalar(t)
		tools = tok.Kind == codec.KindArray && tok.N > 0
	}
	var out []string
	if !system && f != "codex" {
		out = append(out, "the system prompt")
	}
	if !tools {
		out = append(out, "the tools")
	}
	switch f {
	case "claude-code":
		if system {
			// The requests are rebuilt from its record of them.
			out = append(out, "the first system block (Claude Code's billing header)",
				"the request's metadata and stream flag",
				"which one-block contents were sent as plain strings (as cache markers moved)")
		} else {
			out = append(out, "the request's fields outside the conversation (metadata, thinking and output settings, cache markers)")
		}
	case "codex":
		out = append(out, "the request's fields outside the conversation (reasoning and text settings, tool_choice, include, prompt_cache_key, client_metadata)")
	case "gemini-cli":
		out = append(out, "the generation config", "the function call ids as sent")
	default:
		out = append(out, "the request's fields outside the conversation")
	}
	return out
}
