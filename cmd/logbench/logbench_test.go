package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/internal/corpus"
)

// TestMain serves the audit UI or the gateway, as logbench does, when
// the UI or gateway memory section starts this test binary as its server
// process.
func TestMain(m *testing.M) {
	if ok, err := serveChild(os.Stdin, os.Stdout); ok {
		if err != nil {
			os.Exit(exitFailure)
		}
		os.Exit(exitOK)
	}
	os.Exit(m.Run())
}

// mdTable is a Markdown table of the report: its header and rows, split
// into cells.
type mdTable struct {
	head []string
	rows [][]string
}

// sections splits a report into its "## " sections, by title; the text
// before the first one is under "".
func sections(doc string) (map[string]string, []string) {
	out := map[string]string{}
	var order []string
	title := ""
	for _, part := range strings.SplitAfter(doc, "\n") {
		if t, ok := strings.CutPrefix(part, "## "); ok {
			title = strings.TrimSpace(t)
			order = append(order, title)
		}
		out[title] += part
	}
	return out, order
}

// tables returns the Markdown tables of a section.
func tables(t *testing.T, section string) []mdTable {
	t.Helper()
	var out []mdTable
	var cur *mdTable
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			cur = nil
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case cur == nil:
			out = append(out, mdTable{head: cells})
			cur = &out[len(out)-1]
		case len(cur.rows) == 0 && strings.HasPrefix(cells[0], "---"):
			// the separator line
		default:
			if len(cells) != len(cur.head) {
				t.Errorf("row %q has %d cells, its table's header %d", line, len(cells), len(cur.head))
			}
			cur.rows = append(cur.rows, cells)
		}
	}
	return out
}

var (
	// ratioCell is a ratio, with its range when there were rounds: 0.57×,
	// 12.3× (11.0–14.1).
	ratioCell = regexp.MustCompile(`^[0-9][0-9,]*(\.[0-9]+)?×( \([0-9][0-9,.]*–[0-9][0-9,.]*\))?$`)
	// numberCell is a number, with an optional unit: 1,234, 0.57 ms.
	numberCell = regexp.MustCompile(`^[0-9][0-9,]*(\.[0-9]+)?( [a-zA-Zµ/]+)?$`)
)

// TestQuick runs logbench -quick in-process into a temporary file and
// checks the report's shape: its sections, tables, rows and that every
// figure and ratio is a number. It asserts nothing about the numbers.
func TestQuick(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "BENCHMARKS.md")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-quick", "-o", out, "-dir", dir, "-pg", ""}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("logbench -quick = exit %d, stderr:\n%s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if doc != stdout.String() {
		t.Errorf("the report on stdout differs from the file")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "logbench-*")); len(left) > 0 {
		t.Errorf("work directories left behind: %v", left)
	}
	if !strings.HasPrefix(doc, "# Benchmarks\n") || !strings.Contains(doc, "-quick") || !strings.Contains(doc, "load average") {
		t.Errorf("report preamble is missing its title, the -quick warning or the load average:\n%s", doc)
	}

	secs, order := sections(doc)
	wantOrder := []string{"Machine", "Summary", "Targets of the write path", "Durable appends", "Opening a store with a write-ahead log to replay", "Verify and the naive rebuild",
		"Codec against encoding/json", "Sealed frames against plain", "Bytes on disk", "Memory", "The wire", "Memory while streaming", "Transcript import", "PostgreSQL store", "Audit UI", "Audit UI memory", "Recording gateway storage", "Recording gateway under load", "Redaction"}
	if strings.Join(order, "/") != strings.Join(wantOrder, "/") {
		t.Fatalf("sections = %q, want %q", order, wantOrder)
	}
	// The DSH corpus row, in the space table and the summary, when
	// ../shared is there.
	corpusRows := 0
	if _, ok, err := corpus.SessionFiles(); err != nil {
		t.Fatal(err)
	} else if ok {
		corpusRows = 1
	}
	shapes := []struct {
		name    string
		section string
		rows    int
		ratios  []int // columns holding ratios
		numbers []int // columns holding numbers
	}{
		{name: "machine", section: "Machine", rows: 8},
		{name: "summary", section: "Summary", rows: 19 + corpusRows, ratios: []int{3}, numbers: []int{1, 2}},
		{name: "targets", section: "Targets of the write path", rows: 16 + 1 + 3*corpusRows}, // 6 of issue 12, a streaming memory row per renderer and the UI's memory (issue 19), the gateway's storage per agent, first byte (1 and many clients), rate and memory (issue 20), sealed decode (issue 23), redaction per redactor (issue 22)
		{name: "durable", section: "Durable appends", rows: 3, ratios: []int{3}, numbers: []int{1, 2, 4, 5, 6, 7, 8}},
		{name: "walopen", section: "Opening a store with a write-ahead log to replay", rows: 2, numbers: []int{1}},
		{name: "verify", section: "Verify and the naive rebuild", rows: len(quickSizes), numbers: []int{0, 1, 2, 3}},
		{name: "codec", section: "Codec against encoding/json", rows: 6, ratios: []int{4}, numbers: []int{2, 3, 5, 6}},
		{name: "sealed", section: "Sealed frames against plain", rows: 6, ratios: []int{4}, numbers: []int{2, 3, 6, 7}},
		{name: "space", section: "Bytes on disk", rows: len(quickSizes) + len(durableModes) + corpusRows, ratios: []int{6, 7}, numbers: []int{1, 2, 3, 4, 5}},
		{name: "memory", section: "Memory", rows: len(quickSizes), ratios: []int{6}, numbers: []int{0, 1, 2, 3, 4, 5, 7}},
		{name: "transcripts", section: "Transcript import", rows: 2, ratios: []int{6, 7, 8}, numbers: []int{2, 3, 4, 5}},
		{name: "ui", section: "Audit UI", rows: 9, ratios: []int{4}, numbers: []int{1, 2, 3}},
		{name: "uimem", section: "Audit UI memory", rows: 10, numbers: []int{4}},
		{name: "gateway", section: "Recording gateway storage", rows: 2, numbers: []int{1, 2, 3, 4, 5, 6, 7}},
		{name: "gateway load", section: "Recording gateway under load", rows: 3, numbers: []int{1, 6, 7, 10, 11}},
	}
	if corpusRows > 0 {
		shapes = append(shapes, struct {
			name    string
			section string
			rows    int
			ratios  []int
			numbers []int
		}{name: "redact", section: "Redaction", rows: len(redactPatterns), ratios: []int{4}, numbers: []int{1, 2, 3}})
	}
	for _, tt := range shapes {
		t.Run(tt.name, func(t *testing.T) {
			ts := tables(t, secs[tt.section])
			if len(ts) != 1 {
				t.Fatalf("section %q has %d tables, want 1", tt.section, len(ts))
			}
			tb := ts[0]
			if len(tb.rows) != tt.rows {
				t.Fatalf("section %q table has %d rows, want %d", tt.section, len(tb.rows), tt.rows)
			}
			for _, row := range tb.rows {
				for _, c := range tt.ratios {
					if !ratioCell.MatchString(row[c]) {
						t.Errorf("%s: row %q column %q = %q, want a ratio", tt.section, row[0], tb.head[c], row[c])
					}
				}
				for _, c := range tt.numbers {
					if !numberCell.MatchString(row[c]) {
						t.Errorf("%s: row %q column %q = %q, want a number", tt.section, row[0], tb.head[c], row[c])
					}
				}
				for c, cell := range row {
					if cell == "" {
						t.Errorf("%s: row %q has an empty cell in column %d", tt.section, row[0], c)
					}
				}
			}
		})
	}

	// The wire: a render row per renderer and size, a stream row per
	// renderer, a linearity line per renderer.
	if ts := tables(t, secs["The wire"]); len(ts) != 2 || len(ts[0].rows) != 4 || len(ts[1].rows) != 2 {
		t.Errorf("the wire section's tables: %+v", ts)
	} else {
		for _, row := range ts[0].rows {
			for _, c := range []int{7, 9} {
				if !ratioCell.MatchString(row[c]) {
					t.Errorf("wire: row %q column %d = %q, want a ratio", row[0], c, row[c])
				}
			}
		}
		for _, row := range ts[1].rows {
			if !ratioCell.MatchString(row[5]) || !numberCell.MatchString(row[4]) {
				t.Errorf("wire: stream row %q", row)
			}
		}
	}
	// Memory while streaming: a row per renderer, its growth a ratio.
	if ts := tables(t, secs["Memory while streaming"]); len(ts) != 1 || len(ts[0].rows) != 2 {
		t.Errorf("the streaming memory section's tables: %+v", ts)
	} else {
		for _, row := range ts[0].rows {
			if !ratioCell.MatchString(row[5]) {
				t.Errorf("streaming memory: row %q", row)
			}
		}
	}
	if n := len(regexp.MustCompile(`Linearity, [a-z-]+: render ns per request byte at the large request ÷ at the small one: \*\*[0-9.,]+×`).FindAllString(doc, -1)); n != 2 {
		t.Errorf("%d linearity lines, want 2", n)
	}

	// The naive rebuild runs on every session but the largest.
	v := tables(t, secs["Verify and the naive rebuild"])[0]
	for i, row := range v.rows {
		naive := row[4] != "skipped"
		if want := i < len(v.rows)-1; naive != want {
			t.Errorf("verify row %d (%s events): naive measured %v, want %v", i, row[0], naive, want)
		}
		if naive && !ratioCell.MatchString(row[6]) {
			t.Errorf("verify row %d: naive ÷ verify = %q, want a ratio", i, row[6])
		}
	}
	if !regexp.MustCompile(`Verify time per event at [0-9,]+ events ÷ at [0-9,]+ events: \*\*[0-9.,]+×`).MatchString(doc) {
		t.Errorf("the verify scale ratio is missing")
	}
}

// TestUsage checks the command line: bad flags are usage errors (exit
// 2) that write nothing; -h prints the flags on stdout.
func TestUsage(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "B.md")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // a substring of stdout
		stderr string // a substring of stderr
	}{
		{name: "help", args: []string{"-h"}, code: exitOK, stdout: "-rounds"},
		{name: "unknown flag", args: []string{"-nope"}, code: exitUsage, stderr: "flag provided but not defined"},
		{name: "argument", args: []string{"extra"}, code: exitUsage, stderr: `unexpected argument "extra"`},
		{name: "negative rounds", args: []string{"-rounds", "-1", "-o", out}, code: exitUsage, stderr: "-rounds"},
		{name: "bad round time", args: []string{"-round-time", "soon", "-o", out}, code: exitUsage, stderr: "round-time"},
		{name: "empty output", args: []string{"-o", ""}, code: exitUsage, stderr: "-o must name a file"},
		{name: "missing dir", args: []string{"-quick", "-o", out, "-dir", filepath.Join(dir, "none")}, code: exitUsage, stderr: "is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Fatalf("logbench %q = exit %d, want %d; stderr:\n%s", tt.args, code, tt.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("logbench %q stdout = %q, want it to contain %q", tt.args, stdout.String(), tt.stdout)
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("logbench %q stderr = %q, want it to contain %q", tt.args, stderr.String(), tt.stderr)
			}
			if tt.code == exitUsage && !strings.HasPrefix(stderr.String(), "logbench: ") {
				t.Errorf("logbench %q stderr = %q, want a logbench: error", tt.args, stderr.String())
			}
			if tt.code == exitUsage && stdout.Len() > 0 {
				t.Errorf("logbench %q wrote %q on stdout, want nothing", tt.args, stdout.String())
			}
			if n := strings.Count(stdout.String(), "Usage:"); tt.code == exitOK && n != 1 {
				t.Errorf("logbench %q printed its usage %d times, want once", tt.args, n)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("logbench %q wrote %s", tt.args, out)
			}
		})
	}
}

// TestFormat checks the number and ratio formats the report relies on.
func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{name: "group small", got: group(7), want: "7"},
		{name: "group thousands", got: group(1234567), want: "1,234,567"},
		{name: "group negative", got: group(-1234), want: "-1,234"},
		{name: "num large", got: num(12345.6), want: "12,346"},
		{name: "num tens", got: num(12.345), want: "12.3"},
		{name: "num units", got: num(1.2345), want: "1.23"},
		{name: "num fraction", got: num(0.12345), want: "0.123"},
		{name: "ratio", got: ratio(0.5678), want: "0.568×"},
		{name: "ratio range", got: ratioRange(summarize([]float64{2, 1, 3})), want: "2.00× (1.00–3.00)"},
		{name: "ratio one round", got: ratioRange(summarize([]float64{2})), want: "2.00×"},
		{name: "ratio none", got: ratioRange(summarize(nil)), want: "–"},
		{name: "median even", got: num(summarize([]float64{4, 1, 3, 2}).Median), want: "2.50"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
