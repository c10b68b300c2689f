package hsm

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/gagliardetto/solana-go"

	"github.com/stakeflow/stakeflow/signer/cosmos/tx"
	"github.com/stakeflow/stakeflow/signer/keys"
)

// Config names the token a worker signs with.
type Config struct {
	// Module is the path of the vendor's PKCS#11 library (SoftHSM2: /usr/lib/softhsm/libsofthsm2.so).
	Module string
	// Token is the token's label.
	Token string
	// PINFile is the path of a file holding the user PIN (mode 0600 or stricter; one trailing
	// newline is ignored).
	PINFile string
}

// KeyType is the kind of key pair in the token.
type KeyType string

const (
	// Ed25519 keys sign Solana messages (CKM_EDDSA).
	Ed25519 KeyType = "ed25519"
	// Secp256k1 keys sign EVM, Hyperliquid and Celestia digests (CKM_ECDSA).
	Secp256k1 KeyType = "secp256k1"
)

// Valid reports whether kt is a key type this package knows.
func (kt KeyType) Valid() bool { return kt == Ed25519 || kt == Secp256k1 }

// KeyInfo is the public data of one key pair in the token.
type KeyInfo struct {
	Label string
	ID    []byte
	Type  KeyType
	// PublicKey is 32 bytes (ed25519) or 33 compressed bytes (secp256k1).
	PublicKey []byte
}

// ErrLogin means the token refused the PIN (or the login). Its errors name the token, never the PIN.
var ErrLogin = errors.New("hsm: token login refused")

// ErrConfig means the settings are unusable: a missing module, a token label no slot holds, a PIN
// file with loose permissions, a key reference that names no key.
var ErrConfig = errors.New("hsm: configuration refused")

// ErrUnavailable means this binary cannot reach PKCS#11 at all (built without cgo).
var ErrUnavailable = errors.New("hsm: PKCS#11 unavailable")

// LoginError is a refused login; it names the token and the token's reason (a CKR_ code).
type LoginError struct {
	Token  string
	Reason string
}

// Error implements error.
func (e *LoginError) Error() string {
	return fmt.Sprintf("%v: token %q: %s", ErrLogin, e.Token, e.Reason)
}

// Is matches ErrLogin.
func (e *LoginError) Is(target error) bool { return target == ErrLogin }

func configErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
}

// ReadPIN reads a PIN file as keys.ReadPIN does (0600 or stricter, not empty); its errors are
// ErrConfig too.
func ReadPIN(path string) ([]byte, error) {
	pin, err := keys.ReadPIN(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return pin, nil
}

// SolanaAddress is a Solana address: the base58 text of a 32-byte ed25519 public key.
func SolanaAddress(pub []byte) (string, error) {
	if len(pub) != 32 {
		return "", fmt.Errorf("hsm: a Solana address needs a 32-byte ed25519 public key, got %d bytes", len(pub))
	}
	return solana.PublicKeyFromBytes(pub).String(), nil
}

// EVMAddress is the checksummed 0x address of a 33-byte compressed secp256k1 public key (EVM
// chains and Hyperliquid).
func EVMAddress(pub []byte) (string, error) {
	k, err := crypto.DecompressPubkey(pub)
	if err != nil {
		return "", fmt.Errorf("hsm: an EVM address needs a 33-byte compressed secp256k1 public key: %w", err)
	}
	return crypto.PubkeyToAddress(*k).Hex(), nil
}

// CosmosAddress returns the address function of a Cosmos SDK chain whose accounts carry the
// bech32 prefix hrp (Celestia: "celestia"), over a 33-byte compressed secp256k1 public key.
func CosmosAddress(hrp string) func(pub []byte) (string, error) {
	return func(pub []byte) (string, error) { return tx.Address(hrp, pub) }
}

// parseRef reads a key reference: "id:<hex>" names a CKA_ID, anything else a CKA_LABEL.
func parseRef(ref string) (label string, id []byte, err error) {
	if rest, ok := strings.CutPrefix(ref, "id:"); ok {
		id, err := hex.DecodeString(rest)
		if err != nil || len(id) == 0 {
			return "", nil, configErr("key reference %q: the id is not hex", ref)
		}
		return "", id, nil
	}
	if ref == "" {
		return "", nil, configErr("an empty key reference")
	}
	return ref, nil, nil
}
