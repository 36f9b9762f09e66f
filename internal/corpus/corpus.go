package corpus

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The corpus within the shared tree.
const (
	casesDir  = "testdata/dsh/cases"
	indexFile = "INDEX.tsv"
	caseFile  = "session.jsonl"
)

var absentOnce sync.Once

// Shared returns the shared tree beside the repository (the directory
// holding go.mod, found from the working directory up), skipping t when it
// is absent.
func Shared(t testing.TB) string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatalf("corpus: %v", err)
	}
	shared := filepath.Join(filepath.Dir(root), "shared")
	if _, err := os.Stat(shared); err != nil {
		absentOnce.Do(func() {
			fmt.Fprintf(os.Stderr, "corpus: %s is absent: the DSH corpus tests of this package are skipped\n", shared)
		})
		t.Skip("../shared is absent")
	}
	return shared
}

// Dir returns the corpus's cases directory, skipping t when ../shared is
// absent and failing it when ../shared holds no cases directory.
func Dir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(Shared(t), filepath.FromSlash(casesDir))
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("corpus: ../shared is present but has no %s directory (was the corpus moved?)", casesDir)
	}
	return dir
}

// Cases returns the case directories of the corpus, sorted: those its
// INDEX.tsv lists, each of which must hold a session.jsonl. It skips t when
// ../shared is absent, and fails it when the corpus is empty or laid out
// otherwise.
func Cases(t testing.TB) []string {
	t.Helper()
	dir := Dir(t)
	names, err := index(filepath.Join(dir, indexFile))
	if err != nil {
		t.Fatalf("corpus: %v", err)
	}
	if len(names) == 0 {
		t.Fatalf("corpus: %s lists no cases", filepath.Join(casesDir, indexFile))
	}
	out := make([]string, 0, len(names))
	for _, name := range names {
		c := filepath.Join(dir, name)
		if _, err := os.Stat(filepath.Join(c, caseFile)); err != nil {
			t.Fatalf("corpus: case %s, listed in %s, has no %s (was the corpus re-laid out?)", name, indexFile, caseFile)
		}
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Files returns the session.jsonl of every case (see Cases).
func Files(t testing.TB) []string {
	t.Helper()
	cases := Cases(t)
	out := make([]string, len(cases))
	for i, c := range cases {
		out[i] = filepath.Join(c, caseFile)
	}
	return out
}

// With returns the file called name of every case that has one (the
// expected requests, or wire bodies), in case order. It skips t when
// ../shared is absent, and fails it when the corpus is laid out otherwise
// or no case has such a file.
func With(t testing.TB, name string) []string {
	t.Helper()
	var out []string
	for _, c := range Cases(t) {
		p := filepath.Join(c, name)
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Fatalf("corpus: no case has a %s (was the corpus re-laid out?)", name)
	}
	return out
}

// SessionFiles returns the session.jsonl of every case of the corpus
// beside the repository (found from the working directory up), for
// programs (logbench): ok is false when ../shared is absent; a corpus laid
// out otherwise is an error.
func SessionFiles() (files []string, ok bool, err error) {
	root, err := repoRoot()
	if err != nil {
		return nil, false, err
	}
	dir := filepath.Join(filepath.Dir(root), "shared", filepath.FromSlash(casesDir))
	if _, err := os.Stat(filepath.Join(filepath.Dir(root), "shared")); err != nil {
		return nil, false, nil
	}
	names, err := index(filepath.Join(dir, indexFile))
	if err != nil {
		return nil, false, err
	}
	for _, name := range names {
		files = append(files, filepath.Join(dir, name, caseFile))
	}
	sort.Strings(files)
	return files, true, nil
}

// index reads the case names from the first column of INDEX.tsv, after its
// header line.
func index(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the corpus has no readable %s: %w", indexFile, err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		name, _, _ := strings.Cut(sc.Text(), "\t")
		if first {
			if name != "name" {
				return nil, fmt.Errorf("%s: the first line is not the header (name, era, …)", indexFile)
			}
			continue
		}
		if name != "" {
			names = append(names, name)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", indexFile, err)
	}
	return names, nil
}

// repoRoot returns the directory holding go.mod, from the working
// directory (a package directory, under go test) up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = up
	}
}

// Lines returns the lines of the file at path (a case's session.jsonl, or
// a file of expected bodies beside it), each a copy, without their line
// ends; a line may be as long as the codec's 64 MiB limit allows, with
// room for the bodies rendered from such a line. Failures fail t.
func Lines(t testing.TB, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 256<<20)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
