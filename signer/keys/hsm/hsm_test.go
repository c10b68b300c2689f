package hsm

import (
	"crypto/ed25519"
	"encoding/base64"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/mr-tron/base58"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// secpN is the secp256k1 group order (SEC 2, 2.4.1).
var secpN, _ = new(big.Int).SetString("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141", 16)

// TestRecoverableNormalisesToLowSAndFindsV: a token may return either of the two valid S values;
// go-ethereum's crypto.Sign (low S, V) is the form wanted. Given the high-S twin of go-ethereum's
// signature, or the signature itself, recoverable returns exactly go-ethereum's 65 bytes.
func TestRecoverableNormalisesToLowSAndFindsV(t *testing.T) {
	k, err := crypto.GenerateKey()
	require.NoError(t, err)
	uncompressed := crypto.FromECDSAPub(&k.PublicKey)
	seenV := map[byte]bool{}
	for i := range 64 {
		digest := crypto.Keccak256([]byte{byte(i)})
		want, err := crypto.Sign(digest, k)
		require.NoError(t, err)
		seenV[want[64]] = true
		high := new(big.Int).Sub(secpN, new(big.Int).SetBytes(want[32:64]))
		raw := append(append([]byte(nil), want[:32]...), high.FillBytes(make([]byte, 32))...)
		got, err := recoverable(raw, digest, uncompressed)
		require.NoError(t, err)
		assert.Equal(t, want, got, "from high S")
		got, err = recoverable(want[:64], digest, uncompressed)
		require.NoError(t, err)
		assert.Equal(t, want, got, "from low S")
	}
	assert.Len(t, seenV, 2, "both recovery ids exercised")
}

// TestRecoverableRefusesAnotherKeysSignature: a signature that does not recover the account's key
// (the token signed with another key) is refused, and so is a malformed one.
func TestRecoverableRefusesAnotherKeysSignature(t *testing.T) {
	k, err := crypto.GenerateKey()
	require.NoError(t, err)
	other, err := crypto.GenerateKey()
	require.NoError(t, err)
	digest := crypto.Keccak256([]byte("m"))
	sig, err := crypto.Sign(digest, other)
	require.NoError(t, err)
	_, err = recoverable(sig[:64], digest, crypto.FromECDSAPub(&k.PublicKey))
	assert.ErrorContains(t, err, "does not recover")
	_, err = recoverable(make([]byte, 64), digest, crypto.FromECDSAPub(&k.PublicKey))
	assert.ErrorContains(t, err, "malformed")
}

func TestReadPIN(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "pin")
	require.NoError(t, os.WriteFile(f, []byte("123456\n"), 0o600))
	pin, err := ReadPIN(f)
	require.NoError(t, err)
	assert.Equal(t, []byte("123456"), pin)
	require.NoError(t, os.Chmod(f, 0o400))
	_, err = ReadPIN(f)
	require.NoError(t, err)
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		require.NoError(t, os.Chmod(f, mode))
		_, err = ReadPIN(f)
		require.ErrorIs(t, err, ErrConfig, "mode %04o", mode)
		assert.Contains(t, err.Error(), f)
		assert.Contains(t, err.Error(), "0"+big.NewInt(int64(mode)).Text(8))
		assert.NotContains(t, err.Error(), "123456")
	}
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, []byte("\n"), 0o600))
	_, err = ReadPIN(empty)
	require.ErrorIs(t, err, ErrConfig)
	_, err = ReadPIN(dir)
	require.ErrorIs(t, err, ErrConfig)
}

// TestAddresses: the chain addresses of public keys, against values made by other code.
func TestAddresses(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	sol, err := SolanaAddress(pub)
	require.NoError(t, err)
	assert.Equal(t, base58.Encode(pub), sol)
	_, err = SolanaAddress(pub[:31])
	assert.Error(t, err)

	k, err := crypto.GenerateKey()
	require.NoError(t, err)
	evm, err := EVMAddress(crypto.CompressPubkey(&k.PublicKey))
	require.NoError(t, err)
	assert.Equal(t, crypto.PubkeyToAddress(k.PublicKey).Hex(), evm)

	// The cosmjs faucet account (cosmjs packages/proto-signing/src/testutils.spec.ts, as in
	// signer/cosmos's tests): public key A08EGB7ro1ORuFhjOnZcSgwYlpe0DSFjVNUIkNNQxwKQ (base64) is
	// cosmos1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmmk8rs6; under the celestia prefix
	// celestia1pkptre7fdkl6gfrzlesjjvhxhlc3r4gm2ukn2h (signer/cosmos, internal/starter tests).
	cpub, err := base64.StdEncoding.DecodeString("A08EGB7ro1ORuFhjOnZcSgwYlpe0DSFjVNUIkNNQxwKQ")
	require.NoError(t, err)
	tia, err := CosmosAddress("celestia")(cpub)
	require.NoError(t, err)
	assert.Equal(t, "celestia1pkptre7fdkl6gfrzlesjjvhxhlc3r4gm2ukn2h", tia)
	cosmos, err := CosmosAddress("cosmos")(cpub)
	require.NoError(t, err)
	assert.Equal(t, "cosmos1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmmk8rs6", cosmos)
}

func TestParseRef(t *testing.T) {
	label, id, err := parseRef("sol-1")
	require.NoError(t, err)
	assert.Equal(t, "sol-1", label)
	assert.Nil(t, id)
	label, id, err = parseRef("id:00ff")
	require.NoError(t, err)
	assert.Empty(t, label)
	assert.Equal(t, []byte{0, 0xff}, id)
	for _, bad := range []string{"", "id:", "id:zz"} {
		_, _, err = parseRef(bad)
		assert.ErrorIs(t, err, ErrConfig, bad)
	}
}
