//go:build integration && cgo

package hsm_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"math/big"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	secpecdsa "github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/signer/cosmos"
	"github.com/stakeflow/stakeflow/signer/cosmos/tx"
	"github.com/stakeflow/stakeflow/signer/evm"
	"github.com/stakeflow/stakeflow/signer/hyperliquid"
	"github.com/stakeflow/stakeflow/signer/keys/hsm"
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
	_, b := tokenWithKey(t, hsm.Secp256k1, "eigen-owner", hsm.EVMAddress)
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
	_, b := tokenWithKey(t, hsm.Secp256k1, "eigen-owner", hsm.EVMAddress)
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

// TestCelestiaTransactionSignedInTheTokenVerifies: signer/cosmos's signer built over the token's
// backend signs a verified delegation; the signature the TxRaw carries verifies over the
// SIGN_MODE_DIRECT sign doc with the token key's public key (decred's secp256k1).
func TestCelestiaTransactionSignedInTheTokenVerifies(t *testing.T) {
	// A Celestia validator operator address (internal/starter tests, celValidator).
	const validator = "celestiavaloper1u3drplq4vr90nnwz0tvnrhetc82heq8halazeh"
	_, b := tokenWithKey(t, hsm.Secp256k1, "tia-delegator", hsm.CosmosAddress(cosmos.AccountPrefix))
	acct := b.Accounts()[0]
	s := cosmos.NewSignerBackend(b, cosmos.Policy{Validators: []string{validator}, MaxFee: 10_000, MaxGas: 400_000, Memo: "stakeflow"})
	in := cosmos.Intent{Operation: cosmos.OpDelegate, Network: cosmos.NetworkMocha, Delegator: acct.Address, Validator: validator,
		Amount: "1000000", TimeoutHeight: 1000}
	account := cosmos.Account{AccountNumber: 7, Sequence: 3}
	u, err := cosmos.Build(in, acct.PublicKey, account, cosmos.FeeParams{GasLimit: 200_000, Fee: 400}, "stakeflow")
	require.NoError(t, err)
	signed, err := s.Sign(context.Background(), u, in, account)
	require.NoError(t, err)
	raw, err := base64.StdEncoding.DecodeString(signed.TxBase64)
	require.NoError(t, err)
	txRaw, err := tx.UnmarshalTxRaw(raw)
	require.NoError(t, err)
	require.Len(t, txRaw.Signatures, 1)
	sig := txRaw.Signatures[0]
	require.Len(t, sig, 64)
	chainID, err := cosmos.ChainID(cosmos.NetworkMocha)
	require.NoError(t, err)
	assert.Equal(t, "mocha-4", chainID)
	sum := sha256.Sum256(tx.TxRaw{BodyBytes: u.BodyBytes, AuthInfoBytes: u.AuthInfoBytes}.SignDoc(chainID, 7).Marshal())
	pk, err := secp256k1.ParsePubKey(acct.PublicKey)
	require.NoError(t, err)
	var r, sc secp256k1.ModNScalar
	require.False(t, r.SetByteSlice(sig[:32]))
	require.False(t, sc.SetByteSlice(sig[32:]))
	assert.False(t, sc.IsOverHalfOrder())
	assert.True(t, secpecdsa.NewSignature(&r, &sc).Verify(sum[:], pk))
	assert.Equal(t, uint64(1), b.Signs())
}

// TestHyperliquidActionSignedInTheTokenRecoversTheDelegator: signer/hyperliquid's signer built
// over the token's backend signs a verified cWithdraw; its {r, s, v} over the EIP-712 digest
// recovers the token key's address with go-ethereum, with low S and v 27 or 28.
func TestHyperliquidActionSignedInTheTokenRecoversTheDelegator(t *testing.T) {
	_, b := tokenWithKey(t, hsm.Secp256k1, "hl-delegator", hsm.EVMAddress)
	delegator := common.HexToAddress(b.Accounts()[0].Address)
	s := hyperliquid.NewBackend(b, hyperliquid.Policy{})
	nonce := uint64(time.Now().UnixMilli())
	u := &hyperliquid.Unsigned{Action: hyperliquid.Action{Type: hyperliquid.TypeCWithdraw, SignatureChainID: hyperliquid.DefaultSignatureChainID,
		HyperliquidChain: "Testnet", Wei: 150_000_000, Nonce: nonce}}
	signed, err := s.Sign(context.Background(), hyperliquid.Intent{Network: "testnet", Delegator: delegator, Amount: "1.5"}, u)
	require.NoError(t, err)
	sig := append(append(common.FromHex(signed.Signature.R), common.FromHex(signed.Signature.S)...), signed.Signature.V-27)
	require.Len(t, sig, 65)
	assert.LessOrEqual(t, new(big.Int).SetBytes(sig[32:64]).Cmp(halfN), 0, "high S")
	rec, err := crypto.SigToPub(common.FromHex(signed.Digest), sig)
	require.NoError(t, err)
	assert.Equal(t, delegator, crypto.PubkeyToAddress(*rec))
	assert.Equal(t, uint64(1), b.Signs())
}
