package eigenlayer

import (
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rlp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/internal/testutil/evmfake"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// byRef is a worker whose activities keep the proofs transactions in a RawCache, with the
// submitter's key.
type byRef struct {
	a         *Activities
	env       *testsuite.TestActivityEnvironment
	submitter common.Address
}

func newByRef(t *testing.T, c *evmfake.Chain, tx apiclient.SerializedEVMTransaction) *byRef {
	t.Helper()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	s, err := signerevm.NewCheckpointSigner(signerevm.KeyringOf(key), signerevm.CheckpointPolicy{ChainID: 1337})
	require.NoError(t, err)
	a := &Activities{Networks: map[string]Network{"dev": {Chain: c, Signer: s, PodManager: manager}}, Service: fakeService{tx}, Raw: actevm.NewRawCache(0)}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	return &byRef{a: a, env: env, submitter: crypto.PubkeyToAddress(key.PublicKey)}
}

func (b *byRef) build(t *testing.T) ProofsBuildResult {
	t.Helper()
	v, err := b.env.ExecuteActivity(b.a.EigenBuildProofs, ProofsBuildInput{Network: "dev", Owner: owner.Hex(), Submitter: b.submitter.Hex(),
		Pod: pod.Hex(), ActivateTx: startTx.Hex(), CheckpointTimestamp: 77, Nonce: 9, Build: 1})
	require.NoError(t, err)
	var r ProofsBuildResult
	require.NoError(t, v.Get(&r))
	return r
}

func (b *byRef) sign(in ProofsSignInput) (SignResult, error) {
	v, err := b.env.ExecuteActivity(b.a.EigenSignProofs, in)
	if err != nil {
		return SignResult{}, err
	}
	var r SignResult
	return r, v.Get(&r)
}

// TestProofsByReference: the build names the served batch by its Keccak-256 digest and carries no
// bytes; the signature verifies and signs the bytes that digest names (from the worker's cache,
// or asked of the service again on a worker without them) and answers the hash only, the signed
// bytes kept under it; a service now serving another batch is ErrBatchChanged, nothing signed.
func TestProofsByReference(t *testing.T) {
	tx, root := served(t, pod)
	servedData := hexutil.MustDecode(tx.Data)
	b := newByRef(t, podChain(77, root), tx)

	r := b.build(t)
	assert.Empty(t, r.ServedTransaction, "no bytes in the result")
	assert.Equal(t, crypto.Keccak256Hash(servedData).Hex(), r.Batch.Digest, "the digest of the proofs (the calldata)")
	assert.Equal(t, owner.Hex(), r.Batch.Owner)
	assert.Equal(t, startTx.Hex(), r.Batch.ActivateTx)

	in := ProofsSignInput{Network: "dev", Intent: r.Intent, Batch: r.Batch}
	s, err := b.sign(in)
	require.NoError(t, err)
	assert.Empty(t, s.SignedTransaction, "named by hash only")
	raw, ok := b.a.Raw.Get(common.HexToHash(s.Hash))
	require.True(t, ok, "the signed bytes are kept under their hash")
	var signed types.Transaction
	require.NoError(t, signed.UnmarshalBinary(raw))
	assert.Equal(t, s.Hash, signed.Hash().Hex())
	assert.Equal(t, servedData, signed.Data(), "the served proofs, signed")
	assert.Equal(t, pod, *signed.To())
	assert.EqualValues(t, 9, signed.Nonce())
	from, err := types.Sender(types.LatestSignerForChainID(signed.ChainId()), &signed)
	require.NoError(t, err)
	assert.Equal(t, b.submitter, from)

	// A worker without the batch in its cache asks the service again: the same batch is signed,
	// whatever nonce and fees the service chose this time.
	again := tx
	again.MaxFeePerGas, again.MaxPriorityFeePerGas = "3", "2"
	body, err := rlp.EncodeToBytes([]any{big.NewInt(1337), uint64(4), big.NewInt(2), big.NewInt(3), uint64(2_000_000), pod, big.NewInt(0), servedData, []any{}})
	require.NoError(t, err)
	again.SerializeTx = hexutil.Encode(append([]byte{types.DynamicFeeTxType}, body...))
	b.a.Service = fakeService{again}
	b.a.Raw = actevm.NewRawCache(0)
	s2, err := b.sign(in)
	require.NoError(t, err)
	raw2, ok := b.a.Raw.Get(common.HexToHash(s2.Hash))
	require.True(t, ok)
	var signed2 types.Transaction
	require.NoError(t, signed2.UnmarshalBinary(raw2))
	assert.Equal(t, servedData, signed2.Data())
	assert.Equal(t, s.Hash, s2.Hash, "the same transaction: the intent's nonce and fees over the same proofs")

	// The service now serves fewer of the proofs (another party proved one meanwhile): a batch
	// the intent would allow, but not the one built: refused, nothing signed.
	m := signerevm.CheckpointABI().Methods["verifyCheckpointProofs"]
	args, err := m.Inputs.Unpack(servedData[4:])
	require.NoError(t, err)
	container := *abi.ConvertType(args[0], new(signerevm.BalanceContainerProof)).(*signerevm.BalanceContainerProof)
	proofs := *abi.ConvertType(args[1], new([]signerevm.BalanceProof)).(*[]signerevm.BalanceProof)
	fewer, err := signerevm.CheckpointABI().Pack("verifyCheckpointProofs", container, proofs[:2])
	require.NoError(t, err)
	body, err = rlp.EncodeToBytes([]any{big.NewInt(1337), uint64(4), big.NewInt(2), big.NewInt(3), uint64(2_000_000), pod, big.NewInt(0), fewer, []any{}})
	require.NoError(t, err)
	again.SerializeTx, again.Data = hexutil.Encode(append([]byte{types.DynamicFeeTxType}, body...)), hexutil.Encode(fewer)
	b.a.Service, b.a.Raw = fakeService{again}, actevm.NewRawCache(0)
	_, err = b.sign(in)
	assert.Equal(t, ErrBatchChanged, errType(err), "%v", err)
	assert.ErrorContains(t, err, "digest")

	// The service has moved on to another batch: refused, nothing signed.
	other, _ := served(t, other)
	b.a.Service, b.a.Raw = fakeService{other}, actevm.NewRawCache(0)
	_, err = b.sign(in)
	assert.Equal(t, ErrBatchChanged, errType(err), "%v", err)
	assert.ErrorContains(t, err, "nothing was signed")

	// A digest that is not one is refused.
	for _, bad := range []string{"0x12", "0x" + strings.Repeat("zz", 32), ""} {
		in.Batch.Digest = bad
		_, err = b.sign(in)
		assert.Equal(t, activities.ErrInvalidInput, errType(err), "%q: %v", bad, err)
	}
}
