package fuzz

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/loggen"
	"github.com/sessionlog/sessionlog/rebuild"
)

// FuzzRebuild drives the rebuild of a session log from fuzz bytes. The
// input first chooses a valid log (loggen's seed and options), then a list
// of mutations of its event lines: drop, duplicate or swap lines, flip a
// surface op, move a replace range, change a seq, truncate the log, cut a
// line, renumber the seqs from a line on. The mutated log goes through
// codec.ParseEvent and rebuild.NewFold(false), as import does, up to the
// first refusal. The events accepted before it then go through the
// incremental Builder (with and without full requests) and the
// from-scratch Steps. Properties:
//
//  1. Nothing panics, and every refusal is classified.
//  2. A prefix the fold accepts rebuilds: the Builder and Steps refuse
//     none of it (docs/rules.md#validation: a log the store accepts is a log that
//     rebuilds).
//  3. The Builder equals the from-scratch rebuild on every step: the same
//     steps, boundaries, null requests, request bytes, digests and
//     recorded digests; the digest-only Builder gives the same digests and
//     keeps no request.
//
// Input layout (every byte string is a valid plan; missing bytes read as
// zero): byte 0 holds the options (see rebuildPlan), bytes 1–2 the event
// count, bytes 3–6 the loggen seed, then up to maxMutations mutations of
// 4 bytes each: the operation, two positions, and an amount.
func FuzzRebuild(f *testing.F) {
	for _, seed := range rebuildSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := parsePlan(data)
		lines, err := p.lines()
		if err != nil {
			t.Fatalf("loggen(%+v) = %v", p, err)
		}
		h, err := codec.ParseSessionHeader(lines[0], codec.Limits{})
		if err != nil {
			t.Fatalf("loggen header %q: %v", lines[0], err)
		}
		evLines := p.mutate(lines[1:])
		accepted := acceptedPrefix(t, evLines)
		checkRebuild(t, h, accepted)
	})
}

// maxMutations bounds the mutations of one input, so that each run stays
// fast.
const maxMutations = 24

// Mutation operations (the first byte of a mutation, modulo mutationOps).
const (
	mutDrop     = iota // drop line a
	mutDup             // duplicate line a after itself
	mutSwap            // swap lines a and b
	mutFlipOp          // change line a's surfaceOp (append ⇄ replace ⇄ none)
	mutRange           // move the start or end of line a's replace range
	mutSeq             // change line a's seq by a small amount
	mutTruncate        // drop every line from a on
	mutCut             // cut line a at a byte position
	mutRenumber        // renumber the seqs from line a on, contiguously
	mutationOps
)

// rebuildPlan is what the fuzz bytes choose.
type rebuildPlan struct {
	seed         int64
	events       int
	compactEvery int
	realistic    bool
	// renumber renumbers every seq contiguously after the mutations, so
	// that drops, duplicates and swaps reach the surface and header rules
	// instead of stopping at the seq order.
	renumber  bool
	mutations [][4]byte
}

// parsePlan reads a plan from data. Byte 0: bit 0 realistic, bits 1–2 the
// compaction interval (0: one turn in four, else 6, 20 or 60 events),
// bit 3 renumber. Bytes 1–2: events = 1 + n%400. Bytes 3–6: the seed.
func parsePlan(data []byte) rebuildPlan {
	var head [7]byte
	copy(head[:], data)
	p := rebuildPlan{
		realistic:    head[0]&1 != 0,
		compactEvery: []int{0, 6, 20, 60}[head[0]>>1&3],
		renumber:     head[0]&8 != 0,
		events:       1 + int(binary.BigEndian.Uint16(head[1:3]))%400,
		seed:         int64(binary.BigEndian.Uint32(head[3:7])),
	}
	if p.realistic {
		p.events = 1 + p.events%150 // realistic lines are long; keep runs fast
	}
	for rest := data[min(len(data), 7):]; len(rest) > 0 && len(p.mutations) < maxMutations; {
		var m [4]byte
		n := copy(m[:], rest)
		rest = rest[n:]
		p.mutations = append(p.mutations, m)
	}
	return p
}

// lines generates the plan's valid log: the session header line, then one
// line per event.
func (p rebuildPlan) lines() ([][]byte, error) {
	var out [][]byte
	err := loggen.Generate(p.seed, loggen.Options{Events: p.events, CompactEvery: p.compactEvery, Realistic: p.realistic},
		func(line []byte) error {
			out = append(out, bytes.Clone(line))
			return nil
		})
	return out, err
}

// mutate applies the plan's mutations to the event lines.
func (p rebuildPlan) mutate(lines [][]byte) [][]byte {
	for _, m := range p.mutations {
		if len(lines) == 0 {
			break
		}
		a, b := pick(m[1], len(lines)), pick(m[2], len(lines))
		amount := m[3]
		switch m[0] % mutationOps {
		case mutDrop:
			lines = append(lines[:a:a], lines[a+1:]...)
		case mutDup:
			lines = append(lines[:a+1:a+1], lines[a:]...)
		case mutSwap:
			lines[a], lines[b] = lines[b], lines[a]
		case mutFlipOp:
			lines[a] = flipSurfaceOp(lines[a], lines[b], amount)
		case mutRange:
			lines[a] = moveRange(lines[a], amount)
		case mutSeq:
			if seq, ok := seqOf(lines[a]); ok {
				lines[a] = setSeq(lines[a], seq+int64(amount%5)-2)
			}
		case mutTruncate:
			lines = lines[:a]
		case mutCut:
			lines[a] = lines[a][:pick(amount, len(lines[a]))]
		case mutRenumber:
			renumber(lines[a:], int64(a))
		}
	}
	if p.renumber {
		renumber(lines, 0)
	}
	return lines
}

// pick maps a byte onto 0…n-1, spread over the whole range.
func pick(b byte, n int) int {
	if n <= 0 {
		return 0
	}
	return int(b) * n / 256
}

var (
	seqKey     = []byte(`,"seq":`)
	opKey      = []byte(`,"surfaceOp":`)
	opAppend   = []byte(`,"surfaceOp":"append"`)
	replaceKey = []byte(`{"op":"replace","start":`)
)

// seqOf returns the envelope seq of a generated line.
func seqOf(line []byte) (int64, bool) {
	i := bytes.Index(line, seqKey)
	if i < 0 {
		return 0, false
	}
	num := line[i+len(seqKey):]
	end := bytes.IndexAny(num, ",}")
	if end < 0 {
		return 0, false
	}
	v, err := strconv.ParseInt(string(num[:end]), 10, 64)
	return v, err == nil
}

// setSeq returns line with its envelope seq replaced by seq.
func setSeq(line []byte, seq int64) []byte {
	i := bytes.Index(line, seqKey)
	if i < 0 {
		return line
	}
	start := i + len(seqKey)
	end := bytes.IndexAny(line[start:], ",}")
	if end < 0 {
		return line
	}
	out := append(bytes.Clone(line[:start]), strconv.FormatInt(seq, 10)...)
	return append(out, line[start+end:]...)
}

// renumber gives lines the contiguous seqs from, from+1, …
func renumber(lines [][]byte, from int64) {
	for i := range lines {
		lines[i] = setSeq(lines[i], from+int64(i))
	}
}

// flipSurfaceOp changes line's surfaceOp: an append becomes a replace of
// a range near other's seq (amount chooses the span) or disappears; a
// replace becomes an append; a line without one gains an append.
func flipSurfaceOp(line, other []byte, amount byte) []byte {
	i := bytes.Index(line, opKey)
	switch {
	case i < 0:
		if len(line) == 0 || line[len(line)-1] != '}' {
			return line
		}
		out := append(bytes.Clone(line[:len(line)-1]), opAppend...)
		return append(out, '}')
	case bytes.HasPrefix(line[i:], opAppend):
		if amount&1 == 0 {
			return append(bytes.Clone(line[:i]), line[i+len(opAppend):]...)
		}
		start, _ := seqOf(other)
		end := start + int64(amount>>1%4)
		op := []byte(`,"surfaceOp":{"op":"replace","start":` + strconv.FormatInt(start, 10) +
			`,"end":` + strconv.FormatInt(end, 10) + `},"sourceEventSeqs":[` + strconv.FormatInt(start, 10) + `]`)
		out := append(bytes.Clone(line[:i]), op...)
		return append(out, line[i+len(opAppend):]...)
	default:
		// A replace: the op object and its sourceEventSeqs run to the end
		// of the line in generated logs.
		out := append(bytes.Clone(line[:i]), opAppend...)
		return append(out, '}')
	}
}

// moveRange moves the start (amount bit 0 clear) or the end of line's
// replace range by -3…+3.
func moveRange(line []byte, amount byte) []byte {
	i := bytes.Index(line, replaceKey)
	if i < 0 {
		return line
	}
	at := i + len(replaceKey) // the start number
	if amount&1 != 0 {
		j := bytes.Index(line[at:], []byte(`,"end":`))
		if j < 0 {
			return line
		}
		at += j + len(`,"end":`)
	}
	end := bytes.IndexAny(line[at:], ",}")
	if end < 0 {
		return line
	}
	v, err := strconv.ParseInt(string(line[at:at+end]), 10, 64)
	if err != nil {
		return line
	}
	v += int64(amount>>1%7) - 3
	out := append(bytes.Clone(line[:at]), strconv.FormatInt(v, 10)...)
	return append(out, line[at+end:]...)
}

// acceptedPrefix parses and folds lines as import does and returns the
// events accepted before the first refusal, which must be classified.
func acceptedPrefix(t *testing.T, lines [][]byte) []codec.Event {
	t.Helper()
	fold := rebuild.NewFold(false)
	var out []codec.Event
	for _, l := range lines {
		ev, err := codec.ParseEvent(l, codec.Limits{})
		if err != nil {
			checkClass(t, "ParseEvent", err, codec.ErrSyntax, codec.ErrInvalid)
			break
		}
		if err := fold.Add(&ev); err != nil {
			checkClass(t, "Fold.Add", err, codec.ErrInvalid)
			if fold.Next() != int64(len(out)) {
				t.Fatalf("a refused Add moved the fold: Next = %d, want %d", fold.Next(), len(out))
			}
			break
		}
		out = append(out, ev)
	}
	return out
}

// checkRebuild checks that the accepted events rebuild, and that the
// Builder, with and without full requests, equals the from-scratch Steps.
func checkRebuild(t *testing.T, h codec.SessionHeader, evs []codec.Event) {
	t.Helper()
	want, err := rebuild.Steps(h, evs)
	if err != nil {
		t.Fatalf("Steps refused a log the fold accepted (%d events): %v", len(evs), err)
	}
	full := buildSteps(t, h, evs, rebuild.BuilderOptions{Requests: true})
	lean := buildSteps(t, h, evs, rebuild.BuilderOptions{})
	if len(full) != len(want) || len(lean) != len(want) {
		t.Fatalf("Builder gave %d steps (%d digest-only), Steps %d", len(full), len(lean), len(want))
	}
	for i, w := range want {
		for _, c := range []struct {
			name string
			got  rebuild.Step
		}{{"full", full[i]}, {"digest-only", lean[i]}} {
			g := c.got
			if g.Turn != w.Turn || g.Step != w.Step || g.Start != w.Start || g.Null != w.Null {
				t.Fatalf("%s Builder step %d = %d.%d at seq %d (null %v), Steps %d.%d at seq %d (null %v)",
					c.name, i, g.Turn, g.Step, g.Start, g.Null, w.Turn, w.Step, w.Start, w.Null)
			}
			if g.Digest != w.Digest {
				t.Fatalf("%s Builder step %d.%d (seq %d): digest %x, Steps %x", c.name, w.Turn, w.Step, w.Start, g.Digest, w.Digest)
			}
			if !reflect.DeepEqual(g.Recorded, w.Recorded) {
				t.Fatalf("%s Builder step %d.%d (seq %d): recorded digests %+v, Steps %+v", c.name, w.Turn, w.Step, w.Start, g.Recorded, w.Recorded)
			}
		}
		if f := full[i]; !bytes.Equal(f.Request, w.Request) {
			at := rebuild.FirstDifference(f.Request, w.Request)
			t.Fatalf("Builder step %d.%d (seq %d): request differs at byte %d (%s)\nbuilder %s\n  steps %s",
				w.Turn, w.Step, w.Start, at, rebuild.PathAt(w.Request, at), f.Request, w.Request)
		}
		if lean[i].Request != nil {
			t.Fatalf("digest-only Builder kept the request of step %d.%d", w.Turn, w.Step)
		}
	}
}

// buildSteps folds evs through a Builder and returns its steps.
func buildSteps(t *testing.T, h codec.SessionHeader, evs []codec.Event, opts rebuild.BuilderOptions) []rebuild.Step {
	t.Helper()
	var out []rebuild.Step
	b := rebuild.NewBuilder(h, opts, func(s rebuild.Step) error {
		out = append(out, s)
		return nil
	})
	for i := range evs {
		if err := b.Add(&evs[i]); err != nil {
			t.Fatalf("Builder (requests %v) refused seq %d, which the fold accepted: %v", opts.Requests, evs[i].Seq, err)
		}
	}
	if err := b.End(); err != nil {
		t.Fatalf("Builder (requests %v) End: %v", opts.Requests, err)
	}
	return out
}

// rebuildSeeds are the f.Add seeds: plain logs of each shape, then each
// mutation alone, with and without renumbering.
func rebuildSeeds() [][]byte {
	plan := func(opts byte, events uint16, seed uint32, muts ...[4]byte) []byte {
		b := []byte{opts, byte(events >> 8), byte(events), byte(seed >> 24), byte(seed >> 16), byte(seed >> 8), byte(seed)}
		for _, m := range muts {
			b = append(b, m[:]...)
		}
		return b
	}
	seeds := [][]byte{
		plan(0, 60, 1),
		plan(0, 250, 2),
		plan(2, 200, 3), // compact every 6 events
		plan(4, 300, 4), // every 20
		plan(6, 399, 5), // every 60
		plan(1, 120, 6), // realistic
		plan(7, 149, 7), // realistic, every 60
		plan(8, 100, 8), // renumber (a no-op without mutations)
		plan(2, 1, 9),   // the smallest log
		plan(0, 0xffff, 10),
	}
	for op := byte(0); op < mutationOps; op++ {
		for _, opts := range []byte{2, 2 | 8} {
			seeds = append(seeds,
				plan(opts, 150, 100+uint32(op), [4]byte{op, 0x80, 0x40, 0x03}),
				plan(opts, 150, 200+uint32(op), [4]byte{op, 0x20, 0xe0, 0x81}, [4]byte{op, 0xc0, 0x10, 0x02}))
		}
	}
	return seeds
}

// TestGenerateSeedsRebuild writes FuzzRebuild's checked-in seeds with
// -gen-seeds (go test ./fuzz -run TestGenerateSeeds -gen-seeds); otherwise
// it checks that they are there.
func TestGenerateSeedsRebuild(t *testing.T) {
	if *genSeeds {
		writeSeeds(t, "FuzzRebuild", rebuildSeeds())
	}
	seeds := readSeedFiles(t, "FuzzRebuild")
	if len(seeds) == 0 {
		t.Fatal("no seeds for FuzzRebuild; run go test ./fuzz -run TestGenerateSeeds -gen-seeds")
	}
}

// readSeedFiles returns the []byte inputs of a target's checked-in seed
// files.
func readSeedFiles(t *testing.T, target string) [][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		body, ok := bytes.CutPrefix(b, []byte("go test fuzz v1\n[]byte("))
		body, ok2 := bytes.CutSuffix(bytes.TrimRight(body, "\n"), []byte(")"))
		s, err := strconv.Unquote(string(body))
		if !ok || !ok2 || err != nil {
			t.Fatalf("%s: not a go test fuzz v1 file with one []byte", p)
		}
		out = append(out, []byte(s))
	}
	return out
}

// TestRebuildMutations checks that each mutation does what FuzzRebuild's
// doc says on a known log, so that the fuzzer explores what it claims to.
func TestRebuildMutations(t *testing.T) {
	p := parsePlan([]byte{2, 0, 200, 0, 0, 0, 42})
	lines, err := p.lines()
	if err != nil {
		t.Fatal(err)
	}
	evs := lines[1:]
	var appendAt, replaceAt = -1, -1
	for i, l := range evs {
		if appendAt < 0 && bytes.Contains(l, opAppend) {
			appendAt = i
		}
		if replaceAt < 0 && bytes.Contains(l, replaceKey) {
			replaceAt = i
		}
	}
	if appendAt < 0 || replaceAt < 0 {
		t.Fatalf("generated log has no append (%d) or no replace (%d)", appendAt, replaceAt)
	}
	at := func(i int) byte { return byte((i*256 + 255) / len(evs)) } // pick(at(i), len) == i
	tests := []struct {
		name   string
		mut    [4]byte
		check  func(out [][]byte) bool
		refuse bool // the fold refuses the mutated log before its end
	}{
		{name: "drop", mut: [4]byte{mutDrop, at(5)}, refuse: true,
			check: func(out [][]byte) bool { return len(out) == len(evs)-1 && bytes.Equal(out[5], evs[6]) }},
		{name: "dup", mut: [4]byte{mutDup, at(5)}, refuse: true,
			check: func(out [][]byte) bool { return len(out) == len(evs)+1 && bytes.Equal(out[5], out[6]) }},
		{name: "swap", mut: [4]byte{mutSwap, at(3), at(7)}, refuse: true,
			check: func(out [][]byte) bool { return bytes.Equal(out[3], evs[7]) && bytes.Equal(out[7], evs[3]) }},
		{name: "append to replace", mut: [4]byte{mutFlipOp, at(appendAt), at(0), 1}, refuse: true,
			check: func(out [][]byte) bool { return bytes.Contains(out[appendAt], replaceKey) }},
		{name: "append to none", mut: [4]byte{mutFlipOp, at(appendAt), 0, 0}, refuse: true,
			check: func(out [][]byte) bool { return !bytes.Contains(out[appendAt], opKey) }},
		{name: "replace to append", mut: [4]byte{mutFlipOp, at(replaceAt), 0, 0},
			check: func(out [][]byte) bool { return bytes.HasSuffix(out[replaceAt], append(bytes.Clone(opAppend), '}')) }},
		{name: "range end", mut: [4]byte{mutRange, at(replaceAt), 0, 1 | 6<<1}, refuse: true,
			check: func(out [][]byte) bool {
				return len(out[replaceAt]) != len(evs[replaceAt]) || !bytes.Equal(out[replaceAt], evs[replaceAt])
			}},
		{name: "seq", mut: [4]byte{mutSeq, at(9), 0, 4}, refuse: true,
			check: func(out [][]byte) bool { s, _ := seqOf(out[9]); return s == 11 }},
		{name: "truncate", mut: [4]byte{mutTruncate, at(10)},
			check: func(out [][]byte) bool { return len(out) == 10 }},
		{name: "cut", mut: [4]byte{mutCut, at(4), 0, 128}, refuse: true,
			check: func(out [][]byte) bool { return len(out[4]) < len(evs[4]) }},
		{name: "renumber", mut: [4]byte{mutRenumber, at(0)},
			check: func(out [][]byte) bool { s, _ := seqOf(out[len(out)-1]); return s == int64(len(out)-1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := p
			q.mutations = [][4]byte{tt.mut}
			in := make([][]byte, len(evs))
			copy(in, evs)
			out := q.mutate(in)
			if !tt.check(out) {
				t.Fatalf("mutate(%v) did not apply", tt.mut)
			}
			acc := acceptedPrefix(t, out)
			if refused := len(acc) < len(out); refused != tt.refuse {
				t.Errorf("mutate(%v): fold accepted %d of %d events, want refused %v", tt.mut, len(acc), len(out), tt.refuse)
			}
			checkRebuild(t, mustHeader(t, lines[0]), acc)
		})
	}
}

func mustHeader(t *testing.T, line []byte) codec.SessionHeader {
	t.Helper()
	h, err := codec.ParseSessionHeader(line, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}
