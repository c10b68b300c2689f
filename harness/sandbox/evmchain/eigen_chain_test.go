//go:build integration

package evmchain

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckpointOnChain runs a checkpoint of a 200-validator pod on a real geth --dev chain:
// startCheckpoint by the owner, three batches (80, 80, 40) that the contract verifies against the
// posted root, the balance credited once; a batch proving proven validators reverts with its own
// reason.
func TestCheckpointOnChain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	node, ownerKey := startChain(t, ctx)
	owner := crypto.PubkeyToAddress(ownerKey.PublicKey)
	admin, err := crypto.GenerateKey()
	require.NoError(t, err)
	_, err = node.Fund(ctx, crypto.PubkeyToAddress(admin.PublicKey), new(big.Int).Mul(big.NewInt(100), POL))
	require.NoError(t, err)
	e, err := DeployEigenLayer(ctx, node.RPCURL(), admin)
	require.NoError(t, err)
	defer e.Close()

	pod, err := e.CreatePod(ctx, owner, 200, 32e9)
	require.NoError(t, err)
	before, err := e.ReadPod(ctx, pod)
	require.NoError(t, err)
	assert.EqualValues(t, 200, before.ActiveValidators)
	want := new(big.Int).Mul(big.NewInt(200*32e9), big.NewInt(1e9))
	assert.Equal(t, want.String(), before.Shares.String())
	require.NoError(t, e.Reward(ctx, pod, 1_000_000)) // 0.001 ETH each

	start, err := e.Pack(ContractEigenPod, "startCheckpoint", false)
	require.NoError(t, err)
	_, err = e.d.Send(ctx, ownerKey, pod, start)
	require.NoError(t, err)
	st, err := e.ReadPod(ctx, pod)
	require.NoError(t, err)
	require.NotZero(t, st.CurrentTimestamp)
	assert.EqualValues(t, 200, st.ProofsRemaining)
	e.mu.Lock()
	assert.Equal(t, e.pods[pod].posted[1], st.Root, "the checkpoint's root is the last one posted")
	e.mu.Unlock()

	// A second start while one is active reverts.
	_, err = e.d.SignTx(ctx, ownerKey, pod, start)
	require.ErrorContains(t, err, "must finish previous checkpoint")

	first, err := e.proofsCall(ctx, pod, st.Root, st.CurrentTimestamp)
	require.NoError(t, err)
	_, err = e.ProveNextBatch(ctx, pod)
	require.NoError(t, err)
	st, err = e.ReadPod(ctx, pod)
	require.NoError(t, err)
	assert.EqualValues(t, 120, st.ProofsRemaining)
	_, err = e.d.SignTx(ctx, ownerKey, pod, first)
	require.ErrorContains(t, err, AlreadyCheckpointed)

	for _, left := range []uint64{40, 0} {
		rcpt, err := e.ProveNextBatch(ctx, pod)
		require.NoError(t, err)
		assert.Equal(t, types.ReceiptStatusSuccessful, rcpt.Status)
		st, err = e.ReadPod(ctx, pod)
		require.NoError(t, err)
		assert.Equal(t, left, st.ProofsRemaining)
	}
	assert.Zero(t, st.CurrentTimestamp, "the checkpoint completed")
	assert.NotZero(t, st.LastTimestamp)
	credited := new(big.Int).Mul(big.NewInt(200*1_000_000), big.NewInt(1e9))
	assert.Equal(t, new(big.Int).Add(want, credited).String(), st.Shares.String(), "credited once")
}

// TestHostileProofsTransactions: each hostile mode changes what it says and nothing else.
func TestHostileProofsTransactions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	node, ownerKey := startChain(t, ctx)
	owner := crypto.PubkeyToAddress(ownerKey.PublicKey)
	admin, err := crypto.GenerateKey()
	require.NoError(t, err)
	_, err = node.Fund(ctx, crypto.PubkeyToAddress(admin.PublicKey), new(big.Int).Mul(big.NewInt(100), POL))
	require.NoError(t, err)
	e, err := DeployEigenLayer(ctx, node.RPCURL(), admin)
	require.NoError(t, err)
	defer e.Close()
	other, err := e.CreatePod(ctx, common.Address{0xaa}, 3, 32e9)
	require.NoError(t, err)
	pod, err := e.CreatePod(ctx, owner, 5, 32e9)
	require.NoError(t, err)
	require.NoError(t, e.Reward(ctx, pod, 10))
	start, err := e.Pack(ContractEigenPod, "startCheckpoint", false)
	require.NoError(t, err)
	_, err = e.d.Send(ctx, ownerKey, pod, start)
	require.NoError(t, err)

	honest, err := e.ProofsTransaction(ctx, owner)
	require.NoError(t, err)
	assert.Equal(t, pod, *honest.To())
	method := e.d.abis[ContractEigenPod].Methods["verifyCheckpointProofs"]
	decode := func(tx *types.Transaction) (BalanceContainerProof, []BalanceProof) {
		args, err := method.Inputs.Unpack(tx.Data()[4:])
		require.NoError(t, err)
		return *abi.ConvertType(args[0], new(BalanceContainerProof)).(*BalanceContainerProof),
			*abi.ConvertType(args[1], new([]BalanceProof)).(*[]BalanceProof)
	}
	hc, hp := decode(honest)
	assert.Len(t, hp, 5)
	for _, mode := range EigenHostileModes {
		e.SetHostile(pod, mode)
		tx, err := e.ProofsTransaction(ctx, owner)
		require.NoError(t, err, mode)
		c, p := decode(tx)
		switch mode {
		case EigenOtherPod:
			assert.Equal(t, other, *tx.To())
		case EigenOtherContract:
			assert.Equal(t, e.Manager, *tx.To())
		case EigenWithValue:
			assert.EqualValues(t, 1_000_000_000, tx.Value().Int64())
		case EigenStaleRoot:
			assert.NotEqual(t, hc.BalanceContainerRoot, c.BalanceContainerRoot)
		case EigenWouldRevert:
			assert.NotEqual(t, hp[0].Proof, p[0].Proof)
			assert.Equal(t, hp[1:], p[1:])
		case EigenTooMany:
			assert.Len(t, p, 6)
		}
	}
}
