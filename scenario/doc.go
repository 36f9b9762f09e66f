// Package scenario runs the real loop offline against a scripted model
// (docs/cli.md#scenario-files): a scenario file scripts the prompts, the system prompt,
// tool and config changes, injections, prefix contributors, the model's
// replies and the tools' results. Options.Provider swaps the scripted
// model for a live one (logtool run --provider): the scripted tool results
// then answer the model's calls by tool name, since their ids cannot be
// known in advance. logtool run and logtool demo drive it,
// and the loop's tests generate scenarios to prove that every request the
// model received is the log's rebuild of it. Parse checks a whole file
// before anything runs, and its errors say where: line and column for JSON
// syntax, wrong types and unknown keys, scenario turn, reply and block for
// a malformed content block.
package scenario
