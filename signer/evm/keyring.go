package evm

import (
	"bytes"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"

	"github.com/stakeflow/stakeflow/secretfile"
)

// redacted is what keyrings and signers print in place of their contents.
const redacted = "[REDACTED]"

// Keyring holds secp256k1 keys decrypted from Ethereum keystore v3 files, chosen by address.
// The key bytes are never exposed: the keyring formats as its list of addresses only.
type Keyring struct {
	keys map[common.Address]*ecdsa.PrivateKey
}

// LoadKeyring decrypts every keystore v3 file in dir with the passphrase read from
// passphraseFile (one trailing newline, "\n" or "\r\n", is trimmed; an empty passphrase is
// refused). Every regular file of dir whose name does not start with "." is a key file, symbolic
// links to regular files included, as in a Kubernetes Secret volume; a directory without any is an
// error. The passphrase file and every key file must not be accessible to the group or others
// (mode & 0o077 == 0): keys are written 0600. A file whose "address" field differs from the
// address of the key it holds is refused, and so are two files holding the same key. Errors name
// the file, never its contents or the passphrase.
func LoadKeyring(dir, passphraseFile string) (*Keyring, error) {
	kr := &Keyring{keys: make(map[common.Address]*ecdsa.PrivateKey)}
	err := ForEachKeyFile(dir, passphraseFile, func(_ string, key *ecdsa.PrivateKey, a common.Address) error {
		kr.keys[a] = key
		return nil
	})
	if err != nil {
		return nil, err
	}
	return kr, nil
}

// ForEachKeyFile decrypts the keystore v3 files of dir as LoadKeyring does (same rules for the
// passphrase file, file modes, the address field, duplicates and an empty directory) and hands
// each key to fn with its file path and Ethereum address. Other chains' keyrings that keep
// secp256k1 keys in the same files derive their own addresses from the key.
func ForEachKeyFile(dir, passphraseFile string, fn func(path string, key *ecdsa.PrivateKey, addr common.Address) error) error {
	passphrase, err := readPassphrase(passphraseFile)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%w: key directory %s: %w", ErrKeyLoad, dir, err)
	}
	from := make(map[common.Address]string)
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		if !e.Type().IsRegular() {
			// Follow symbolic links (Secret volumes link each key into a hidden data directory).
			target, err := os.Stat(path)
			if err != nil || !target.Mode().IsRegular() {
				continue
			}
		}
		key, a, err := loadKeyFile(path, passphrase)
		if err != nil {
			return err
		}
		if first, dup := from[a]; dup {
			return fmt.Errorf("%w: %s: holds the key of %s, already loaded from %s", ErrKeyLoad, path, a.Hex(), first)
		}
		from[a] = path
		if err := fn(path, key, a); err != nil {
			return err
		}
	}
	if len(from) == 0 {
		return fmt.Errorf("%w: directory %s holds no keystore files", ErrKeyLoad, dir)
	}
	return nil
}

// openPrivate opens path and refuses it when the group or others may access it. The mode is read
// from the file opened, so that it is the mode of the bytes read.
func openPrivate(path, what string) ([]byte, error) {
	raw, err := secretfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrKeyLoad, what, err)
	}
	return raw, nil
}

func readPassphrase(path string) (string, error) {
	raw, err := openPrivate(path, "passphrase file")
	if err != nil {
		return "", err
	}
	defer clear(raw)
	raw = bytes.TrimSuffix(raw, []byte("\n"))
	raw = bytes.TrimSuffix(raw, []byte("\r"))
	if len(raw) == 0 {
		return "", fmt.Errorf("%w: passphrase file %s is empty", ErrKeyLoad, path)
	}
	return string(raw), nil
}

// keystoreHeader is the part of a keystore file read before decryption.
type keystoreHeader struct {
	Version json.RawMessage `json:"version"`
	Address string          `json:"address"`
}

// loadKeyFile decrypts one keystore v3 file. Its errors never carry the passphrase or the file's
// bytes: the library's own error text is replaced by a description.
func loadKeyFile(path, passphrase string) (*ecdsa.PrivateKey, common.Address, error) {
	raw, err := openPrivate(path, "key file")
	if err != nil {
		return nil, common.Address{}, err
	}
	defer clear(raw)
	var h keystoreHeader
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, common.Address{}, fmt.Errorf("%w: key file %s: not a JSON keystore file", ErrKeyLoad, path)
	}
	if string(h.Version) != "3" {
		return nil, common.Address{}, fmt.Errorf("%w: key file %s: keystore version %s, want 3", ErrKeyLoad, path, printable(h.Version))
	}
	key, err := keystore.DecryptKey(raw, passphrase)
	if err != nil {
		if errors.Is(err, keystore.ErrDecrypt) {
			return nil, common.Address{}, fmt.Errorf("%w: key file %s: wrong passphrase or corrupted file (MAC mismatch)", ErrKeyLoad, path)
		}
		return nil, common.Address{}, fmt.Errorf("%w: key file %s: not a valid keystore v3 key (%s)", ErrKeyLoad, path, scrub(err.Error(), passphrase))
	}
	if h.Address != "" {
		named := strings.TrimPrefix(strings.ToLower(h.Address), "0x")
		if !common.IsHexAddress(named) || common.HexToAddress(named) != key.Address {
			return nil, common.Address{}, fmt.Errorf("%w: key file %s: address field %q but the key is for %s", ErrKeyLoad, path, printable([]byte(h.Address)), key.Address.Hex())
		}
	}
	return key.PrivateKey, key.Address, nil
}

// printable shortens a field read from a key file for an error message.
func printable(b []byte) string {
	s := string(b)
	if len(s) > 48 {
		s = s[:48] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// scrub removes the passphrase from a message, should a library ever echo it.
func scrub(msg, passphrase string) string {
	if passphrase == "" {
		return msg
	}
	return strings.ReplaceAll(msg, passphrase, redacted)
}

// Addresses returns the addresses of the loaded keys, sorted.
func (kr *Keyring) Addresses() []common.Address {
	if kr == nil {
		return nil
	}
	out := make([]common.Address, 0, len(kr.keys))
	for a := range kr.keys {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b common.Address) int { return a.Cmp(b) })
	return out
}

// Has reports whether a key is loaded for addr.
func (kr *Keyring) Has(addr common.Address) bool {
	_, err := kr.key(addr)
	return err == nil
}

// Len returns the number of loaded keys.
func (kr *Keyring) Len() int {
	if kr == nil {
		return 0
	}
	return len(kr.keys)
}

func (kr *Keyring) key(addr common.Address) (*ecdsa.PrivateKey, error) {
	if kr == nil {
		return nil, &UnknownKeyError{Address: addr.Hex()}
	}
	k, ok := kr.keys[addr]
	if !ok {
		return nil, &UnknownKeyError{Address: addr.Hex()}
	}
	return k, nil
}

func (kr *Keyring) hexAddresses() []string {
	addrs := kr.Addresses()
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.Hex()
	}
	return out
}

// String describes the keyring by its addresses only.
func (kr Keyring) String() string {
	return fmt.Sprintf("evm.Keyring{addresses: %v, keys: %s}", (&kr).hexAddresses(), redacted)
}

// GoString is String, so that %#v reveals nothing either.
func (kr Keyring) GoString() string { return kr.String() }

// Format prints String under every verb, so that no verb reaches the key bytes.
func (kr Keyring) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(kr.String())) }

// MarshalJSON encodes the addresses only.
func (kr Keyring) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Addresses []string `json:"addresses"`
		Keys      string   `json:"keys"`
	}{(&kr).hexAddresses(), redacted})
}

// MarshalText encodes String, for encoders that prefer text.
func (kr Keyring) MarshalText() ([]byte, error) { return []byte(kr.String()), nil }
