package evmchain

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
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

// eigenSelectors are EigenLayer's EigenPod and EigenPodManager selectors as published (the
// EigenPod checkpoint calls' 4-byte selectors, and getPod/createPod of the EigenPodManager).
var eigenSelectors = []struct {
	contract, signature, selector string
}{
	{ContractEigenPod, "startCheckpoint(bool)", "88676cad"},
	{ContractEigenPod, "verifyCheckpointProofs((bytes32,bytes),(bytes32,bytes32,bytes)[])", "f074ba62"},
	{ContractEigenPodManager, "getPod(address)", "a38406a3"},
	{ContractEigenPodManager, "createPod()", "84d81062"},
}

// TestSelectorsAreEigenLayers: each selector, computed with go-ethereum's Keccak256 from its
// signature and read from the compiled ABI, is EigenLayer's; the checkpoint getters exist with
// EigenLayer's signatures.
func TestSelectorsAreEigenLayers(t *testing.T) {
	for _, s := range eigenSelectors {
		assert.Equal(t, s.selector, hex.EncodeToString(crypto.Keccak256([]byte(s.signature))[:4]), "keccak of %s", s.signature)
		a, err := Artifact(s.contract)
		require.NoError(t, err)
		m, err := a.ABI.MethodById(mustHex(t, s.selector))
		if assert.NoError(t, err, "%s has no method with selector %s", s.contract, s.selector) {
			assert.Equal(t, s.signature, m.Sig)
		}
	}
	pod, err := Artifact(ContractEigenPod)
	require.NoError(t, err)
	for _, sig := range []string{"currentCheckpoint()", "currentCheckpointTimestamp()", "lastCheckpointTimestamp()", "activeValidatorCount()"} {
		_, err := pod.ABI.MethodById(crypto.Keccak256([]byte(sig))[:4])
		assert.NoError(t, err, "EigenPod lacks %s", sig)
	}
	assert.Equal(t, "(bytes32,uint24,uint64,int64,uint64)", pod.ABI.Methods["currentCheckpoint"].Outputs[0].Type.String())
}

// verifyIndependently walks a proof with crypto/sha256 as the beacon chain's SSZ Merkle proofs
// are walked (sibling hashes bottom-up, the index's bits choosing the side).
func verifyIndependently(proof []byte, root, leaf [32]byte, index uint64) bool {
	node := leaf
	for i := 0; i+32 <= len(proof); i += 32 {
		var buf []byte
		if index%2 == 0 {
			buf = append(append(buf, node[:]...), proof[i:i+32]...)
		} else {
			buf = append(append(buf, proof[i:i+32]...), node[:]...)
		}
		node = sha256.Sum256(buf)
		index /= 2
	}
	return node == root && index == 0
}

// TestBeaconProofs: the model's proofs verify with crypto/sha256 alone, and a balance leaf holds
// the four balances little-endian.
func TestBeaconProofs(t *testing.T) {
	balances := []uint64{32e9, 32e9 + 1, 31e9, 5, 7}
	s, err := newBeaconState(balances)
	require.NoError(t, err)
	c := s.containerProof()
	assert.True(t, verifyIndependently(c.Proof, s.root(), c.BalanceContainerRoot, BalanceContainerIndex))
	assert.False(t, verifyIndependently(c.Proof, s.root(), c.BalanceContainerRoot, BalanceContainerIndex-1))
	for i, b := range balances {
		p := s.balanceProof(i, PubkeyHash(common.Address{1}, i))
		assert.True(t, verifyIndependently(p.Proof, c.BalanceContainerRoot, p.BalanceRoot, uint64(i/4)), "validator %d", i)
		assert.Equal(t, b, binary.LittleEndian.Uint64(p.BalanceRoot[8*(i%4):]))
	}
}

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
