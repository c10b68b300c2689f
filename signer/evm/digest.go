package evm

import (
	"context"
	"crypto/ecdsa"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/stakeflow/stakeflow/signer/keys"
)

// KeyringOf holds keys already in memory (tests, tools that derive keys); LoadKeyring is the way
// a worker loads its keys.
func KeyringOf(keys ...*ecdsa.PrivateKey) *Keyring {
	kr := &Keyring{keys: make(map[common.Address]*ecdsa.PrivateKey, len(keys))}
	for _, k := range keys {
		kr.keys[crypto.PubkeyToAddress(k.PublicKey)] = k
	}
	return kr
}

// SignDigest signs a 32-byte digest that the caller has already verified (an EIP-712 hash, say)
// with addr's key: the 65-byte [R || S || V] signature, V 0 or 1. A chain's signer that builds
// its own digest (signer/hyperliquid) signs through it; the key never leaves the keyring. An
// address without a key is an *UnknownKeyError.
func (kr *Keyring) SignDigest(addr common.Address, digest []byte) ([]byte, error) {
	if len(digest) != 32 {
		return nil, fmt.Errorf("%w: digest is %d bytes, want 32", ErrIntent, len(digest))
	}
	k, err := kr.key(addr)
	if err != nil {
		return nil, err
	}
	return crypto.Sign(digest, k)
}

var _ keys.Backend = (*Keyring)(nil)

// Accounts lists the loaded keys as key-backend accounts (keys.Backend), sorted by address; an
// account's Address is its checksummed 0x address.
func (kr *Keyring) Accounts() []keys.Account {
	addrs := kr.Addresses()
	out := make([]keys.Account, len(addrs))
	for i, a := range addrs {
		out[i], _ = kr.Account(a.Hex())
	}
	return out
}

// Account returns the account of a 0x address (keys.Finder).
func (kr *Keyring) Account(addr string) (keys.Account, bool) {
	if !common.IsHexAddress(addr) {
		return keys.Account{}, false
	}
	k, err := kr.key(common.HexToAddress(addr))
	if err != nil {
		return keys.Account{}, false
	}
	a := crypto.PubkeyToAddress(k.PublicKey)
	return keys.Account{Address: a.Hex(), PublicKey: crypto.CompressPubkey(&k.PublicKey), Handle: a.Hex()}, true
}

// Sign signs a 32-byte digest with acct's key (keys.Backend): keys.Secp256k1Recoverable (65
// bytes, V 0 or 1) or keys.Secp256k1 (64 bytes R || S), low S under both.
func (kr *Keyring) Sign(ctx context.Context, acct keys.Account, scheme keys.Scheme, payload []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if scheme != keys.Secp256k1Recoverable && scheme != keys.Secp256k1 {
		return nil, fmt.Errorf("a secp256k1 keyring does not sign %s", scheme)
	}
	if !common.IsHexAddress(acct.Handle) {
		return nil, &UnknownKeyError{Address: acct.Handle}
	}
	sig, err := kr.SignDigest(common.HexToAddress(acct.Handle), payload)
	if err != nil {
		return nil, err
	}
	if scheme == keys.Secp256k1 {
		return sig[:64], nil
	}
	return sig, nil
}
