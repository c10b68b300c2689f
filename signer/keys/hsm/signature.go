package hsm

import (
	"bytes"
	"errors"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/ethereum/go-ethereum/crypto"
)

// recoverable turns a raw r || s ECDSA signature of digest into the 65-byte r || s || v form of
// go-ethereum's crypto.Sign: s normalised to the lower half of the group order (the same
// signature, which Ethereum and Cosmos require), v the recovery id (0 or 1) under which the
// signature recovers uncompressed, the signer's 65-byte public key.
func recoverable(raw, digest, uncompressed []byte) ([]byte, error) {
	var r, s secp256k1.ModNScalar
	if r.SetByteSlice(raw[:32]) || r.IsZero() || s.SetByteSlice(raw[32:]) || s.IsZero() {
		return nil, errors.New("the token returned a malformed ECDSA signature")
	}
	if s.IsOverHalfOrder() {
		s.Negate()
	}
	sig := make([]byte, 65)
	r.PutBytesUnchecked(sig[:32])
	s.PutBytesUnchecked(sig[32:64])
	for v := byte(0); v < 2; v++ {
		sig[64] = v
		if pub, err := crypto.Ecrecover(digest, sig); err == nil && bytes.Equal(pub, uncompressed) {
			return sig, nil
		}
	}
	return nil, errors.New("the token's signature does not recover the account's public key")
}
