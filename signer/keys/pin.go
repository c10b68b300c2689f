package keys

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrPINFileMode is wrapped by the error refusing a PIN file its group or others may access.
var ErrPINFileMode = errors.New("PIN file readable by others")

// ErrPINFile is wrapped by every error of ReadPIN.
var ErrPINFile = errors.New("PIN file refused")

// pinFileMask is the permission bits a PIN file must not have.
const pinFileMask fs.FileMode = 0o077

// ReadPIN reads the PIN of a key backend (an HSM token's user PIN) from a file: a regular file no
// one but its owner may read or write (0600 or stricter), not empty; one trailing newline (\n or
// \r\n) is not part of the PIN. Errors wrap ErrPINFile (and ErrPINFileMode for the mode) and name
// the file and its mode, never its content.
func ReadPIN(path string) ([]byte, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: no PIN file given", ErrPINFile)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPINFile, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file (%v)", ErrPINFile, path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&pinFileMask != 0 {
		return nil, fmt.Errorf("%w: %w: %s has mode %04o: the group or others may use it; want 0600 or stricter (chmod 600 %s)",
			ErrPINFile, ErrPINFileMode, path, perm, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPINFile, err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: %s is empty", ErrPINFile, path)
	}
	return b, nil
}
