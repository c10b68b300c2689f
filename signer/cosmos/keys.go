package cosmos

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/cosmos/go-bip39"
	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	secpecdsa "github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"

	"github.com/stakeflow/stakeflow/signer/cosmos/tx"
	"github.com/stakeflow/stakeflow/signer/evm"
	"github.com/stakeflow/stakeflow/signer/keys"
)

const redacted = "[REDACTED]"

// Keyring holds secp256k1 keys by Celestia account address. It prints its addresses only.
type Keyring struct {
	keys map[string]*secp256k1.PrivateKey
}

// LoadKeyring decrypts the keystore v3 files of dir with the passphrase in passphraseFile, with
// the rules of evm.LoadKeyring, and keys them by their celestia1... address.
func LoadKeyring(dir, passphraseFile string) (*Keyring, error) {
	kr := &Keyring{keys: map[string]*secp256k1.PrivateKey{}}
	err := evm.ForEachKeyFile(dir, passphraseFile, func(_ string, k *ecdsa.PrivateKey, _ common.Address) error {
		priv := secp256k1.PrivKeyFromBytes(crypto.FromECDSA(k))
		a, err := tx.Address(AccountPrefix, priv.PubKey().SerializeCompressed())
		if err != nil {
			return err
		}
		kr.keys[a] = priv
		return nil
	})
	if err != nil {
		return nil, err
	}
	return kr, nil
}

// Addresses returns the celestia1... addresses of the loaded keys, sorted.
func (kr *Keyring) Addresses() []string {
	if kr == nil {
		return nil
	}
	out := make([]string, 0, len(kr.keys))
	for a := range kr.keys {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// Has reports whether a key is loaded for addr.
func (kr *Keyring) Has(addr string) bool { return kr != nil && kr.keys[addr] != nil }

func (kr *Keyring) key(addr string) (*secp256k1.PrivateKey, error) {
	if !kr.Has(addr) {
		return nil, fmt.Errorf("%w: %s", ErrUnknownKey, addr)
	}
	return kr.keys[addr], nil
}

var _ keys.Backend = (*Keyring)(nil)

// Accounts lists the loaded keys as key-backend accounts (keys.Backend), sorted by address; an
// account's PublicKey is the compressed key the transaction carries.
func (kr *Keyring) Accounts() []keys.Account {
	addrs := kr.Addresses()
	out := make([]keys.Account, len(addrs))
	for i, a := range addrs {
		out[i], _ = kr.Account(a)
	}
	return out
}

// Account returns the account of a celestia1... address (keys.Finder).
func (kr *Keyring) Account(addr string) (keys.Account, bool) {
	k, err := kr.key(addr)
	if err != nil {
		return keys.Account{}, false
	}
	return keys.Account{Address: addr, PublicKey: k.PubKey().SerializeCompressed(), Handle: addr}, true
}

// Sign signs a 32-byte digest with acct's key under keys.Secp256k1 (keys.Backend): RFC 6979, low
// S, 64 bytes R || S.
func (kr *Keyring) Sign(ctx context.Context, acct keys.Account, scheme keys.Scheme, payload []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if scheme != keys.Secp256k1 {
		return nil, fmt.Errorf("a Celestia keyring signs %s only, not %s", keys.Secp256k1, scheme)
	}
	if len(payload) != 32 {
		return nil, fmt.Errorf("digest is %d bytes, want 32", len(payload))
	}
	k, err := kr.key(acct.Handle)
	if err != nil {
		return nil, err
	}
	return secpecdsa.SignCompact(k, payload, true)[1:], nil
}

// String describes the keyring by its addresses only.
func (kr Keyring) String() string {
	return fmt.Sprintf("cosmos.Keyring{addresses: %v, keys: %s}", (&kr).Addresses(), redacted)
}

// GoString is String.
func (kr Keyring) GoString() string { return kr.String() }

// Format prints String under every verb.
func (kr Keyring) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(kr.String())) }

// MarshalJSON encodes the addresses only.
func (kr Keyring) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Addresses []string `json:"addresses"`
		Keys      string   `json:"keys"`
	}{(&kr).Addresses(), redacted})
}

// scryptN is the scrypt cost of written key files (keystore's standard; tests lower it).
var scryptN = keystore.StandardScryptN

// HDPath is the Cosmos BIP-44 path of the first account key (coin type 118).
const HDPath = "m/44'/118'/0'/0/0"

// keyFromMnemonic derives the secp256k1 key at HDPath from a BIP-39 mnemonic (no BIP-39
// passphrase). Errors never contain the mnemonic.
func keyFromMnemonic(mnemonic string) (*secp256k1.PrivateKey, error) {
	mnemonic = strings.Join(strings.Fields(mnemonic), " ")
	seed, err := bip39.NewSeedWithErrorChecking(mnemonic, "")
	if err != nil {
		return nil, fmt.Errorf("%w: not a valid BIP-39 mnemonic (word list or checksum)", ErrKey)
	}
	defer clear(seed)
	k, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
	if err != nil {
		return nil, fmt.Errorf("%w: master key: %w", ErrKey, err)
	}
	const h = hdkeychain.HardenedKeyStart
	for _, i := range []uint32{h + 44, h + 118, h + 0, 0, 0} {
		if k, err = k.Derive(i); err != nil {
			return nil, fmt.Errorf("%w: derivation: %w", ErrKey, err)
		}
	}
	ec, err := k.ECPrivKey()
	if err != nil {
		return nil, fmt.Errorf("%w: derivation: %w", ErrKey, err)
	}
	return secp256k1.PrivKeyFromBytes(ec.Serialize()), nil
}

// ImportMnemonic derives the key at HDPath from mnemonic, encrypts it with passphrase into a
// keystore v3 file in dir (mode 0600, named after the address) and returns the celestia1...
// address and the file path. An existing file is not overwritten. The mnemonic is not kept.
func ImportMnemonic(mnemonic, passphrase, dir string) (address, path string, err error) {
	if passphrase == "" {
		return "", "", fmt.Errorf("%w: an empty passphrase is refused", ErrKey)
	}
	priv, err := keyFromMnemonic(mnemonic)
	if err != nil {
		return "", "", err
	}
	address, err = tx.Address(AccountPrefix, priv.PubKey().SerializeCompressed())
	if err != nil {
		return "", "", err
	}
	ek, err := crypto.ToECDSA(priv.Serialize())
	if err != nil {
		return "", "", fmt.Errorf("%w: %w", ErrKey, err)
	}
	id, err := uuid.NewRandom()
	if err != nil {
		return "", "", fmt.Errorf("%w: %w", ErrKey, err)
	}
	js, err := keystore.EncryptKey(&keystore.Key{Id: id, Address: crypto.PubkeyToAddress(ek.PublicKey), PrivateKey: ek},
		passphrase, scryptN, keystore.StandardScryptP)
	if err != nil {
		return "", "", fmt.Errorf("%w: encrypt: %w", ErrKey, err)
	}
	path = filepath.Join(dir, address+".json")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", "", fmt.Errorf("%w: %w", ErrKey, err)
	}
	if _, err := f.Write(js); err != nil {
		_ = f.Close()
		return "", "", fmt.Errorf("%w: write %s: %w", ErrKey, path, err)
	}
	if err := f.Close(); err != nil {
		return "", "", fmt.Errorf("%w: write %s: %w", ErrKey, path, err)
	}
	return address, path, nil
}
