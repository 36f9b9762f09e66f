package main

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/internal/pgtest"
)

// TestStoreNames: a store's secrets never reach a message. Every form of
// password PostgreSQL takes (user-info, ?password=, ?sslpassword= and
// ?passfile=, a password holding a '#', a keyword/value string) is given
// to every command, against the real server (whose trust authentication
// takes any password) and against hosts that do not answer; neither
// stdout nor stderr holds any of them.
func TestStoreNames(t *testing.T) {
	u, _ := pgtest.Schema(t)
	base, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{"UserinfoSecret42", "QuerySecret42", "SslSecret42", "PassfileSecret42", "Hash#Secret42", "Secret42", "KwSecret42"}
	withInfo := func(host, pass string) string {
		v := *base
		v.Host = host
		v.User = url.UserPassword("postgres", pass)
		return v.String()
	}
	withQuery := func(host string) string {
		v := *base
		v.Host = host
		v.RawQuery += "&password=QuerySecret42&sslpassword=SslSecret42&passfile=/nonexistent/PassfileSecret42"
		return v.String()
	}
	hashed := func(host string) string { // '#' unescaped: no URL parser reads it
		return "postgres://postgres:Hash#Secret42@" + host + base.Path + "?" + base.RawQuery
	}
	keyword := func(host string) string {
		h, p, _ := strings.Cut(host, ":")
		return "host=" + h + " port=" + p + " user=postgres dbname=test password=KwSecret42"
	}
	live := withInfo(base.Host, "UserinfoSecret42")
	dir := t.TempDir()
	file := filepath.Join(dir, "s.db")
	mustRunArgs(t, "--db", file, "import", "testdata/import/basic.jsonl")
	mustRunArgs(t, "--db", live, "import", "testdata/import/basic.jsonl")
	if out := mustRunArgs(t, "--db", withQuery(base.Host), "ls"); !strings.Contains(out, "basic-1") {
		t.Fatalf("ls through ?password= = %q", out)
	}

	commands := [][]string{
		{"import", "testdata/import/basic.jsonl"}, // a conflict where the store answers
		{"import", "--format", "auto", "testdata/import/basic.jsonl"},
		{"export", "basic-1"},
		{"ls"},
		{"show", "basic-1"},
		{"show", "nosuch"},
		{"stat"},
		{"stat", "basic-1"},
		{"stat", "--json"},
		{"fork", "basic-1", "--at", "21", "--id", "child-1"},
		{"replay", "basic-1"},
		{"verify"},
		{"verify", "nosuch"},
		{"diff", "basic-1", "1.1", "1.1"},
		{"cache", "basic-1"},
		{"run", "testdata/scenarios/audit.json", "--session", "audit-1"},
		{"demo"},
		{"salvage", "-o", "SALVAGED"},
		{"serve", "--addr", "127.0.0.1:0"},
		{"copy", "--from", "DB", "--to", "FILE"},
		{"copy", "--from", "FILE", "--to", "DB"},
	}
	unreachable := map[string]bool{"import": true, "ls": true, "verify": true, "copy": true, "serve": true}
	hosts := map[string]string{"the server": base.Host, "a closed port": "127.0.0.1:1", "an unknown host": "nosuchhost.invalid:5432"}
	n := 0
	for hostName, host := range hosts {
		forms := map[string]string{
			"user-info":     withInfo(host, "UserinfoSecret42"),
			"query":         withQuery(host),
			"hash":          hashed(host),
			"escaped hash":  withInfo(host, "Hash#Secret42"),
			"keyword/value": keyword(host),
		}
		t.Cleanup(func() { _ = os.Remove(forms["keyword/value"]) })
		for formName, db := range forms {
			for _, cmd := range commands {
				if hostName != "the server" && !unreachable[cmd[0]] {
					// Where no server answers, every command fails opening
					// the store, with the one message that names it: a few
					// commands stand for all.
					continue
				}
				n++
				args := []string{"--db", db, "--lock-timeout", "0"}
				for _, a := range cmd {
					switch a {
					case "SALVAGED":
						a = filepath.Join(dir, "salvaged", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().Format("150405.000000000"))
					case "DB":
						a = db
					case "FILE":
						a = file
					}
					args = append(args, a)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				var stdout, stderr bytes.Buffer
				code := runEnv(ctx, pgEnv(), args, &stdout, &stderr)
				cancel()
				out := stdout.String() + stderr.String()
				for _, s := range secrets {
					if strings.Contains(out, s) || strings.Contains(out, url.QueryEscape(s)) || strings.Contains(out, url.PathEscape(s)) {
						t.Errorf("%s, %s, logtool %s (exit %d) printed %s:\n%s", hostName, formName, strings.Join(cmd, " "), code, s, out)
					}
				}
				if hostName == "the server" && formName == "user-info" && cmd[0] == "ls" && (code != exitOK || !strings.Contains(out, "basic-1")) {
					t.Errorf("ls through user-info = exit %d\n%s", code, out)
				}
			}
		}
	}
	// A keyword/value string is refused, not taken for a file name.
	for _, host := range hosts {
		if _, err := os.Stat(keyword(host)); err == nil {
			t.Errorf("a store file named %q was created", keyword(host))
		}
	}
	t.Logf("%d command lines", n)
}
