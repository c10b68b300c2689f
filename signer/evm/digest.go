package evm

import (
	"crypto/ecdsa"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
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
