package cosmos

import (
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/signer/cosmos/tx"
)

// The cosmjs faucet account (cosmjs packages/proto-signing/src/testutils.spec.ts): its public
// mnemonic, the public key and address cosmjs derives on m/44'/118'/0'/0/0, and the
// SIGN_MODE_DIRECT sign bytes of cosmjs's sequence-0 and sequence-1 test vectors with the
// signatures their signedTxBytes carry (chain simd-testing, account number 1).
const (
	faucetMnemonic  = "economy stock theory fatal elder harbor betray wasp final emotion task crumble siren bottom lizard educate guess current outdoor pair theory focus wife stone"
	faucetPubKey    = "A08EGB7ro1ORuFhjOnZcSgwYlpe0DSFjVNUIkNNQxwKQ"
	faucetCosmos    = "cosmos1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmmk8rs6"
	cosmjsSignBytes = "0a97010a90010a1c2f636f736d6f732e62616e6b2e763162657461312e4d736753656e6412700a2d636f736d6f7331706b707472653766646b6c366766727a6c65736a6a766878686c63337234676d6d6b38727336122d636f736d6f7331717970717870713971637273737a673270767871367273307a716733797963356c7a763778751a100a0575636f736d12073132333435363712001800126b0a500a460a1f2f636f736d6f732e63727970746f2e736563703235366b312e5075624b657912230a21034f04181eeba35391b858633a765c4a0c189697b40d216354d50890d350c7029012040a020801180012170a0d0a0575636f736d12043230303010c09a0c1a0022001a0c73696d642d74657374696e672001"
	cosmjsSignature = "d1bb55b0f3e5f9c260a20c8ccf2cb44f19bafccba84c7fb6e2b77fac401b15c9228c33236a701dd7a7c4a481aa5dedb902c982fe565504c4f4e7f39ccfcd73d6"
	cosmjsSignedTx1 = "0a97010a90010a1c2f636f736d6f732e62616e6b2e763162657461312e4d736753656e6412700a2d636f736d6f7331706b707472653766646b6c366766727a6c65736a6a766878686c63337234676d6d6b38727336122d636f736d6f7331717970717870713971637273737a673270767871367273307a716733797963356c7a763778751a100a0575636f736d12073132333435363712001800126b0a500a460a1f2f636f736d6f732e63727970746f2e736563703235366b312e5075624b657912230a21034f04181eeba35391b858633a765c4a0c189697b40d216354d50890d350c7029012040a020801180112170a0d0a0575636f736d12043230303010c09a0c1a0022001a40d6d876ec9c01d03b025443822b1385e29ed559341ec71853ac310219b4bcb4112bf24265a19d805f0cbb1cb39f4ac4fe75235445070aa14845733117a746c248"
)

// faucetCelestia is the faucet's account bytes under the celestia prefix.
func faucetCelestia(t *testing.T) string {
	t.Helper()
	acc, err := tx.DecodeAddress("cosmos", faucetCosmos)
	require.NoError(t, err)
	a, err := tx.EncodeAddress(AccountPrefix, acc)
	require.NoError(t, err)
	return a
}

func TestMnemonicKeyAndSignatureMatchCosmjs(t *testing.T) {
	k, err := keyFromMnemonic(faucetMnemonic)
	require.NoError(t, err)
	pub := k.PubKey().SerializeCompressed()
	assert.Equal(t, faucetPubKey, base64.StdEncoding.EncodeToString(pub))
	addr, err := tx.Address("cosmos", pub)
	require.NoError(t, err)
	assert.Equal(t, faucetCosmos, addr)

	sb, err := hex.DecodeString(cosmjsSignBytes)
	require.NoError(t, err)
	sig := SignBytes(k, sb)
	assert.Equal(t, cosmjsSignature, hex.EncodeToString(sig))
	assert.True(t, VerifySignature(pub, sb, sig))

	// The same signature with S replaced by N-S verifies mathematically but is refused.
	var s secp256k1.ModNScalar
	s.SetByteSlice(sig[32:])
	s.Negate()
	sb32 := s.Bytes()
	high := append(append([]byte{}, sig[:32]...), sb32[:]...)
	assert.False(t, VerifySignature(pub, sb, high))
	sb[len(sb)-1] ^= 1
	assert.False(t, VerifySignature(pub, sb, sig))

	// Sequence 1: sign the SignDoc of the published signed transaction, get its signature.
	signed1, err := hex.DecodeString(cosmjsSignedTx1)
	require.NoError(t, err)
	raw, err := tx.UnmarshalTxRaw(signed1)
	require.NoError(t, err)
	assert.Equal(t, hex.EncodeToString(raw.Signatures[0]), hex.EncodeToString(SignBytes(k, raw.SignDoc("simd-testing", 1).Marshal())))

	_, err = keyFromMnemonic("economy stock theory fatal elder harbor betray wasp final emotion task crumble siren bottom lizard educate guess current outdoor pair theory focus wife wife")
	require.ErrorIs(t, err, ErrKey)
	assert.NotContains(t, err.Error(), "economy")
}

func TestImportMnemonicThenLoad(t *testing.T) {
	scryptN = keystore.LightScryptN
	dir := t.TempDir()
	addr, path, err := ImportMnemonic(faucetMnemonic, "pass phrase", dir)
	require.NoError(t, err)
	assert.Equal(t, faucetCelestia(t), addr)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "economy")

	_, _, err = ImportMnemonic(faucetMnemonic, "pass phrase", dir)
	require.Error(t, err, "an existing file is not overwritten")

	pass := filepath.Join(t.TempDir(), "pass")
	require.NoError(t, os.WriteFile(pass, []byte("pass phrase\n"), 0o600))
	kr, err := LoadKeyring(dir, pass)
	require.NoError(t, err)
	assert.Equal(t, []string{addr}, kr.Addresses())
	pub, err := NewSigner(kr, Policy{}).PubKey(addr)
	require.NoError(t, err)
	assert.Equal(t, faucetPubKey, base64.StdEncoding.EncodeToString(pub))
	assert.NotContains(t, kr.String(), "economy")
}
