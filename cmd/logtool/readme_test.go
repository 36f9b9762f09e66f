package main

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestReadmeCommands checks that README.md's logtool table has a row for
// every command, and that the row names each of the command's flags (the
// global --db and --lock-timeout are in the synopsis above the table), so
// the table a newcomer reads is every command and flag that exists.
func TestReadmeCommands(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## logtool\n")
	if !ok {
		t.Fatal("README.md has no ## logtool section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		if rest, ok := strings.CutPrefix(line, "| `"); ok {
			name, _, _ := strings.Cut(rest, " ")
			name, _, _ = strings.Cut(name, "`")
			rows[name] = line
		}
	}
	root := newRootCmd(&globalOptions{}, io.Discard, io.Discard)
	for _, f := range []string{"--db", "--lock-timeout"} {
		if !strings.Contains(section, "["+f+" ") {
			t.Errorf("README.md's logtool synopsis lacks %s", f)
		}
	}
	n := 0
	for _, cmd := range root.Commands() {
		if cmd.Hidden || cmd.Name() == "help" || cmd.Name() == "completion" {
			continue
		}
		n++
		row, ok := rows[cmd.Name()]
		if !ok {
			t.Errorf("README.md's logtool table has no row for %s", cmd.Name())
			continue
		}
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" && !strings.Contains(row, "--"+f.Name) && (f.Shorthand == "" || !strings.Contains(row, "-"+f.Shorthand+" ")) {
				t.Errorf("README.md's row for %s does not name --%s", cmd.Name(), f.Name)
			}
		})
	}
	if n < 10 {
		t.Fatalf("found %d commands; want every one", n)
	}
}
