package header

import (
	"strings"
)

// Apply returns the header that results from applying d to s (docs/rules.md#deltas),
// in canonical form:
//
//   - system: s.System is split on "\n" into n lines (absent is zero
//     lines); the result is lines.slice(0, KeepStart) ++ Insert ++
//     lines.slice(n - KeepEnd) joined with "\n", and zero lines (or the
//     empty string) is absent. slice is ECMAScript's Array.prototype.slice:
//     a negative index counts from the end and then clamps at 0, an index
//     past the end clamps to n. So KeepStart > n keeps every line, an
//     overlapping KeepStart+KeepEnd repeats the overlap, a KeepEnd > n
//     keeps the last 2n-KeepEnd lines or none, and KeepEnd <= 0 keeps none.
//   - tools: the tools named in Removed are dropped (every tool with that
//     name), each remaining tool whose name is in Changed is replaced in
//     place (by the last Changed entry with that name), Added is appended
//     at the end; names that match nothing are ignored, and Added is
//     appended even when its names are already present, as DSH did.
//   - config: replaced by d.Config when set.
//   - prefix: replaced by d.Prefix when d.HasPrefix; an empty one is absent.
//
// INVARIANTS: s and d are not modified, and the result shares no mutable
// state with them that Apply writes to. Apply never panics, whatever the
// counts.
func Apply(s Snapshot, d Delta) Snapshot {
	out := s
	if d.System != nil {
		out.System = applySystem(s.System, *d.System)
	}
	if d.Tools != nil {
		out.Tools = applyTools(s.Tools, *d.Tools)
	}
	if d.Config != nil {
		out.Config = *d.Config
	}
	if d.HasPrefix {
		out.Prefix = d.Prefix
	}
	return out.canonical()
}

// lines splits a system prompt into lines; absent is zero lines.
func lines(system string) []string {
	if system == "" {
		return nil
	}
	return strings.Split(system, "\n")
}

// clampIndex converts an ECMAScript slice argument to an index in [0, n].
func clampIndex(rel, n int64) int64 {
	switch {
	case rel < 0:
		return max(rel+n, 0) // rel ≥ MinInt64 and n ≥ 0: no overflow
	case rel > n:
		return n
	}
	return rel
}

// tailStart is the start index of lines.slice(n - keepEnd), computed
// without overflowing int64.
func tailStart(keepEnd, n int64) int64 {
	if keepEnd <= 0 {
		return n // n - keepEnd ≥ n
	}
	return clampIndex(n-keepEnd, n)
}

func applySystem(prev string, sd SystemDelta) string {
	ls := lines(prev)
	n := int64(len(ls))
	head := ls[:clampIndex(sd.KeepStart, n)]
	tail := ls[tailStart(sd.KeepEnd, n):]
	parts := len(head) + len(sd.Insert) + len(tail)
	if parts == 0 {
		return ""
	}
	var b strings.Builder
	size := parts - 1
	for _, group := range [][]string{head, sd.Insert, tail} {
		for _, l := range group {
			size += len(l)
		}
	}
	b.Grow(size)
	first := true
	for _, group := range [][]string{head, sd.Insert, tail} {
		for _, l := range group {
			if !first {
				b.WriteByte('\n')
			}
			first = false
			b.WriteString(l)
		}
	}
	return b.String()
}

func applyTools(prev []Tool, td ToolsDelta) []Tool {
	removed := make(map[string]struct{}, len(td.Removed))
	for _, n := range td.Removed {
		removed[n] = struct{}{}
	}
	changed := make(map[string]Tool, len(td.Changed))
	for _, t := range td.Changed {
		changed[t.Name] = t // the last entry wins, as in a JS Map
	}
	out := make([]Tool, 0, len(prev)+len(td.Added))
	for _, t := range prev {
		if _, ok := removed[t.Name]; ok {
			continue
		}
		if c, ok := changed[t.Name]; ok {
			t = c
		}
		out = append(out, t)
	}
	out = append(out, td.Added...)
	if len(out) == 0 {
		return nil
	}
	return out
}

// Diff returns the delta the loop writes for an in-instance change from
// prev to next (DSH's diffHeader over canonical headers):
//
//   - system, when the prompts differ: KeepStart is the common line
//     prefix, KeepEnd the common line suffix that does not overlap it,
//     Insert the lines of next between them;
//   - tools, when they differ by JSON position by position: Added are the
//     tools of next whose name prev lacks (in next's order), Removed the
//     names of prev's tools missing from next (in prev's order), Changed
//     the tools of next whose name prev has with different JSON;
//   - config, when the configs differ: next's whole config;
//   - prefix, when the prefixes differ: next's whole prefix ([] for
//     absent).
//
// ok reports whether the delta expresses the change: Apply(prev, d) is
// Equal to next, tools in the same order with the same bytes. When it is
// false (a pure tool reorder, say) the loop writes a fallback snapshot
// instead. Headers that are Equal give an empty delta and ok.
func Diff(prev, next Snapshot) (d Delta, ok bool) {
	if prev.System != next.System {
		d.System = diffSystem(prev.System, next.System)
	}
	if !toolsEqual(prev.Tools, next.Tools) {
		d.Tools = diffTools(prev.Tools, next.Tools)
	}
	if !prev.Config.Equal(next.Config) {
		c := next.Config
		d.Config = &c
	}
	if !prefixEqual(prev.Prefix, next.Prefix) {
		d.HasPrefix = true
		d.Prefix = next.Prefix
	}
	return d, Apply(prev, d).Equal(next)
}

func diffSystem(prev, next string) *SystemDelta {
	a, b := lines(prev), lines(next)
	keepStart := 0
	for keepStart < len(a) && keepStart < len(b) && a[keepStart] == b[keepStart] {
		keepStart++
	}
	keepEnd := 0
	for keepEnd < len(a)-keepStart && keepEnd < len(b)-keepStart &&
		a[len(a)-1-keepEnd] == b[len(b)-1-keepEnd] {
		keepEnd++
	}
	return &SystemDelta{
		KeepStart: int64(keepStart),
		KeepEnd:   int64(keepEnd),
		Insert:    append([]string{}, b[keepStart:len(b)-keepEnd]...),
	}
}

func diffTools(prev, next []Tool) *ToolsDelta {
	prevByName := make(map[string]Tool, len(prev))
	for _, t := range prev {
		prevByName[t.Name] = t // the last entry wins, as in a JS Map
	}
	nextNames := make(map[string]struct{}, len(next))
	for _, t := range next {
		nextNames[t.Name] = struct{}{}
	}
	td := &ToolsDelta{Added: []Tool{}, Removed: []string{}, Changed: []Tool{}}
	for _, t := range next {
		before, ok := prevByName[t.Name]
		switch {
		case !ok:
			td.Added = append(td.Added, t)
		case string(before.JSON) != string(t.JSON):
			td.Changed = append(td.Changed, t)
		}
	}
	for _, t := range prev {
		if _, ok := nextNames[t.Name]; !ok {
			td.Removed = append(td.Removed, t.Name)
		}
	}
	return td
}
