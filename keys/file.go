package keys

import (
	"crypto/rand"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
)

// FilePerm is the mode of a key file CreateFile writes. ReadFile takes a
// file whose mode gives nothing to group and others (0600, or 0400).
const FilePerm fs.FileMode = 0o600

// ReadFile reads the KEK of a key file: exactly KEKSize bytes, in a
// regular file (a symbolic link is followed) owned by the user the
// process runs as, that neither its group nor others may read or write.
// Every refusal is an error of class ErrKeys naming the file and what is
// wrong with it, never its bytes.
func ReadFile(path string) (*KEK, error) {
	// O_NONBLOCK: opening a FIFO put where the key should be returns at
	// once (and is refused below) instead of waiting for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, codec.MarkKeys(errors.Wrapf(err, "keys: key file"))
	}
	defer func() { _ = f.Close() }() // read only
	fi, err := f.Stat()
	if err != nil {
		return nil, codec.MarkKeys(errors.Wrapf(err, "keys: key file %s", errors.Safe(path)))
	}
	if err := safeKeyFile(path, fi); err != nil {
		return nil, err
	}
	var b [KEKSize + 1]byte
	n, err := io.ReadFull(f, b[:])
	switch {
	case err != nil && err != io.ErrUnexpectedEOF && err != io.EOF:
		return nil, codec.MarkKeys(errors.Wrapf(err, "keys: key file %s", errors.Safe(path)))
	case n != KEKSize:
		more := ""
		if n > KEKSize {
			more = " or more"
		}
		return nil, keysf("keys: key file %s holds %d bytes%s; a key file holds %d (logtool keys init writes one)",
			errors.Safe(path), errors.Safe(n), errors.Safe(more), errors.Safe(KEKSize))
	}
	k, err := NewKEK(b[:KEKSize])
	clear(b[:])
	return k, err
}

// safeKeyFile checks the mode and owner of a key file.
func safeKeyFile(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return keysf("keys: key file %s is not a regular file", errors.Safe(path))
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return keysf("keys: key file %s has mode %04o: others than its owner may read or change it; chmod 600 it",
			errors.Safe(path), errors.Safe(uint32(perm)))
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return keysf("keys: key file %s: its owner cannot be read on this system", errors.Safe(path))
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return keysf("keys: key file %s is owned by uid %d, not by this user (uid %d)", errors.Safe(path), errors.Safe(st.Uid), errors.Safe(uid))
	}
	return nil
}

// CreateFile writes a new key file at path: KEKSize random bytes (from
// crypto/rand), mode FilePerm, synced with its directory before it
// returns (a key lost in a crash is every session sealed under it). It
// never replaces a file: one at path is an error of class ErrKeys, and
// the file is left as it was. It returns the new KEK.
func CreateFile(path string) (k *KEK, err error) {
	var secret [KEKSize]byte
	_, _ = rand.Read(secret[:]) // never fails (crypto/rand, Go 1.24 on)
	defer clear(secret[:])
	k, err = NewKEK(secret[:])
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FilePerm)
	if errors.Is(err, fs.ErrExist) {
		return nil, keysf("keys: key file %s exists; a new key never replaces one", errors.Safe(path))
	}
	if err != nil {
		return nil, codec.MarkKeys(errors.Wrapf(err, "keys: create key file"))
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(path) // what this call created, and nothing else
		}
	}()
	wrap := func(err error) error {
		return codec.MarkKeys(errors.Wrapf(err, "keys: write key file %s", errors.Safe(path)))
	}
	// The umask may have taken bits from FilePerm: the owner must read it.
	if err := f.Chmod(FilePerm); err != nil {
		return nil, wrap(err)
	}
	if _, err := f.Write(secret[:]); err != nil {
		return nil, wrap(err)
	}
	if err := f.Sync(); err != nil {
		return nil, wrap(err)
	}
	if err := f.Close(); err != nil {
		return nil, wrap(err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return nil, wrap(err)
	}
	return k, nil
}

// syncDir fsyncs a directory, so that a name created in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.CombineErrors(err, d.Close())
}
