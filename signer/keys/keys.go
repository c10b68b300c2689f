package keys

import (
	"context"
	"errors"
	"fmt"
)

// Scheme names what a backend signs and the signature it returns.
type Scheme string

const (
	// Ed25519 signs the payload, the message bytes themselves (Solana): a 64-byte signature.
	Ed25519 Scheme = "ed25519"
	// Secp256k1Recoverable signs a 32-byte digest the caller computed (an EVM transaction's
	// signing hash, an EIP-712 hash): 65 bytes R || S || V, low S, V 0 or 1.
	Secp256k1Recoverable Scheme = "secp256k1-recoverable"
	// Secp256k1 signs a 32-byte digest the caller computed (Cosmos SDK: SHA-256 of the sign
	// doc): 64 bytes R || S, low S, no recovery id.
	Secp256k1 Scheme = "secp256k1"
)

// PayloadLen is the length a scheme's payload must have; 0 means any length.
func (s Scheme) PayloadLen() int {
	switch s {
	case Secp256k1Recoverable, Secp256k1:
		return 32
	default:
		return 0
	}
}

// SignatureLen is the length of the signature a scheme returns (0 for an unknown scheme).
func (s Scheme) SignatureLen() int {
	switch s {
	case Ed25519, Secp256k1:
		return 64
	case Secp256k1Recoverable:
		return 65
	default:
		return 0
	}
}

// Account is one key a backend holds: the chain's address text for it, its public key and an
// opaque handle only its backend reads (a file keyring: the address; an HSM: the key's label).
type Account struct {
	// Address is the address as the chain writes it (base58, 0x hex, celestia1...).
	Address string
	// PublicKey is the public key: 32 bytes (ed25519) or 33 compressed bytes (secp256k1).
	PublicKey []byte
	// Handle is the backend's own reference to the key.
	Handle string
}

// Backend holds keys and signs with them; it never hands a key out. It verifies nothing: a
// chain's signer decides what must be signed and hands the backend exactly those bytes.
type Backend interface {
	// Accounts lists the keys the backend holds.
	Accounts() []Account
	// Sign signs payload under scheme with acct's key. Errors name the account, never key bytes.
	Sign(ctx context.Context, acct Account, scheme Scheme, payload []byte) ([]byte, error)
}

// Finder is what a backend implements when it can find one account by address without
// listing them all.
type Finder interface {
	Account(address string) (Account, bool)
}

// Find returns the account of b with the given address.
func Find(b Backend, address string) (Account, bool) {
	if b == nil {
		return Account{}, false
	}
	if f, ok := b.(Finder); ok {
		return f.Account(address)
	}
	for _, a := range b.Accounts() {
		if a.Address == address {
			return a, true
		}
	}
	return Account{}, false
}

// ErrSign means the key backend did not sign.
var ErrSign = errors.New("key backend did not sign")

// SignError names the account and scheme a backend did not sign for, and why. It wraps ErrSign
// and the backend's error.
type SignError struct {
	Address string
	Scheme  Scheme
	Err     error
}

// Error implements error.
func (e *SignError) Error() string {
	return fmt.Sprintf("%v: account %s, %s: %v", ErrSign, e.Address, e.Scheme, e.Err)
}

// Unwrap returns ErrSign and the backend's error.
func (e *SignError) Unwrap() []error { return []error{ErrSign, e.Err} }

// Sign asks b to sign payload under scheme with acct's key and checks the lengths of the payload
// and of the signature returned. Every error is a *SignError naming acct.
func Sign(ctx context.Context, b Backend, acct Account, scheme Scheme, payload []byte) ([]byte, error) {
	fail := func(err error) ([]byte, error) {
		return nil, &SignError{Address: acct.Address, Scheme: scheme, Err: err}
	}
	if n := scheme.PayloadLen(); n != 0 && len(payload) != n {
		return fail(fmt.Errorf("payload is %d bytes, want %d", len(payload), n))
	}
	if scheme.SignatureLen() == 0 {
		return fail(fmt.Errorf("unknown scheme"))
	}
	if b == nil {
		return fail(errors.New("no key backend"))
	}
	sig, err := b.Sign(ctx, acct, scheme, payload)
	if err != nil {
		var se *SignError
		if errors.As(err, &se) {
			return nil, err
		}
		return fail(err)
	}
	if len(sig) != scheme.SignatureLen() {
		return fail(fmt.Errorf("signature is %d bytes, want %d", len(sig), scheme.SignatureLen()))
	}
	return sig, nil
}
