package keys

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/stakeflow/stakeflow/secretfile"
)

// ErrPINFileMode is wrapped by the error refusing a PIN file its group or others may access.
var ErrPINFileMode = errors.New("PIN file readable by others")

// ErrPINFile is wrapped by every error of ReadPIN.
var ErrPINFile = errors.New("PIN file refused")

// ReadPIN reads the PIN of a key backend (an HSM token's user PIN) from a file: a regular file no
// one but its owner may read or write (0600 or stricter), not empty; one trailing newline (\n or
// \r\n) is not part of the PIN. Errors wrap ErrPINFile (and ErrPINFileMode for the mode) and name
// the file and its mode, never its content.
func ReadPIN(path string) ([]byte, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: no PIN file given", ErrPINFile)
	}
	b, err := secretfile.Read(path)
	if errors.Is(err, secretfile.ErrMode) {
		return nil, fmt.Errorf("%w: %w: %v", ErrPINFile, ErrPINFileMode, err)
	}
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
