package stack

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/stakeflow/stakeflow/codec"
)

// WriteKeyset writes a payload keyset file (codec.KeysetFile) at path with mode 0600, as
// codec.LoadKeyset wants it, replacing what was there: a stack's Options.PayloadKeyset, or the
// keyset a running stack's worker reads when it starts again (a rotation).
func WriteKeyset(path string, f codec.KeysetFile) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("writing the payload keyset %s: %w", path, err)
	}
	// WriteFile keeps the mode of a file that exists already.
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// NewKeysetFile writes a keyset of one fresh key, current, under id at path (WriteKeyset).
func NewKeysetFile(path, id string) (codec.KeysetFile, error) {
	f, err := codec.NewKeyFile(id)
	if err != nil {
		return codec.KeysetFile{}, err
	}
	return f, WriteKeyset(path, f)
}
