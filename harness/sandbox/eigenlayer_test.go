//go:build integration

package sandbox

import (
	"context"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/gethdev"
	"github.com/stakeflow/stakeflow/harness/sandbox/evmchain"
)

const eigenProofsPath = "/api/v1/eth/staking/eigenlayer/tx/verify-checkpoint-proofs"

// TestEigenLayerProofsOnChain: with the EigenLayer stand-ins, endpoint 5 answers the next batch of
// real proofs for the owner's pod; signed by anyone and sent, the chain accepts it and the pod's
// proofs remaining go down by the batch. activateTx must be a transaction hash.
func TestEigenLayerProofsOnChain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	node, err := gethdev.Start(ctx, gethdev.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = node.Close() })
	ownerKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	adminKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	owner := crypto.PubkeyToAddress(ownerKey.PublicKey)
	for _, a := range []common.Address{owner, crypto.PubkeyToAddress(adminKey.PublicKey)} {
		_, err = node.Fund(ctx, a, new(big.Int).Mul(big.NewInt(10), evmchain.POL))
		require.NoError(t, err)
	}
	el, err := evmchain.DeployEigenLayer(ctx, node.RPCURL(), adminKey)
	require.NoError(t, err)
	t.Cleanup(el.Close)
	sb, err := Start(ctx, Config{TokenSecret: testSecret, Runtime: fastRuntime(), EVMRPC: node.RPCURL(), EigenLayer: el})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sb.Close() })
	token := mintToken(t, "eigen")

	// The pod is made through the sandbox's control.
	r := do(t, http.MethodPost, sb.URL()+"/sandbox/eigenlayer/pods", "", map[string]any{"owner": owner.Hex(), "validators": 100, "balanceGwei": 32e9})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	pod := common.HexToAddress(r.Body["result"].(map[string]any)["pod"].(string))
	got, err := el.Pod(ctx, owner)
	require.NoError(t, err)
	require.Equal(t, got, pod)
	r = do(t, http.MethodPost, sb.URL()+"/sandbox/eigenlayer/hostile", "", map[string]any{"pod": pod.Hex(), "mode": "sideways"})
	assert.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Raw)
	start, err := el.Pack(evmchain.ContractEigenPod, "startCheckpoint", false)
	require.NoError(t, err)
	rcpt, err := el.Send(ctx, ownerKey, pod, start)
	require.NoError(t, err)

	r = do(t, http.MethodPost, sb.URL()+eigenProofsPath, token, map[string]any{"eigenPodOwnerAddress": owner.Hex(), "activateTx": "yes"})
	assert.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Raw)

	r = do(t, http.MethodPost, sb.URL()+eigenProofsPath, token, map[string]any{"eigenPodOwnerAddress": owner.Hex(), "activateTx": rcpt.TxHash.Hex()})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	res := r.Body["result"].(map[string]any)
	assert.Equal(t, pod.Hex(), res["to"])
	assert.Equal(t, "2", res["type"])
	assert.Equal(t, "0", res["value"])
	raw, err := hexutil.Decode(res["serializeTx"].(string))
	require.NoError(t, err)
	require.Equal(t, byte(types.DynamicFeeTxType), raw[0])
	data, err := hexutil.Decode(res["data"].(string))
	require.NoError(t, err)
	assert.Equal(t, "0xf074ba62", hexutil.Encode(data[:4]))

	_, err = el.Send(ctx, ownerKey, pod, data)
	require.NoError(t, err)
	st, err := el.ReadPod(ctx, pod)
	require.NoError(t, err)
	assert.EqualValues(t, 100-evmchain.MaxProofsPerBatch, st.ProofsRemaining)

	// Another owner: no pod, no proofs.
	r = do(t, http.MethodPost, sb.URL()+eigenProofsPath, token, map[string]any{"eigenPodOwnerAddress": common.Address{7}.Hex(), "activateTx": rcpt.TxHash.Hex()})
	assert.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Raw)
}
