package transcript

import (
	"math"

	"github.com/sessionlog/sessionlog/codec"
)

// configKeys are the body keys of each API that a recorded request's
// config holds (docs/gateway.md#what-is-recorded: model and the sampling, reasoning and output
// fields), carried verbatim under config.params. Anything else (stream,
// metadata, client_metadata, prompt_cache_key, store, …) is not config:
// a change of it is no header change.
var configKeys = map[string][]string{
	APIAnthropic: {"max_tokens", "temperature", "top_p", "top_k", "stop_sequences", "thinking", "output_config"},
	APIChat: {"max_tokens", "max_completion_tokens", "temperature", "top_p", "stop", "reasoning_effort", "thinking",
		"frequency_penalty", "presence_penalty", "seed", "response_format", "verbosity"},
	APIResponses: {"max_output_tokens", "temperature", "top_p", "reasoning", "text"},
}

// providerOf is the provider of an API's models.
func providerOf(api string) string {
	if api == APIAnthropic {
		return "anthropic"
	}
	return "openai"
}

// gatewayConfig builds a recorded request's header config: provider,
// model, the typed keys of docs/rules.md#epochheader and docs/wire.md#renderers the body gives
// (temperature, maxTokens, stop, thinking, reasoningEffort), wire = the
// API's name, source (the gateway's "gateway", or the transcript format
// a request was rebuilt from), then params: the API's own config keys as
// the body has them, in body order.
func gatewayConfig(api string, v value, source string) []byte {
	want := configKeys[api]
	var params codec.Object
	fields := map[string]value{}
	v.each(func(k string, m value) {
		for _, w := range want {
			if k == w {
				params.Value(k, m)
				fields[k] = m
				return
			}
		}
	})
	var o codec.Object
	o.Str("provider", providerOf(api)).Str("model", v.get("model").text())
	if t, ok := fields["temperature"].num(); ok && !math.IsInf(t, 0) && !math.IsNaN(t) {
		o.Number("temperature", t)
	}
	maxKey := map[string]string{APIAnthropic: "max_tokens", APIChat: "max_tokens", APIResponses: "max_output_tokens"}[api]
	if api == APIChat && fields["max_completion_tokens"] != nil {
		maxKey = "max_completion_tokens"
	}
	if n, ok := fields[maxKey].num(); ok && n == math.Trunc(n) && math.Abs(n) <= 1<<53 {
		o.Int("maxTokens", int64(n))
	}
	stopKey := "stop"
	if api == APIAnthropic {
		stopKey = "stop_sequences"
	}
	if stop, ok := stopList(fields[stopKey]); ok {
		o.Value("stop", stop)
	}
	o.Str("wire", api)
	if t, ok := fields["thinking"].get("type").str(); ok {
		o.Str("thinking", t)
	}
	var effort value
	switch api {
	case APIAnthropic:
		effort = fields["output_config"].get("effort")
	case APIChat:
		effort = fields["reasoning_effort"]
	case APIResponses:
		effort = fields["reasoning"].get("effort")
	}
	if e, ok := effort.str(); ok {
		o.Str("reasoningEffort", e)
	}
	o.Str("source", source)
	if params.Len() > 0 {
		o.Value("params", params.Bytes())
	}
	return o.Bytes()
}

// stopList is a stop value as config.stop: a list of strings, or one
// string as a list of it.
func stopList(v value) ([]byte, bool) {
	switch v.kind() {
	case codec.KindString:
		return codec.Array(v), true
	case codec.KindArray:
		for _, e := range v.elems() {
			if e.kind() != codec.KindString {
				return nil, false
			}
		}
		return v, true
	}
	return nil, false
}

// headerOf builds the header a request sends (docs/rules.md#epochheader, canonical:
// system and tools absent when empty).
func (req *request) header() []byte {
	var h codec.Object
	h.Value("config", req.config)
	if req.system != "" {
		h.Str("system", req.system)
	}
	if len(req.tools) > 0 {
		h.Array("tools", req.tools...)
	}
	return h.Bytes()
}
