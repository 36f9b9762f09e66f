package header

import (
	"bytes"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
)

// Delta is the data of a request/header-delta event (docs/rules.md#deltas): the
// amendments to the header in force. A nil field leaves that part of the
// header as it was.
//
// INVARIANTS: a Delta returned by DecodeDelta or Diff is never modified
// afterwards; its slices may be shared.
type Delta struct {
	// System amends the system prompt line by line.
	System *SystemDelta
	// Tools amends the tool list by name.
	Tools *ToolsDelta
	// Config replaces the whole config.
	Config *Config
	// Prefix replaces the whole session prefix when HasPrefix is set; an
	// empty Prefix (the stored []) makes the prefix absent.
	Prefix    [][]byte
	HasPrefix bool
}

// SystemDelta amends a system prompt split on "\n" into n lines (absent is
// zero lines): the result is
// lines.slice(0, KeepStart) ++ Insert ++ lines.slice(n - KeepEnd), with
// ECMAScript's Array.prototype.slice, joined with "\n" (see Apply).
type SystemDelta struct {
	KeepStart, KeepEnd int64
	Insert             []string
}

// ToolsDelta amends a tool list by name: drop the tools named in Removed,
// replace those named in Changed in place, append Added at the end.
type ToolsDelta struct {
	Added   []Tool
	Removed []string
	Changed []Tool
}

// Empty reports whether d changes nothing.
func (d Delta) Empty() bool {
	return d.System == nil && d.Tools == nil && d.Config == nil && !d.HasPrefix
}

// DecodeDelta decodes the msgpack image of a request/header-delta data
// object (what codec.HeaderDelta.Raw holds). It checks the keys the engine
// reads as Decode does: system is an object with integer keepStart and
// keepEnd (within ±2^53; negative and out-of-range counts are kept, Apply
// gives them their ECMAScript meaning) and an array of strings insert;
// tools an object with arrays added and changed of tools and an array of
// strings removed; config a config object; messagePrefix an array of
// messages. All of these keys are required inside system and tools, and
// none may be an explicit null. Unknown keys are ignored. Errors name the
// key and are marked ErrInvalid (ErrCorrupt for bytes that are not one
// stored value).
//
// The Delta does not alias mp.
func DecodeDelta(mp []byte) (Delta, error) {
	if err := whole(mp, "delta"); err != nil {
		return Delta{}, err
	}
	mp = bytes.Clone(mp)
	var d Delta
	var have seen
	f := codec.NewFields(mp, codec.PrefixHeader)
	err := f.Object("delta", func(k []byte) error {
		key := string(k)
		var err error
		switch key {
		case "system":
			if err = have.mark(1, "delta.system"); err == nil {
				d.System, err = decodeSystemDelta(f, "delta.system")
			}
		case "tools":
			if err = have.mark(2, "delta.tools"); err == nil {
				d.Tools, err = decodeToolsDelta(f, "delta.tools")
			}
		case "config":
			if err = have.mark(4, "delta.config"); err == nil {
				var c Config
				c, err = decodeConfig(f, "delta.config")
				d.Config = &c
			}
		case "messagePrefix":
			if err = have.mark(8, "delta.messagePrefix"); err == nil {
				d.HasPrefix = true
				d.Prefix, err = decodeMessages(f, "delta.messagePrefix")
			}
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		return Delta{}, err
	}
	return d, nil
}

func decodeSystemDelta(f codec.Fields, path string) (*SystemDelta, error) {
	sd := &SystemDelta{}
	var have seen
	err := f.Object(path, func(k []byte) error {
		key := string(k)
		var err error
		p := join(path, key)
		switch key {
		case "keepStart":
			if err = have.mark(1, p); err == nil {
				sd.KeepStart, err = f.Integer(p)
			}
		case "keepEnd":
			if err = have.mark(2, p); err == nil {
				sd.KeepEnd, err = f.Integer(p)
			}
		case "insert":
			if err = have.mark(4, p); err == nil {
				sd.Insert, err = decodeStrings(f, p)
			}
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := missing(have, path, "keepStart", "keepEnd", "insert"); err != nil {
		return nil, err
	}
	return sd, nil
}

func decodeToolsDelta(f codec.Fields, path string) (*ToolsDelta, error) {
	td := &ToolsDelta{}
	var have seen
	err := f.Object(path, func(k []byte) error {
		key := string(k)
		var err error
		p := join(path, key)
		switch key {
		case "added":
			if err = have.mark(1, p); err == nil {
				td.Added, err = decodeTools(f, p)
			}
		case "removed":
			if err = have.mark(2, p); err == nil {
				td.Removed, err = decodeStrings(f, p)
			}
		case "changed":
			if err = have.mark(4, p); err == nil {
				td.Changed, err = decodeTools(f, p)
			}
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := missing(have, path, "added", "removed", "changed"); err != nil {
		return nil, err
	}
	return td, nil
}

// missing refuses the first of names (bit i for names[i]) not in have.
func missing(have seen, path string, names ...string) error {
	for i, n := range names {
		if have&(1<<i) == 0 {
			return invalidf("header: %s: missing key %s", errors.Safe(path), errors.Safe(n))
		}
	}
	return nil
}
