// Package secretfile reads files that hold secrets (keys, PINs, tokens, keysets): a regular file
// no one but its owner may read or write (0600 or stricter). Errors name the file and its mode,
// never its content.
package secretfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrMode is wrapped by the error refusing a file its group or others may access.
var ErrMode = errors.New("secret file readable by others")

// Mask is the permission bits a secret file must not have.
const Mask fs.FileMode = 0o077

// Check refuses path unless it is a regular file with mode 0600 or stricter.
func Check(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return check(path, fi)
}

func check(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%v)", path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&Mask != 0 {
		return fmt.Errorf("%w: %s has mode %04o: the group or others may use it; want 0600 or stricter (chmod 600 %s)",
			ErrMode, path, perm, path)
	}
	return nil
}

// Read reads path once Check's rules hold. The mode is read from the file opened, so it is the
// mode of the bytes read (a symbolic link is followed to the file it names, as in a Kubernetes
// Secret volume).
func Read(path string) ([]byte, error) {
	if path == "" {
		return nil, errors.New("no file given")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := check(path, fi); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}
