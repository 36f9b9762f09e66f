package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/internal/permtest"
	"github.com/sessionlog/sessionlog/keys"
)

// runKeys runs logtool with the variables vars, in a fresh temp dir's
// store, and returns its exit code, stdout and stderr.
func runKeys(t *testing.T, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	e := testEnv()
	e.getenv = func(k string) string { return vars[k] }
	var stdout, stderr bytes.Buffer
	args = append([]string{"--db", filepath.Join(t.TempDir(), "s.db")}, args...)
	code := runEnv(context.Background(), e, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

var keyIDLine = regexp.MustCompile(`^kek-[0-9a-f]{16}\n$`)

// TestKeysInit: keys init writes a new key file of mode 0600 and prints
// its id, never the key; it never replaces a file; the file is named by
// --file, else --key-file, else $LOGTOOL_KEY_FILE. Not parallel: the
// umask is the process's.
func TestKeysInit(t *testing.T) {
	permtest.Umask(t, 0o022)
	dir := t.TempDir()
	tests := []struct {
		name string
		vars map[string]string
		args []string
		path string
	}{
		{"--file", nil, []string{"keys", "init", "--file", filepath.Join(dir, "a.key")}, filepath.Join(dir, "a.key")},
		{"--key-file", nil, []string{"--key-file", filepath.Join(dir, "b.key"), "keys", "init"}, filepath.Join(dir, "b.key")},
		{"$LOGTOOL_KEY_FILE", map[string]string{keyFileEnv: filepath.Join(dir, "c.key")}, []string{"keys", "init"}, filepath.Join(dir, "c.key")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runKeys(t, tt.vars, tt.args...)
			if code != exitOK || !keyIDLine.MatchString(out) {
				t.Fatalf("keys init = exit %d, stdout %q, stderr %q; want 0 and a key id", code, out, errOut)
			}
			permtest.Want(t, tt.path, 0o600)
			key, err := os.ReadFile(tt.path)
			if err != nil || len(key) != keys.KEKSize {
				t.Fatalf("the key file: %d bytes, %v", len(key), err)
			}
			k, err := keys.ReadFile(tt.path)
			if err != nil || k.KeyID()+"\n" != out {
				t.Fatalf("the file's id = %v, %v; keys init printed %q", k, err, out)
			}
			if leaksKey(out+errOut, key) {
				t.Errorf("keys init printed the key")
			}
			if !strings.Contains(errOut, "keep a copy") {
				t.Errorf("stderr %q does not say to keep a copy", errOut)
			}
			// Again: refused, the file unchanged.
			code, out, errOut = runKeys(t, tt.vars, tt.args...)
			if code != exitFailure || out != "" || !strings.Contains(errOut, "exists") {
				t.Errorf("keys init over the file = exit %d, %q, %q; want 1 saying it exists", code, out, errOut)
			}
			if again, _ := os.ReadFile(tt.path); !bytes.Equal(again, key) {
				t.Fatalf("keys init over the file changed it")
			}
		})
	}
	if code, _, errOut := runKeys(t, nil, "keys", "init"); code != exitUsage || !strings.Contains(errOut, "--file PATH") {
		t.Errorf("keys init with no file = exit %d, %q; want usage", code, errOut)
	}
	if code, _, _ := runKeys(t, nil, "keys"); code != exitUsage {
		t.Errorf("keys alone = exit %d, want usage", code)
	}
}

// leaksKey reports whether s shows key: raw, in hex or in base64.
func leaksKey(s string, key []byte) bool {
	return strings.Contains(s, string(key[:8])) || strings.Contains(s, base64.StdEncoding.EncodeToString(key)[:12]) ||
		strings.Contains(strings.ToLower(s), hex.EncodeToString(key[:8]))
}

// TestKeyProvider: --key-file, $LOGTOOL_KEY_FILE and --key-env resolve to
// the same key (keys id prints its id); a key that cannot be read is
// exit 1 with a hint, both flags at once exit 2.
func TestKeyProvider(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "k")
	k, err := keys.CreateFile(file)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(file)
	b64 := base64.StdEncoding.EncodeToString(raw)
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		vars   map[string]string
		args   []string
		code   int
		stdout string
		stderr string // a part of it
	}{
		{"--key-file", nil, []string{"--key-file", file, "keys", "id"}, exitOK, k.KeyID() + "\n", ""},
		{"$LOGTOOL_KEY_FILE", map[string]string{keyFileEnv: file}, []string{"keys", "id"}, exitOK, k.KeyID() + "\n", ""},
		{"--key-env", map[string]string{"MY_KEY": b64}, []string{"--key-env", "MY_KEY", "keys", "id"}, exitOK, k.KeyID() + "\n", ""},
		{"--key-env wins over $LOGTOOL_KEY_FILE", map[string]string{"MY_KEY": b64, keyFileEnv: open}, []string{"--key-env", "MY_KEY", "keys", "id"}, exitOK, k.KeyID() + "\n", ""},
		{"no key", nil, []string{"keys", "id"}, exitUsage, "", "no key given"},
		{"both flags", map[string]string{"MY_KEY": b64}, []string{"--key-file", file, "--key-env", "MY_KEY", "keys", "id"}, exitUsage, "", "give one"},
		{"a file others may read", nil, []string{"--key-file", open, "keys", "id"}, exitFailure, "", "mode 0644"},
		{"a missing file", nil, []string{"--key-file", filepath.Join(dir, "none"), "keys", "id"}, exitFailure, "", "hint: 'logtool keys init --file PATH'"},
		{"an unset variable", nil, []string{"--key-env", "MY_KEY", "keys", "id"}, exitFailure, "", "$MY_KEY is not set"},
		{"a variable without a key", map[string]string{"MY_KEY": "secret-value"}, []string{"--key-env", "MY_KEY", "keys", "id"}, exitFailure, "", "hint: 'base64 -w0 KEYFILE'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runKeys(t, tt.vars, tt.args...)
			if code != tt.code || out != tt.stdout || !strings.Contains(errOut, tt.stderr) {
				t.Fatalf("logtool %s = exit %d, %q, %q; want %d, %q, stderr with %q", strings.Join(tt.args, " "), code, out, errOut, tt.code, tt.stdout, tt.stderr)
			}
			if leaksKey(out+errOut, raw) || strings.Contains(errOut, "secret-value") {
				t.Errorf("logtool printed a key or the variable's value: %q %q", out, errOut)
			}
		})
	}
}
