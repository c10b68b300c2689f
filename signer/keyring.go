package signer

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gagliardetto/solana-go"

	"github.com/stakeflow/stakeflow/signer/keys"

	"github.com/stakeflow/stakeflow/secretfile"
)

// solanaKeypairLen is the length of a Solana CLI keypair: 32-byte seed then 32-byte public key.
const solanaKeypairLen = ed25519.PrivateKeySize

// redacted is what keyrings and signers print in place of their contents.
const redacted = "[REDACTED]"

// SolanaKeyring holds Solana ed25519 keys, chosen by base58 address. The key bytes are never
// exposed: the keyring formats as its list of addresses only.
type SolanaKeyring struct {
	keys map[solana.PublicKey]ed25519.PrivateKey
}

// LoadSolanaKeyring loads Solana CLI keypair files (a JSON array of 64 numbers: the 32-byte
// seed followed by the 32-byte public key). Each path is a file, or a directory whose "*.json"
// files are each one keypair, symbolic links to regular files included, as in a Kubernetes Secret
// volume (other entries and hidden names are ignored; a directory without any is an error). A key
// file the group or others may access (mode & 0o077 != 0) is refused: keys are written 0600. A
// keypair whose public half does not match its private half is refused; so is a file named
// "<address>.json" whose key is for another address. Errors name the file, never its contents.
func LoadSolanaKeyring(paths ...string) (*SolanaKeyring, error) {
	kr := &SolanaKeyring{keys: make(map[solana.PublicKey]ed25519.PrivateKey)}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrKeyLoad, p, err)
		}
		if !fi.IsDir() {
			if err := kr.loadFile(p); err != nil {
				return nil, err
			}
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrKeyLoad, p, err)
		}
		loaded := 0
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
				continue
			}
			if !e.Type().IsRegular() {
				// Follow symbolic links (Secret volumes link each key into a hidden data directory).
				target, err := os.Stat(filepath.Join(p, name))
				if err != nil || !target.Mode().IsRegular() {
					continue
				}
			}
			if err := kr.loadFile(filepath.Join(p, name)); err != nil {
				return nil, err
			}
			loaded++
		}
		if loaded == 0 {
			return nil, fmt.Errorf("%w: directory %s holds no *.json keypair files", ErrKeyLoad, p)
		}
	}
	return kr, nil
}

func (kr *SolanaKeyring) loadFile(path string) error {
	raw, err := secretfile.Read(path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrKeyLoad, err)
	}
	defer clear(raw)
	key, err := parseSolanaKeypair(raw)
	if err != nil {
		return fmt.Errorf("%w: %s: %s", ErrKeyLoad, path, err.Error())
	}
	pub := solana.PublicKeyFromBytes(key.Public().(ed25519.PublicKey))
	base := strings.TrimSuffix(filepath.Base(path), ".json")
	if named, err := solana.PublicKeyFromBase58(base); err == nil && !named.Equals(pub) {
		return fmt.Errorf("%w: %s: file is named for %s but holds the key of %s", ErrKeyLoad, path, named, pub)
	}
	kr.keys[pub] = key
	return nil
}

// parseSolanaKeypair parses a CLI keypair without echoing any of its content in errors.
func parseSolanaKeypair(raw []byte) (ed25519.PrivateKey, error) {
	var nums []json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&nums); err != nil {
		return nil, fmt.Errorf("not a JSON array of %d numbers", solanaKeypairLen)
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON array")
	}
	if len(nums) != solanaKeypairLen {
		return nil, fmt.Errorf("keypair has %d elements, want %d", len(nums), solanaKeypairLen)
	}
	buf := make([]byte, solanaKeypairLen)
	defer clear(buf)
	for i, n := range nums {
		v, err := strconv.ParseUint(string(n), 10, 8)
		if err != nil {
			return nil, fmt.Errorf("element %d is not an integer from 0 to 255", i)
		}
		buf[i] = byte(v)
	}
	key := ed25519.NewKeyFromSeed(buf[:ed25519.SeedSize])
	if !bytes.Equal(key[ed25519.SeedSize:], buf[ed25519.SeedSize:]) {
		clear(key)
		return nil, fmt.Errorf("public half of the keypair does not match its private half")
	}
	return key, nil
}

// Addresses returns the base58 addresses of the loaded keys, sorted.
func (kr *SolanaKeyring) Addresses() []string {
	if kr == nil {
		return nil
	}
	out := make([]string, 0, len(kr.keys))
	for pk := range kr.keys {
		out = append(out, pk.String())
	}
	slices.Sort(out)
	return out
}

// Has reports whether a key is loaded for the base58 address addr.
func (kr *SolanaKeyring) Has(addr string) bool {
	_, err := kr.key(addr)
	return err == nil
}

// Len returns the number of loaded keys.
func (kr *SolanaKeyring) Len() int {
	if kr == nil {
		return 0
	}
	return len(kr.keys)
}

func (kr *SolanaKeyring) key(addr string) (ed25519.PrivateKey, error) {
	pk, err := solana.PublicKeyFromBase58(addr)
	if err != nil {
		return nil, &UnknownKeyError{Address: addr}
	}
	return kr.keyFor(pk, addr)
}

// keyFor returns the key for pk, the decoding of the base58 address addr.
func (kr *SolanaKeyring) keyFor(pk solana.PublicKey, addr string) (ed25519.PrivateKey, error) {
	if kr == nil {
		return nil, &UnknownKeyError{Address: addr}
	}
	k, ok := kr.keys[pk]
	if !ok {
		return nil, &UnknownKeyError{Address: addr}
	}
	return k, nil
}

var _ keys.Backend = (*SolanaKeyring)(nil)

// Accounts lists the loaded keys as key-backend accounts (keys.Backend), sorted by address.
func (kr *SolanaKeyring) Accounts() []keys.Account {
	addrs := kr.Addresses()
	out := make([]keys.Account, len(addrs))
	for i, a := range addrs {
		out[i], _ = kr.Account(a)
	}
	return out
}

// Account returns the account of the base58 address addr (keys.Finder).
func (kr *SolanaKeyring) Account(addr string) (keys.Account, bool) {
	k, err := kr.key(addr)
	if err != nil {
		return keys.Account{}, false
	}
	pub := solana.PublicKeyFromBytes(k.Public().(ed25519.PublicKey))
	return keys.Account{Address: pub.String(), PublicKey: pub.Bytes(), Handle: pub.String()}, true
}

// Sign signs payload, the message bytes, with acct's ed25519 key (keys.Backend). Only
// keys.Ed25519 is supported.
func (kr *SolanaKeyring) Sign(ctx context.Context, acct keys.Account, scheme keys.Scheme, payload []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if scheme != keys.Ed25519 {
		return nil, fmt.Errorf("a Solana keyring signs %s only, not %s", keys.Ed25519, scheme)
	}
	k, err := kr.key(acct.Handle)
	if err != nil {
		return nil, err
	}
	return ed25519.Sign(k, payload), nil
}

// String describes the keyring by its addresses only.
func (kr SolanaKeyring) String() string {
	return fmt.Sprintf("SolanaKeyring{addresses: %v, keys: %s}", (&kr).Addresses(), redacted)
}

// GoString is String, so that %#v reveals nothing either.
func (kr SolanaKeyring) GoString() string { return kr.String() }

// Format prints String under every verb, so that no verb reaches the key bytes.
func (kr SolanaKeyring) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(kr.String())) }

// MarshalJSON encodes the addresses only.
func (kr SolanaKeyring) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Addresses []string `json:"addresses"`
		Keys      string   `json:"keys"`
	}{(&kr).Addresses(), redacted})
}

// MarshalText encodes String, for encoders that prefer text.
func (kr SolanaKeyring) MarshalText() ([]byte, error) { return []byte(kr.String()), nil }
