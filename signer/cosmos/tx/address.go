package tx

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/btcutil/bech32"
	//lint:ignore SA1019 Cosmos account addresses are defined with RIPEMD-160.
	"golang.org/x/crypto/ripemd160"
)

// ErrAddress is wrapped by every address error.
var ErrAddress = errors.New("cosmos address")

// AccountBytes returns the 20 account bytes of a compressed secp256k1 public key:
// RIPEMD-160(SHA-256(key)).
func AccountBytes(compressedPubKey []byte) ([]byte, error) {
	if len(compressedPubKey) != 33 || (compressedPubKey[0] != 2 && compressedPubKey[0] != 3) {
		return nil, fmt.Errorf("%w: want a 33-byte compressed secp256k1 public key", ErrAddress)
	}
	s := sha256.Sum256(compressedPubKey)
	h := ripemd160.New()
	h.Write(s[:])
	return h.Sum(nil), nil
}

// Address returns the bech32 address with prefix hrp of a compressed secp256k1 public key.
func Address(hrp string, compressedPubKey []byte) (string, error) {
	acc, err := AccountBytes(compressedPubKey)
	if err != nil {
		return "", err
	}
	return EncodeAddress(hrp, acc)
}

// EncodeAddress encodes account bytes as a bech32 address with prefix hrp.
func EncodeAddress(hrp string, acc []byte) (string, error) {
	conv, err := bech32.ConvertBits(acc, 8, 5, true)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrAddress, err)
	}
	s, err := bech32.Encode(hrp, conv)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrAddress, err)
	}
	return s, nil
}

// DecodeAddress checks that addr is a valid lower-case bech32 address with prefix hrp holding 20
// bytes (an account or validator operator address), and returns those bytes.
func DecodeAddress(hrp, addr string) ([]byte, error) {
	got, data, err := bech32.Decode(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not valid bech32: %w", ErrAddress, addr, err)
	}
	if got != hrp {
		return nil, fmt.Errorf("%w: %q has prefix %q, want %q", ErrAddress, addr, got, hrp)
	}
	if hasUpper(addr) {
		return nil, fmt.Errorf("%w: %q: want the lower-case form", ErrAddress, addr)
	}
	acc, err := bech32.ConvertBits(data, 5, 8, false)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrAddress, addr, err)
	}
	if len(acc) != 20 {
		return nil, fmt.Errorf("%w: %q holds %d bytes, want 20", ErrAddress, addr, len(acc))
	}
	return acc, nil
}

func hasUpper(s string) bool {
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			return true
		}
	}
	return false
}
