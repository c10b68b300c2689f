package celestiachain

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/signer/cosmos"
)

// testKey is the private key of the keyring testKeyring writes.
var testKey = func() *secp256k1.PrivateKey {
	b := make([]byte, 32)
	b[31] = 7
	return secp256k1.PrivKeyFromBytes(b)
}()

// testKeyring writes testKey to a keystore v3 file and loads it as stakeflow's worker does.
func testKeyring(t *testing.T) (*cosmos.Keyring, string) {
	t.Helper()
	ek, err := crypto.ToECDSA(testKey.Serialize())
	require.NoError(t, err)
	js, err := keystore.EncryptKey(&keystore.Key{Id: uuid.New(), Address: crypto.PubkeyToAddress(ek.PublicKey), PrivateKey: ek},
		"pw", keystore.LightScryptN, keystore.LightScryptP)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "key.json"), js, 0o600))
	pass := filepath.Join(t.TempDir(), "pass")
	require.NoError(t, os.WriteFile(pass, []byte("pw"), 0o600))
	kr, err := cosmos.LoadKeyring(dir, pass)
	require.NoError(t, err)
	addrs := kr.Addresses()
	require.Len(t, addrs, 1)
	return kr, addrs[0]
}

func testSign(t *testing.T, doc []byte) []byte {
	t.Helper()
	return cosmos.SignBytes(testKey, doc)
}
