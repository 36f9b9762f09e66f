package keys_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessionlog/sessionlog/internal/permtest"
	"github.com/sessionlog/sessionlog/keys"
)

// writeKeyFile writes b to a new file of mode perm and returns its path.
func writeKeyFile(t testing.TB, b []byte, perm fs.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(writeKeyFile(t, secret, 0o600), link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want string // "ok", or the class and a part of the message
	}{
		{"mode 0600", writeKeyFile(t, secret, 0o600), "ok"},
		{"mode 0400", writeKeyFile(t, secret, 0o400), "ok"},
		{"a link to a good file", link, "ok"},
		{"mode 0644", writeKeyFile(t, secret, 0o644), "keys: mode 0644"},
		{"mode 0640", writeKeyFile(t, secret, 0o640), "keys: mode 0640"},
		{"mode 0602", writeKeyFile(t, secret, 0o602), "keys: mode 0602"},
		{"mode 0620", writeKeyFile(t, secret, 0o620), "keys: mode 0620"},
		{"31 bytes", writeKeyFile(t, secret[:31], 0o600), "keys: holds 31 bytes"},
		{"33 bytes", writeKeyFile(t, append(bytes.Clone(secret), '\n'), 0o600), "keys: holds 33 bytes or more"},
		{"4 KiB", writeKeyFile(t, bytes.Repeat(secret, 128), 0o600), "keys: holds 33 bytes or more"},
		{"empty", writeKeyFile(t, nil, 0o600), "keys: holds 0 bytes"},
		{"missing", filepath.Join(dir, "none"), "keys: no such file"},
		{"a directory", dir, "keys: not a regular file"},
		{"a FIFO, no writer", fifo, "keys: not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := keys.ReadFile(tt.path)
			if tt.want == "ok" {
				if err != nil || k.KeyID() != mustKEK(t, secret).KeyID() {
					t.Fatalf("ReadFile = %v, %v; want the test key", k, err)
				}
				return
			}
			c, part, _ := strings.Cut(tt.want, ": ")
			if class(err) != c || !strings.Contains(err.Error(), part) || !strings.Contains(err.Error(), tt.path) {
				t.Fatalf("ReadFile = %v (class %s), want class %s naming the file and %q", err, class(err), c, part)
			}
			if leaks(err.Error(), secret) {
				t.Errorf("the error shows the key: %v", err)
			}
		})
	}
}

// TestReadFileOwner: a key file of another user is refused, whatever its
// mode. Only root can give a file away.
func TestReadFileOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("CI runs this test as root: only root can give a file to another user")
		}
		t.Skip("only root can give a file to another user")
	}
	path := writeKeyFile(t, secret, 0o600)
	if err := os.Chown(path, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.ReadFile(path); class(err) != "keys" || !strings.Contains(err.Error(), "owned by uid 4242") {
		t.Fatalf("ReadFile of another user's file = %v, want class keys naming its owner", err)
	}
}

// TestCreateFile: a new key file is 32 bytes of mode 0600, whatever the
// umask, reads back as the key CreateFile returned, and is never
// replaced. Not parallel: the umask is the process's.
func TestCreateFile(t *testing.T) {
	for _, mask := range []int{0o022, 0o077, 0o277} {
		permtest.Umask(t, mask)
		path := filepath.Join(t.TempDir(), "new.key")
		k, err := keys.CreateFile(path)
		if err != nil {
			t.Fatalf("umask %04o: CreateFile = %v", mask, err)
		}
		permtest.Want(t, path, 0o600)
		b, err := os.ReadFile(path)
		if err != nil || len(b) != keys.KEKSize {
			t.Fatalf("umask %04o: the key file holds %d bytes, %v", mask, len(b), err)
		}
		back, err := keys.ReadFile(path)
		if err != nil || back.KeyID() != k.KeyID() {
			t.Fatalf("umask %04o: ReadFile of the new file = %v, %v; want id %s", mask, back, err, k.KeyID())
		}
		if _, err := keys.CreateFile(path); class(err) != "keys" || !strings.Contains(err.Error(), "exists") {
			t.Errorf("CreateFile over a key file = %v, want class keys saying it exists", err)
		}
		if again, _ := os.ReadFile(path); !bytes.Equal(again, b) {
			t.Fatalf("CreateFile over a key file changed it")
		}
	}
	other, err := keys.CreateFile(filepath.Join(t.TempDir(), "other.key"))
	if err != nil {
		t.Fatal(err)
	}
	if first, _ := keys.CreateFile(filepath.Join(t.TempDir(), "k")); first.KeyID() == other.KeyID() {
		t.Errorf("two new key files have one id: the keys are not random")
	}
	if _, err := keys.CreateFile(filepath.Join(t.TempDir(), "no", "such", "dir", "k")); class(err) != "keys" {
		t.Errorf("CreateFile in a missing directory = %v, want class keys", err)
	}
}
