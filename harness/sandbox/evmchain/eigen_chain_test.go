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

// TestCheckpointOnChain runs two checkpoints of a 200-validator pod on a real geth --dev chain,
// the first before the Pectra fork (the manager's pectraForkTimestamp an hour ahead: Deneb's
// state tree of height 5), the second after it (the fork moved to the past: height 6):
// startCheckpoint by the owner, three batches (80, 80, 40) that the contract verifies against the
// posted root with the fork's geometry, the balance credited once; a batch proving validators
// already proven is skipped, not reverted (EigenLayer's EigenPod), and changes nothing.
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
	head, err := e.d.client.HeaderByNumber(ctx, nil)
	require.NoError(t, err)
	fork, err := e.PectraForkTimestamp(ctx)
	require.NoError(t, err)
	assert.LessOrEqual(t, fork, head.Time, "deployed after the fork, as mainnet today")
	require.NoError(t, e.SetPectraForkTimestamp(ctx, head.Time+3600))

	pod, err := e.CreatePod(ctx, owner, 200, 32e9)
	require.NoError(t, err)
	before, err := e.ReadPod(ctx, pod)
	require.NoError(t, err)
	assert.EqualValues(t, 200, before.ActiveValidators)
	shares := new(big.Int).Mul(big.NewInt(200*32e9), big.NewInt(1e9))
	assert.Equal(t, shares.String(), before.Shares.String())

	start, err := e.Pack(ContractEigenPod, "startCheckpoint", false)
	require.NoError(t, err)
	checkpoint := func(pectra bool, postedIndex int) {
		t.Helper()
		require.NoError(t, e.Reward(ctx, pod, 1_000_000)) // 0.001 ETH each
		_, err = e.d.Send(ctx, ownerKey, pod, start)
		require.NoError(t, err)
		st, err := e.ReadPod(ctx, pod)
		require.NoError(t, err)
		require.NotZero(t, st.CurrentTimestamp)
		assert.EqualValues(t, 200, st.ProofsRemaining)
		e.mu.Lock()
		assert.Equal(t, e.pods[pod].posted[postedIndex], st.Root, "the checkpoint's root is the last one posted")
		assert.Equal(t, pectra, e.pods[pod].states[st.Root].pectra)
		e.mu.Unlock()

		// A second start while one is active reverts.
		_, err = e.d.SignTx(ctx, ownerKey, pod, start)
		require.ErrorContains(t, err, "must finish previous checkpoint")

		first, err := e.proofsCall(ctx, pod, st.Root, st.CurrentTimestamp)
		require.NoError(t, err)
		rcpt, err := e.ProveNextBatch(ctx, pod)
		require.NoError(t, err)
		// 80 proofs of 39 siblings: about 110 KB of calldata, priced at EIP-7623's floor on a
		// Prague chain; with the worker's 25% margin it fits the signer's default 6,000,000.
		t.Logf("a batch of 80 proofs (pectra %v) used %d gas", pectra, rcpt.GasUsed)
		assert.LessOrEqual(t, rcpt.GasUsed*125/100, uint64(6_000_000))
		st, err = e.ReadPod(ctx, pod)
		require.NoError(t, err)
		assert.EqualValues(t, 120, st.ProofsRemaining)
		// The same batch again: every proof skipped, the transaction succeeds, nothing changes.
		rcpt, err = e.d.Send(ctx, ownerKey, pod, first)
		require.NoError(t, err)
		assert.Equal(t, types.ReceiptStatusSuccessful, rcpt.Status)
		again, err := e.ReadPod(ctx, pod)
		require.NoError(t, err)
		assert.Equal(t, st, again, "a batch of proven validators changes nothing")

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
		shares.Add(shares, new(big.Int).Mul(big.NewInt(200*1_000_000), big.NewInt(1e9)))
		assert.Equal(t, shares.String(), st.Shares.String(), "credited once")
	}
	checkpoint(false, 1)

	// The fork moved to the past: the next checkpoint is proven with Pectra's geometry.
	head, err = e.d.client.HeaderByNumber(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, e.SetPectraForkTimestamp(ctx, head.Time))
	checkpoint(true, 2)
}

// TestCheckpointGeometryMismatchReverts: a checkpoint whose posted state has the other fork's
// shape than the pod expects (the fork moved after the state was posted) cannot be proven: the
// pod checks the container proof's length and path for its fork.
func TestCheckpointGeometryMismatchReverts(t *testing.T) {
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
	pod, err := e.CreatePod(ctx, owner, 3, 32e9) // posted in Pectra's shape
	require.NoError(t, err)
	head, err := e.d.client.HeaderByNumber(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, e.SetPectraForkTimestamp(ctx, head.Time+3600)) // the pod now expects Deneb
	start, err := e.Pack(ContractEigenPod, "startCheckpoint", false)
	require.NoError(t, err)
	_, err = e.d.Send(ctx, ownerKey, pod, start)
	require.NoError(t, err)
	st, err := e.ReadPod(ctx, pod)
	require.NoError(t, err)
	data, err := e.proofsCall(ctx, pod, st.Root, st.CurrentTimestamp)
	require.NoError(t, err)
	_, err = e.d.SignTx(ctx, ownerKey, pod, data)
	require.ErrorContains(t, err, "invalid balance container proof length")
	require.NoError(t, e.SetPectraForkTimestamp(ctx, 0))
	_, err = e.d.SignTx(ctx, ownerKey, pod, data)
	require.ErrorContains(t, err, "fork timestamp zero")
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
