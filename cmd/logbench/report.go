package main

import (
	"fmt"
	"strings"
	"time"
)

// report is everything one run measured.
type report struct {
	cfg     config
	started time.Time
	elapsed time.Duration
	machine machineInfo
	durable []durableResult
	walOpen *walOpenResult
	codec   []codecResult
	// sealed are the sealed frames against plain ones (issue 23).
	sealed   []sealedResult
	sessions []*benchSession
	verify   []verifyResult
	scale    stat // verify µs/event, largest ÷ smallest session
	space    []spaceResult
	memory   []memoryResult
	wire     *wireReport
	// streamMem is memory while streaming a long answer (issue 19).
	streamMem []streamMemResult
	// transcripts are the transcript import figures (docs/transcripts.md).
	transcripts []transcriptResult
	pg          pgResults
	ui          []uiResult
	uiMem       *uiMemReport
	// gateway is the recording gateway's storage (issue 20).
	gateway []gatewayResult
	// gatewayLoad is the gateway's latency, throughput and memory.
	gatewayLoad *gatewayLoadReport
	// redact is the redactor over the DSH corpus's events (issue 22).
	redact []redactResult
}

// table is a Markdown table.
type table struct {
	head  []string
	align []bool // right-aligned columns
	rows  [][]string
}

func newTable(head ...string) *table {
	t := &table{head: head, align: make([]bool, len(head))}
	for i := 1; i < len(head); i++ {
		t.align[i] = true
	}
	return t
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(b *strings.Builder) {
	b.WriteString("| " + strings.Join(t.head, " | ") + " |\n|")
	for _, right := range t.align {
		if right {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	b.WriteString("\n")
}

// dur writes a duration with three significant digits in a fitting unit.
func dur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return num(d.Seconds()) + " s"
	case d >= time.Millisecond:
		return num(float64(d)/float64(time.Millisecond)) + " ms"
	default:
		return num(float64(d)/float64(time.Microsecond)) + " µs"
	}
}

// markdown renders the report.
func (r *report) markdown() string {
	var b strings.Builder
	c := r.cfg
	m := r.machine
	fmt.Fprintf(&b, "# Benchmarks\n\n")
	fmt.Fprintf(&b, "Measured by `go run ./cmd/logbench%s` on %s, in %s: %d rounds per figure, durable rounds of %s per side.\n",
		argString(c.args), m.date.Format("2006-01-02 15:04 MST"), dur(r.elapsed.Round(time.Second)), c.rounds, dur(c.roundTime))
	fmt.Fprintf(&b, "Run the same command from the repository root to measure again; `-h` lists the flags, and the doc of\n"+
		"`cmd/logbench` describes the method.\n\n")
	if c.quick {
		fmt.Fprintf(&b, "**This is a `-quick` run: small sessions and short rounds, a smoke test of logbench. Its numbers measure nothing.**\n\n")
	}
	fmt.Fprintf(&b, "**Read the ratios, not the absolute numbers.** This machine is shared with other engineers who run\n"+
		"builds and tests on it at the same time (the load average was %s when the run started and %s when it\n"+
		"ended), it has %d cores, and its disk is noisy: the same fsync loop can run several times faster or slower\n"+
		"from one minute to the next. Every figure is the median of its rounds. Every ratio is computed pair by\n"+
		"pair: inside one round the two sides run interleaved, in short alternating slices (the baseline\n"+
		"first), so that a burst of load weighs on both alike, and their ratio is taken over the round; the\n"+
		"tables give the median of those per-round ratios, with their range in parentheses.\n\n",
		m.loadStart, m.loadEnd, m.cores)

	b.WriteString("## Machine\n\n")
	t := newTable("", "")
	t.align[1] = false
	t.add("date", m.date.Format(time.RFC3339))
	t.add("commit", m.commit)
	t.add("kernel (`uname -r`)", m.kernel)
	t.add("CPU", fmt.Sprintf("%s, %d cores (GOMAXPROCS %d)", m.cpu, m.cores, m.procs))
	t.add("memory", m.memory)
	t.add("Go", m.goVersion)
	t.add("disk under test", fmt.Sprintf("`%s`: %s on %s (I/O scheduler %s, write cache %q)", m.dir, m.fs, m.device, m.scheduler, m.writeCache))
	t.add("load average (1, 5, 15 min)", fmt.Sprintf("%s at the start, %s at the end", m.loadStart, m.loadEnd))
	t.write(&b)

	b.WriteString("## Summary\n\n")
	r.summary().write(&b)
	r.writeTargets(&b)
	r.writeDurable(&b)
	r.writeWALOpen(&b)
	r.writeVerify(&b)
	r.writeCodec(&b)
	r.writeSealed(&b)
	r.writeSpace(&b)
	r.writeMemory(&b)
	r.writeWire(&b)
	r.writeStreamMemory(&b)
	r.writeTranscripts(&b)
	r.writePostgres(&b)
	r.writeUI(&b)
	r.writeUIMemory(&b)
	r.writeGateway(&b)
	r.writeGatewayLoad(&b)
	r.writeRedact(&b)
	return b.String()
}

// argString writes the command line after the command name.
func argString(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return " " + strings.Join(args, " ")
}

// summary is one row per headline figure.
func (r *report) summary() *table {
	t := newTable("figure", "ours", "reference", "ratio")
	for _, d := range r.durable {
		t.add("durable appends, "+d.mode.name+": ours ÷ JSONL+fsync",
			num(d.ours.Median)+" ev/s", num(d.base.Median)+" ev/s", ratio(d.ratio.Median))
	}
	if n := len(r.verify); n > 0 {
		lo, hi := r.verify[0], r.verify[n-1]
		t.add(fmt.Sprintf("verify time per event, %s ÷ %s events", group(hi.events), group(lo.events)),
			num(hi.verify.Median)+" µs", num(lo.verify.Median)+" µs", ratio(r.scale.Median))
		for i := n - 1; i >= 0; i-- {
			if v := r.verify[i]; v.hasNaive {
				t.add(fmt.Sprintf("verify against the naive rebuild, %s events: naive ÷ verify", group(v.events)),
					dur(v.verifyTotal), dur(v.naiveTotal), ratio(v.ratio.Median))
				break
			}
		}
	}
	for _, cr := range r.codec {
		if cr.event == "assistant/message" {
			t.add(cr.op+" an assistant/message: encoding/json ÷ codec",
				num(cr.ours.Median)+" ns", num(cr.json.Median)+" ns", ratio(cr.ratio.Median))
		}
	}
	if len(r.space) > 0 && len(r.sessions) > 0 {
		s := r.space[len(r.sessions)-1]
		t.add(fmt.Sprintf("bytes on disk per event, %s-event session: file ÷ JSONL", group(s.events)),
			num(s.file)+" B", num(s.jsonl)+" B", ratio(s.file/s.jsonl))
	}
	for _, s := range r.space {
		if strings.HasPrefix(s.data, "DSH corpus") {
			t.add("bytes on disk per event, "+s.data+": file ÷ JSONL", num(s.file)+" B", num(s.jsonl)+" B", ratio(s.file/s.jsonl))
		}
	}
	for _, tr := range r.transcripts {
		t.add(fmt.Sprintf("import a %s MiB %s transcript: encoding/json line by line ÷ ours (time)", mib(float64(tr.bytes)), tr.format),
			num(tr.ours.Median)+" MB/s", num(tr.json.Median)+" MB/s", ratio(tr.ratio.Median))
	}
	for _, a := range r.pg.append {
		if a.sessions == 64 {
			t.add("durable appends on PostgreSQL, 64 sessions, 1 event per commit: ours ÷ JSONL+fsync",
				num(a.pg.Median)+" ev/s", num(a.base.Median)+" ev/s", ratio(a.pgBase.Median))
		}
	}
	if n := len(r.memory); n > 0 {
		mr := r.memory[n-1]
		t.add(fmt.Sprintf("peak heap in use replaying %s events with full requests: heap ÷ JSONL size", group(mr.events)),
			mib(mr.peak.Median)+" MiB", mib(float64(mr.jsonl))+" MiB", ratio(mr.peak.Median/float64(mr.jsonl)))
	}
	r.wireSummary(t)
	if len(r.ui) > 0 {
		w := r.ui[0]
		for _, u := range r.ui {
			if u.pageTime > w.pageTime {
				w = u
			}
		}
		t.add(fmt.Sprintf("slowest audit UI page (%s), %s-event session: page ÷ verify", w.page, group(r.sessions[len(r.sessions)-1].events)),
			dur(w.pageTime), dur(w.verifyTime), ratio(w.ratio.Median))
	}
	return t
}

// writeUI writes the audit UI's page times.
func (r *report) writeUI(b *strings.Builder) {
	if len(r.ui) == 0 {
		return
	}
	s := r.sessions[len(r.sessions)-1]
	b.WriteString("## Audit UI\n\n")
	fmt.Fprintf(b, "`logtool serve`'s pages for the %s-event session (package `ui`), each request served in process\n"+
		"through the whole handler (routing, the folds, the templates, the answer's bytes), timed interleaved with\n"+
		"`verify.Session` of the same session, which folds and checks the whole log once: the baseline. The\n"+
		"server caches a session's overview (its steps and digests, one digest-only fold) after the first\n"+
		"request, as while a person browses; the cold timeline builds a new server for every request and pays\n"+
		"for that fold each time. The issue asks for under %s per page on this machine; \"worst round\" is the\n"+
		"slowest round's median.\n\n", group(s.events), dur(uiLimit))
	t := newTable("page", "per request", "worst round", "verify", "page ÷ verify", "under "+dur(uiLimit))
	for _, u := range r.ui {
		under := "yes"
		if u.worst >= uiLimit {
			under = "no"
		}
		t.add(u.page, dur(u.pageTime), dur(u.worst), dur(u.verifyTime), ratioRange(u.ratio), under)
	}
	t.write(b)
}

func (r *report) writeDurable(b *strings.Builder) {
	b.WriteString("## Durable appends\n\n")
	fmt.Fprintf(b, "Each round alternates slices of at most %s, the baseline then the store, until each has run\n"+
		"for %s. The baseline is one goroutine writing the ~1 KB JSON line of an assistant/message per event\n"+
		"to one JSONL file, with an fsync after every line. The store is an eventlog store with its defaults\n"+
		"(every write acknowledged after its write-ahead log record's fdatasync) that validates every append\n"+
		"with the rebuild fold, as logtool import and the loop do; it appends the same events. With one\n"+
		"session, one goroutine calls Append with 1 or 100 events, and only the calls are timed. With 64\n"+
		"sessions, 64 goroutines append one event per call to their own session at once, and the store's\n"+
		"group commit shares log records between them. At the end of each of its slices the store applies\n"+
		"everything it wrote to the bbolt tree (Log.Checkpoint), and that time counts as the slice's, so the\n"+
		"background applier's work is charged to the store and never to the baseline. Events per commit is\n"+
		"events ÷ write-ahead log records. Latencies are of one Append call (one line's write+fsync for the\n"+
		"baseline), over every call of every round.\n\n",
		dur(min(r.cfg.roundTime, durableSlice)), dur(r.cfg.roundTime))
	t := newTable("workload", "ours ev/s", "JSONL+fsync ev/s", "ours ÷ JSONL+fsync", "events per commit",
		"ours p50 per Append", "ours p99 per Append", "JSONL p50 per line", "JSONL p99 per line")
	for _, d := range r.durable {
		t.add(d.mode.name, num(d.ours.Median), num(d.base.Median), ratioRange(d.ratio), num(d.perTx.Median),
			dur(d.oursP50), dur(d.oursP99), dur(d.baseP50), dur(d.baseP99))
	}
	t.write(b)
}

// writeWALOpen writes the time to open a store with a full write-ahead log.
func (r *report) writeWALOpen(b *strings.Builder) {
	w := r.walOpen
	if w == nil {
		return
	}
	b.WriteString("## Opening a store with a write-ahead log to replay\n\n")
	fmt.Fprintf(b, "%s sessions append ~1 KB assistant/messages to a store whose applier never runs, until its\n"+
		"write-ahead log holds %s MiB (%s events); the store's file and log are then copied while it is open,\n"+
		"which is what a crash at that moment leaves. Each round opens a fresh copy read-write (the log is read,\n"+
		"checked, replayed into memory and applied to the tree in one fsynced transaction, then deleted) and then\n"+
		"opens it again, applied: the baseline.\n\n", num(float64(w.sessions)), mib(float64(w.walBytes)), group(w.events))
	t := newTable("open", "time (median)", "range")
	t.add(fmt.Sprintf("with %s MiB of log to apply", mib(float64(w.walBytes))), dur(secs(w.open.Median)), dur(secs(w.open.Min))+" – "+dur(secs(w.open.Max)))
	t.add("the same store, applied", dur(secs(w.clean.Median)), dur(secs(w.clean.Min))+" – "+dur(secs(w.clean.Max)))
	t.write(b)
}

// secs converts seconds to a Duration.
func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func (r *report) writeVerify(b *strings.Builder) {
	b.WriteString("## Verify and the naive rebuild\n\n")
	b.WriteString("Each session is generated by `internal/loggen` (realistic steps: a dozen chunks and a paragraph per\n" +
		"reply, tool calls and results, header snapshots and deltas, a compaction about every 3,000 events) and\n" +
		"imported alone into a store. `verify.Session` checks every record (CRC, key, chain hash), every rule of\n" +
		"the log, and rebuilds every step's digest with the incremental Builder. The naive rebuild reads the\n" +
		"events from the store and rebuilds every step from scratch (`rebuild.Steps`), which is quadratic; it is\n" +
		"skipped on the largest session, where it would take hours. Each round times every session's verify\n" +
		"and naive rebuild interleaved, in alternating batches of about the same length (as many runs as fill\n" +
		"the longer of " + dur(r.cfg.slice) + " and one run of the slower side), until each has run " + dur(r.cfg.verifyMinTime()) + ";\n" +
		"then the smallest session's verify and the largest's the same way, for the ratio of the two.\n\n")
	t := newTable("events", "steps", "verify µs/event", "verify per run", "naive µs/event", "naive per run", "naive ÷ verify")
	for _, v := range r.verify {
		naive, naiveRun, rat := "skipped", "skipped", "–"
		if v.hasNaive {
			naive, naiveRun, rat = num(v.naive.Median), dur(v.naiveTotal), ratioRange(v.ratio)
		}
		t.add(group(v.events), group(int64(v.steps)), num(v.verify.Median), dur(v.verifyTotal), naive, naiveRun, rat)
	}
	t.write(b)
	if n := len(r.verify); n > 1 {
		fmt.Fprintf(b, "Verify time per event at %s events ÷ at %s events: **%s**, per round.\n\n",
			group(r.verify[n-1].events), group(r.verify[0].events), ratioRange(r.scale))
	}
}

func (r *report) writeCodec(b *strings.Builder) {
	b.WriteString("## Codec against encoding/json\n\n")
	b.WriteString("Decode a record is what a reader does with one event's record (the unapplied tail, a store before\n" +
		"format 3, PostgreSQL): `codec.Unframe` (CRC check, S2 decompression) + `codec.DecodeStoredEvent` (strict\n" +
		"decode and typed view, one pass). Decode from a pack is what a scan of the tree does: `codec.DecodePack` of a\n" +
		"pack of copies of the event up to `codec.PackTarget` (4 KiB), then `codec.DecodeStoredEvent` of each, per\n" +
		"event. Both are against `json.Unmarshal` of the line into Go structs that mirror\n" +
		"the same fields, per event. Encode is `codec.FromJSON` + `codec.EncodeEventRecord` (S2 compression) of the line\n" +
		"(buffers reused) against `json.Marshal` of the\n" +
		"decoded structs. Each round times the two sides interleaved, in alternating batches of at least " + dur(r.cfg.slice) + ",\n" +
		"until each has run " + dur(r.cfg.minTime) + ". Encode is not like for like: the codec reads and checks JSON text,\n" +
		"as import does with every line, while json.Marshal writes from structs already decoded.\n\n")
	t := newTable("event", "operation", "codec ns/op", "encoding/json ns/op", "encoding/json ÷ codec", "codec allocs/op", "encoding/json allocs/op")
	t.align[1] = false
	for _, cr := range r.codec {
		t.add(cr.event, cr.op, num(cr.ours.Median), num(cr.json.Median), ratioRange(cr.ratio), num(cr.oursAllocs.Median), num(cr.jsonAllocs.Median))
	}
	t.write(b)
	seen := map[string]bool{}
	for _, cr := range r.codec {
		if !seen[cr.event] {
			seen[cr.event] = true
			fmt.Fprintf(b, "The %s line is %s B; its stored record %s B.\n", cr.event, group(int64(cr.lineBytes)), group(int64(cr.recordBytes)))
		}
	}
	b.WriteString("\n")
}

func (r *report) writeSpace(b *strings.Builder) {
	b.WriteString("## Bytes on disk\n\n")
	b.WriteString("Per event: the JSONL line with its newline (for a generated session, the whole file ÷ its events);\n" +
		"the event's record as the write-ahead log holds it (the msgpack payload, an S2 block of it when that is\n" +
		"smaller, and the 5-byte frame: the head's StoredBytes); the bbolt pages the store needs (its high-water\n" +
		"mark, pages in use or free), where events are in packs of up to 4 KiB compressed together; and the\n" +
		"file, closed: bbolt grows it up to 1 MiB ahead of need while the store is open, and Close trims it to\n" +
		"its pages. The generated sessions were imported, one per store; the DSH corpus\n" +
		"row is every session file of ../shared/testdata/dsh that DSH accepts, imported into one store, against\n" +
		"the sum of those files' sizes; the 1 KB messages are the durable rounds' stores.\n\n")
	t := newTable("data", "events", "JSONL B/event", "record B/event", "bbolt pages B/event", "file B/event", "record ÷ JSONL", "file ÷ JSONL")
	t.align[0] = false
	for _, s := range r.space {
		t.add(s.data, group(s.events), num(s.jsonl), num(s.record), num(s.inUse), num(s.file), ratio(s.record/s.jsonl), ratio(s.file/s.jsonl))
	}
	t.write(b)
}

func (r *report) writeMemory(b *strings.Builder) {
	b.WriteString("## Memory\n\n")
	fmt.Fprintf(b, "Each session is replayed from its store (`Scan`) through a `rebuild.Builder` that builds every\n"+
		"step's full request, as `logtool replay` does. The heap in use is sampled every %s and every 32 steps;\n"+
		"\"before\" is after a GC, before the replay. GOGC is the default. Median of %d runs.\n\n",
		dur(memorySampleEvery), min(r.cfg.rounds, memoryRuns))
	t := newTable("events", "steps", "JSONL", "largest request", "heap in use before", "peak heap in use", "peak ÷ JSONL", "replay µs/event")
	for _, mr := range r.memory {
		t.add(group(mr.events), group(int64(mr.steps)), mib(float64(mr.jsonl))+" MiB", num(float64(mr.largest)/1024)+" KiB",
			mib(mr.base.Median)+" MiB", mib(mr.peak.Median)+" MiB", ratio(mr.peak.Median/float64(mr.jsonl)), num(mr.perEvent.Median))
	}
	t.write(b)
}
