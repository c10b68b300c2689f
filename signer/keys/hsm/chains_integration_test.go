//go:build integration && cgo

package hsm_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/params"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/signer/evm"
	"github.com/stakeflow/stakeflow/signer/keys/hsm"
	"github.com/stakeflow/stakeflow/signer/keys/hsm/hsmtest"
)

// startCheckpoint builds an unsigned EigenPod startCheckpoint(false) transaction (selector
// 0x88676cad, DESIGN.md "EigenLayer") and the intent it answers.
func startCheckpoint(t *testing.T, chainID uint64, owner common.Address, nonce uint64) (evm.StartIntent, []byte, *types.Transaction) {
	t.Helper()
	pod := common.HexToAddress("0x00000000000000000000000000000000000e1901")
	unsigned := types.NewTx(&types.DynamicFeeTx{ChainID: new(big.Int).SetUint64(chainID), Nonce: nonce, GasTipCap: big.NewInt(params.GWei),
		GasFeeCap: big.NewInt(2 * params.GWei), Gas: 100_000, To: &pod, Value: new(big.Int),
		Data: append(common.FromHex("0x88676cad"), make([]byte, 32)...)})
	raw, err := unsigned.MarshalBinary()
	require.NoError(t, err)
	in := evm.StartIntent{ChainID: chainID, Owner: owner, Pod: pod,
		TxChoices: evm.TxChoices{Nonce: nonce, GasLimit: 100_000, MaxFeePerGas: big.NewInt(2 * params.GWei), MaxPriorityFeePerGas: big.NewInt(params.GWei)}}
	return in, raw, unsigned
}

// TestEVMTransactionSignedInTheTokenVerifies: signer/evm's checkpoint signer built over the token's
// backend signs a verified transaction; go-ethereum's types.Sender recovers the token key's address.
func TestEVMTransactionSignedInTheTokenVerifies(t *testing.T) {
	const chainID = 1337
	tok := hsmtest.Open(t, hsmtest.New(t))
	_, err := tok.Generate(hsm.Secp256k1, "eigen-owner")
	require.NoError(t, err)
	b, err := tok.Backend(hsm.Secp256k1, hsm.EVMAddress, []string{"eigen-owner"})
	require.NoError(t, err)
	owner := common.HexToAddress(b.Accounts()[0].Address)
	s, err := evm.NewCheckpointSignerBackend(b, evm.CheckpointPolicy{ChainID: chainID})
	require.NoError(t, err)
	for nonce := range uint64(8) {
		in, raw, _ := startCheckpoint(t, chainID, owner, nonce)
		signed, err := s.SignStart(context.Background(), in, raw)
		require.NoError(t, err)
		var tx types.Transaction
		require.NoError(t, tx.UnmarshalBinary(common.FromHex(signed.Transaction)))
		from, err := types.Sender(types.LatestSignerForChainID(big.NewInt(chainID)), &tx)
		require.NoError(t, err)
		assert.Equal(t, owner, from)
		assert.Equal(t, nonce, tx.Nonce())
	}
	assert.Equal(t, uint64(8), b.Signs())
}

// TestTokenNeverCalledForATransactionThatFailsVerification: a served transaction that differs from
// the intent (another nonce) is refused by the verifier in front; the token makes no C_Sign.
func TestTokenNeverCalledForATransactionThatFailsVerification(t *testing.T) {
	const chainID = 1337
	tok := hsmtest.Open(t, hsmtest.New(t))
	_, err := tok.Generate(hsm.Secp256k1, "eigen-owner")
	require.NoError(t, err)
	b, err := tok.Backend(hsm.Secp256k1, hsm.EVMAddress, []string{"eigen-owner"})
	require.NoError(t, err)
	owner := common.HexToAddress(b.Accounts()[0].Address)
	s, err := evm.NewCheckpointSignerBackend(b, evm.CheckpointPolicy{ChainID: chainID})
	require.NoError(t, err)
	in, _, _ := startCheckpoint(t, chainID, owner, 3)
	_, served, _ := startCheckpoint(t, chainID, owner, 4)
	signed, err := s.SignStart(context.Background(), in, served)
	require.ErrorIs(t, err, evm.ErrVerification)
	assert.Nil(t, signed)
	assert.Zero(t, b.Signs(), "the token was asked to sign")
}
