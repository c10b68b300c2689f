package eigenlayer

import (
	"context"
	"crypto/sha256"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rlp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/apiclient"
	evmchain "github.com/stakeflow/stakeflow/chain/evm"
	"github.com/stakeflow/stakeflow/internal/testutil/evmfake"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

var (
	owner   = common.HexToAddress("0x1111111111111111111111111111111111111111")
	pod     = common.HexToAddress("0x2222222222222222222222222222222222222222")
	other   = common.HexToAddress("0x3333333333333333333333333333333333333333")
	manager = common.HexToAddress("0x4444444444444444444444444444444444444444")
	startTx = common.HexToHash("0x5555555555555555555555555555555555555555555555555555555555555555")
)

// podChain is the EVM fake the tests share, answering the pod's getters: a checkpoint started at
// ts (0: none active) with root and 5 proofs remaining, of 5 active validators, and the pod's
// activation among the logs; gas estimates of 1,000,000 at 1 gwei fees.
func podChain(ts uint64, root common.Hash) *evmfake.Chain {
	return &evmfake.Chain{
		Head:     100,
		FeeQuote: &evmchain.Fees{BaseFee: big.NewInt(params.GWei), Tip: big.NewInt(params.GWei)},
		Gas:      1_000_000,
		Calls: map[string][]any{
			"getPod":                     {pod},
			"currentCheckpointTimestamp": {ts},
			"lastCheckpointTimestamp":    {uint64(0)},
			"activeValidatorCount":       {big.NewInt(5)},
			"currentCheckpoint":          {checkpoint{BeaconBlockRoot: root, ProofsRemaining: big.NewInt(5)}},
		},
		Events: []types.Log{{Address: pod, TxHash: startTx}},
	}
}

// noCheckpoint makes c's pod show no active checkpoint.
func noCheckpoint(c *evmfake.Chain) { c.Calls["currentCheckpointTimestamp"] = []any{uint64(0)} }

var _ Chain = (*evmfake.Chain)(nil)

type fakeService struct {
	tx apiclient.SerializedEVMTransaction
}

func (s fakeService) EigenLayerVerifyCheckpointProofs(context.Context, apiclient.VerifyCheckpointProofsRequest) (*apiclient.SerializedEVMTransaction, error) {
	tx := s.tx
	return &tx, nil
}

// served is endpoint 5's answer: a proofs transaction to `to` whose balance container proof
// leads to the returned root (a tree of height 3, the container at leaf 6, built with
// crypto/sha256), and its separate fields, written from the same values: chain 1337, tip 1 wei,
// fee cap 2 wei, gas 2,000,000, value 0.
func served(t *testing.T, to common.Address) (apiclient.SerializedEVMTransaction, common.Hash) {
	t.Helper()
	container := sha256.Sum256([]byte("container"))
	leaves := make([][32]byte, 8)
	for i := range leaves {
		leaves[i] = sha256.Sum256([]byte{byte(i)})
	}
	leaves[6] = container
	var proof []byte
	level, index := leaves, 6
	for len(level) > 1 {
		proof = append(proof, level[index^1][:]...)
		next := make([][32]byte, len(level)/2)
		for i := range next {
			next[i] = sha256.Sum256(append(append([]byte{}, level[2*i][:]...), level[2*i+1][:]...))
		}
		level, index = next, index/2
	}
	var proofs []signerevm.BalanceProof
	for i := 0; i < 3; i++ {
		proofs = append(proofs, signerevm.BalanceProof{PubkeyHash: sha256.Sum256([]byte{0xa, byte(i)}), Proof: make([]byte, 256)})
	}
	data, err := signerevm.CheckpointABI().Pack("verifyCheckpointProofs", signerevm.BalanceContainerProof{BalanceContainerRoot: container, Proof: proof}, proofs)
	require.NoError(t, err)
	body, err := rlp.EncodeToBytes([]any{big.NewInt(1337), uint64(0), big.NewInt(1), big.NewInt(2), uint64(2_000_000), to, big.NewInt(0), data, []any{}})
	require.NoError(t, err)
	return apiclient.SerializedEVMTransaction{SerializeTx: hexutil.Encode(append([]byte{types.DynamicFeeTxType}, body...)),
		To: to.Hex(), GasLimit: "2000000", Data: hexutil.Encode(data), Value: "0", ChainID: "1337", Type: "2",
		MaxFeePerGas: "2", MaxPriorityFeePerGas: "1"}, level[0]
}

func newActivities(t *testing.T, c *evmfake.Chain, tx apiclient.SerializedEVMTransaction) *Activities {
	t.Helper()
	s, err := signerevm.NewCheckpointSigner(&signerevm.Keyring{}, signerevm.CheckpointPolicy{ChainID: 1337})
	require.NoError(t, err)
	return &Activities{Networks: map[string]Network{"dev": {Chain: c, Signer: s, PodManager: manager}}, Service: fakeService{tx}}
}

func errType(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Type()
	}
	return ""
}

func buildProofs(t *testing.T, a *Activities) (ProofsBuildResult, error) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	v, err := env.ExecuteActivity(a.EigenBuildProofs, ProofsBuildInput{Network: "dev", Owner: owner.Hex(), Submitter: owner.Hex(),
		Pod: pod.Hex(), ActivateTx: startTx.Hex(), CheckpointTimestamp: 77, Nonce: 9, Build: 1})
	if err != nil {
		return ProofsBuildResult{}, err
	}
	var r ProofsBuildResult
	require.NoError(t, v.Get(&r))
	return r, nil
}

// TestBuildProofs: an honest batch comes back with the pod's checkpoint root and proofs remaining
// and stakeflow's nonce; a batch the simulation finds already proven is ErrAlreadyProven, another
// revert ErrWouldRevert, a batch to another pod VerificationFailed: nothing signed in each case.
func TestBuildProofs(t *testing.T) {
	tx, root := served(t, pod)
	c := podChain(77, root)
	r, err := buildProofs(t, newActivities(t, c, tx))
	require.NoError(t, err)
	assert.Equal(t, 3, r.Proofs)
	assert.Equal(t, root, r.Intent.CheckpointRoot)
	assert.EqualValues(t, 5, r.Intent.ProofsRemaining)
	assert.EqualValues(t, 9, r.Intent.Nonce)
	assert.EqualValues(t, 1_250_000, r.Intent.GasLimit, "the estimate and its 25% margin")

	c.GasErr = &evmchain.RevertError{Reason: "EigenPod.verifyCheckpointProofs: " + AlreadyCheckpointed, Replayed: true}
	_, err = buildProofs(t, newActivities(t, c, tx))
	assert.Equal(t, ErrAlreadyProven, errType(err), "%v", err)

	c.GasErr = &evmchain.RevertError{Reason: "EigenPod.verifyCheckpointProofs: invalid balance proof", Replayed: true}
	_, err = buildProofs(t, newActivities(t, c, tx))
	assert.Equal(t, actevm.ErrWouldRevert, errType(err), "%v", err)
	assert.ErrorContains(t, err, "invalid balance proof")

	c.GasErr = nil
	hostile, _ := served(t, other)
	_, err = buildProofs(t, newActivities(t, c, hostile))
	assert.Equal(t, activities.ErrVerificationFailed, errType(err), "%v", err)

	noCheckpoint(c)
	_, err = buildProofs(t, newActivities(t, c, tx))
	assert.Equal(t, ErrNoCheckpoint, errType(err), "%v", err)
}

// TestBuildStartRefusedWhileActive: no second startCheckpoint is built while one is active.
func TestBuildStartRefusedWhileActive(t *testing.T) {
	a := newActivities(t, podChain(77, common.Hash{}), apiclient.SerializedEVMTransaction{})
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	_, err := env.ExecuteActivity(a.EigenBuildStart, StartBuildInput{Network: "dev", Build: 1,
		Intent: signerevm.StartIntent{ChainID: 1337, Owner: owner, Pod: pod}})
	assert.Equal(t, ErrCheckpointActive, errType(err), "%v", err)

	v, err := env.ExecuteActivity(a.EigenReadPod, PodInput{Network: "dev", Owner: owner.Hex()})
	require.NoError(t, err)
	var p Pod
	require.NoError(t, v.Get(&p))
	assert.Equal(t, startTx.Hex(), p.StartTx)
	assert.EqualValues(t, 5, p.ProofsRemaining)
}

// TestBuildProofsRefusesAnAnswerThatContradictsItself: endpoint 5 answering fields (to, data,
// value, chainId, gasLimit, type, fees) that say another thing than its own serializeTx is refused
// whole before anything is signed (VerificationFailed, non-retryable), the message naming the
// field and both values, though serializeTx alone is an honest batch.
func TestBuildProofsRefusesAnAnswerThatContradictsItself(t *testing.T) {
	honest, root := served(t, pod)
	c := podChain(77, root)
	_, err := buildProofs(t, newActivities(t, c, honest))
	require.NoError(t, err, "the honest answer passes")
	for _, tc := range []struct {
		field, said, serialized string
		set                     func(tx *apiclient.SerializedEVMTransaction)
	}{
		{"to", other.Hex(), pod.Hex(), func(tx *apiclient.SerializedEVMTransaction) { tx.To = other.Hex() }},
		{"data", "4 bytes starting 0xf074ba62", "bytes starting 0xf074ba62", func(tx *apiclient.SerializedEVMTransaction) { tx.Data = "0xf074ba62" }},
		{"value", "1", "is 0", func(tx *apiclient.SerializedEVMTransaction) { tx.Value = "1" }},
		{"chainId", "1", "is 1337", func(tx *apiclient.SerializedEVMTransaction) { tx.ChainID = "1" }},
		{"gasLimit", "21000", "is 2000000", func(tx *apiclient.SerializedEVMTransaction) { tx.GasLimit = "21000" }},
		{"type", "0", "is 2", func(tx *apiclient.SerializedEVMTransaction) { tx.Type = "0" }},
		{"maxFeePerGas", "20", "is 2", func(tx *apiclient.SerializedEVMTransaction) { tx.MaxFeePerGas = "20" }},
		{"maxPriorityFeePerGas", "absent", "is 1", func(tx *apiclient.SerializedEVMTransaction) { tx.MaxPriorityFeePerGas = "" }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			tx := honest
			tc.set(&tx)
			_, err := buildProofs(t, newActivities(t, c, tx))
			require.Error(t, err)
			assert.Equal(t, activities.ErrVerificationFailed, errType(err), "%v", err)
			var app *temporal.ApplicationError
			require.ErrorAs(t, err, &app)
			assert.True(t, app.NonRetryable())
			assert.ErrorContains(t, err, "contradicts itself: its field "+tc.field+" is ")
			assert.ErrorContains(t, err, tc.said)
			assert.ErrorContains(t, err, "serializeTx's "+tc.field+" ")
			assert.ErrorContains(t, err, tc.serialized)
			assert.ErrorContains(t, err, "nothing was signed")
		})
	}
}
