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
// ts (0: none active) with root and 5 proofs remaining, of 5 active validators, each active and
// not yet proven, the pod's activation among the logs, and the manager's Pectra fork timestamp
// (forkBefore, before every checkpoint of the tests); gas estimates of 1,000,000 at 1 gwei fees.
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
			"pectraForkTimestamp":        {uint64(forkBefore)},
			"validatorPubkeyHashToInfo":  {signerevm.ValidatorInfo{ValidatorIndex: 3, RestakedBalanceGwei: 32e9, Status: signerevm.ValidatorActive}},
		},
		Events: []types.Log{{Address: pod, TxHash: startTx}},
	}
}

// forkBefore is the Pectra fork timestamp of the fake manager: before the tests' checkpoint 77.
const forkBefore = 50

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
// leads to the returned root under EigenLayer's Pectra geometry (the container at field 12 of a
// 64-leaf beacon state, the state root at leaf 3 of an 8-leaf block header, built with
// crypto/sha256), and its separate fields, written from the same values: chain 1337, tip 1 wei,
// fee cap 2 wei, gas 2,000,000, value 0.
func served(t *testing.T, to common.Address) (apiclient.SerializedEVMTransaction, common.Hash) {
	t.Helper()
	container := sha256.Sum256([]byte("container"))
	tree := func(leaves [][32]byte, index int) ([32]byte, []byte) {
		var proof []byte
		level := leaves
		for len(level) > 1 {
			proof = append(proof, level[index^1][:]...)
			next := make([][32]byte, len(level)/2)
			for i := range next {
				next[i] = sha256.Sum256(append(append([]byte{}, level[2*i][:]...), level[2*i+1][:]...))
			}
			level, index = next, index/2
		}
		return level[0], proof
	}
	state := make([][32]byte, 64)
	for i := range state {
		state[i] = sha256.Sum256([]byte{'s', byte(i)})
	}
	state[12] = container
	stateRoot, stateProof := tree(state, 12)
	header := make([][32]byte, 8)
	for i := range header {
		header[i] = sha256.Sum256([]byte{'h', byte(i)})
	}
	header[3] = stateRoot
	root, headerProof := tree(header, 3)
	proof := append(stateProof, headerProof...)
	var proofs []signerevm.BalanceProof
	for i := 0; i < 3; i++ {
		proofs = append(proofs, signerevm.BalanceProof{PubkeyHash: sha256.Sum256([]byte{0xa, byte(i)}), Proof: make([]byte, 39*32)})
	}
	data, err := signerevm.CheckpointABI().Pack("verifyCheckpointProofs", signerevm.BalanceContainerProof{BalanceContainerRoot: container, Proof: proof}, proofs)
	require.NoError(t, err)
	body, err := rlp.EncodeToBytes([]any{big.NewInt(1337), uint64(0), big.NewInt(1), big.NewInt(2), uint64(2_000_000), to, big.NewInt(0), data, []any{}})
	require.NoError(t, err)
	return apiclient.SerializedEVMTransaction{SerializeTx: hexutil.Encode(append([]byte{types.DynamicFeeTxType}, body...)),
		To: to.Hex(), GasLimit: "2000000", Data: hexutil.Encode(data), Value: "0", ChainID: "1337", Type: "2",
		MaxFeePerGas: "2", MaxPriorityFeePerGas: "1"}, root
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

// TestBuildProofs: an honest batch comes back with the pod's checkpoint root, timestamp and
// proofs remaining, the manager's fork timestamp and stakeflow's nonce; a batch the pod would skip
// whole (its validators already proven in this checkpoint, or withdrawn) is ErrAlreadyProven, a
// revert ErrWouldRevert, a batch to another pod VerificationFailed, a fork timestamp that is zero
// or not the network's ErrForkTimestamp: nothing signed in each case.
func TestBuildProofs(t *testing.T) {
	tx, root := served(t, pod)
	c := podChain(77, root)
	r, err := buildProofs(t, newActivities(t, c, tx))
	require.NoError(t, err)
	assert.Equal(t, 3, r.Proofs)
	assert.Equal(t, root, r.Intent.CheckpointRoot)
	assert.EqualValues(t, 5, r.Intent.ProofsRemaining)
	assert.EqualValues(t, 77, r.Intent.CheckpointTimestamp)
	assert.EqualValues(t, forkBefore, r.Intent.PectraForkTimestamp)
	assert.EqualValues(t, 9, r.Intent.Nonce)
	assert.EqualValues(t, 1_250_000, r.Intent.GasLimit, "the estimate and its 25% margin")

	for name, info := range map[string]signerevm.ValidatorInfo{
		"proven in this checkpoint": {ValidatorIndex: 3, LastCheckpointedAt: 77, Status: signerevm.ValidatorActive},
		"proven in a later one":     {ValidatorIndex: 3, LastCheckpointedAt: 78, Status: signerevm.ValidatorActive},
		"withdrawn":                 {ValidatorIndex: 3, Status: 2},
		"never proven (inactive)":   {},
	} {
		c.Calls["validatorPubkeyHashToInfo"] = []any{info}
		_, err = buildProofs(t, newActivities(t, c, tx))
		assert.Equal(t, ErrAlreadyProven, errType(err), "%s: %v", name, err)
	}
	c.Calls["validatorPubkeyHashToInfo"] = []any{signerevm.ValidatorInfo{ValidatorIndex: 3, LastCheckpointedAt: 76, Status: signerevm.ValidatorActive}}
	_, err = buildProofs(t, newActivities(t, c, tx))
	require.NoError(t, err, "proven in the previous checkpoint only")

	c.GasErr = &evmchain.RevertError{Reason: "InvalidProof()", Replayed: true}
	_, err = buildProofs(t, newActivities(t, c, tx))
	assert.Equal(t, actevm.ErrWouldRevert, errType(err), "%v", err)
	assert.ErrorContains(t, err, "InvalidProof")

	c.GasErr = nil
	hostile, _ := served(t, other)
	_, err = buildProofs(t, newActivities(t, c, hostile))
	assert.Equal(t, activities.ErrVerificationFailed, errType(err), "%v", err)

	// A checkpoint at or before the fork is checked with Deneb's geometry: this Pectra proof fails.
	c.Calls["pectraForkTimestamp"] = []any{uint64(77)}
	_, err = buildProofs(t, newActivities(t, c, tx))
	assert.Equal(t, activities.ErrVerificationFailed, errType(err), "%v", err)
	c.Calls["pectraForkTimestamp"] = []any{uint64(0)}
	_, err = buildProofs(t, newActivities(t, c, tx))
	assert.Equal(t, ErrForkTimestamp, errType(err), "%v", err)
	c.Calls["pectraForkTimestamp"] = []any{uint64(forkBefore)}

	noCheckpoint(c)
	_, err = buildProofs(t, newActivities(t, c, tx))
	assert.Equal(t, ErrNoCheckpoint, errType(err), "%v", err)
}

// TestBuildProofsRefusesAForkTimestampThatIsNotTheNetworks: on mainnet (chain id 1) an
// EigenPodManager answering another Pectra fork timestamp than mainnet's (1746612311, the first
// slot of Electra epoch 364032) is refused before anything is verified or signed.
func TestBuildProofsRefusesAForkTimestampThatIsNotTheNetworks(t *testing.T) {
	tx, root := served(t, pod)
	c := podChain(77, root)
	c.Calls["pectraForkTimestamp"] = []any{uint64(1741159776)} // Sepolia's
	s, err := signerevm.NewCheckpointSigner(&signerevm.Keyring{}, signerevm.CheckpointPolicy{ChainID: 1})
	require.NoError(t, err)
	a := &Activities{Networks: map[string]Network{"mainnet": {Chain: c, Signer: s, PodManager: manager}}, Service: fakeService{tx}}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	_, err = env.ExecuteActivity(a.EigenBuildProofs, ProofsBuildInput{Network: "mainnet", Owner: owner.Hex(), Submitter: owner.Hex(),
		Pod: pod.Hex(), ActivateTx: startTx.Hex(), CheckpointTimestamp: 77, Nonce: 9, Build: 1})
	assert.Equal(t, ErrForkTimestamp, errType(err), "%v", err)
	assert.ErrorContains(t, err, "1746612311")
	assert.ErrorContains(t, err, "1741159776")
	assert.ErrorContains(t, err, "nothing was signed")
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
