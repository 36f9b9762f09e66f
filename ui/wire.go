package ui

import (
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/wire"
)

// WireRenderers returns a Renderer for each renderer of package wire
// (docs/wire.md), in name order: the step page then shows the body each
// provider API would have received for the step, byte for byte what
// logtool replay --wire prints.
func WireRenderers() []Renderer {
	var out []Renderer
	for _, name := range wire.Names() {
		r, err := wire.Lookup(name)
		if err != nil {
			continue // Names lists only what Lookup finds
		}
		out = append(out, Renderer{Name: name, Body: func(s rebuild.Step) ([]byte, error) {
			return r.AppendBody(nil, s.Request, &s.Header)
		}})
	}
	return out
}
