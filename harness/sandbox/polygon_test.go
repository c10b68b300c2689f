//go:build integration

package sandbox

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/harness/gethdev"
	"github.com/stakeflow/stakeflow/harness/sandbox/evmchain"
)

const polygonSendPath = "/api/v1/polygon/transaction/send"

// polygonChain is a geth --dev node with the staking contracts deployed, a funded staker
// holding 1000 POL, and a sandbox whose endpoint 4 forwards to the node.
type polygonChain struct {
	node   *gethdev.Node
	d      *evmchain.Deployment
	sb     *Sandbox
	staker *ecdsa.PrivateKey
	token  string
}

func startPolygonChain(t *testing.T) *polygonChain {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	node, err := gethdev.Start(ctx, gethdev.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = node.Close() })
	staker, err := crypto.GenerateKey()
	require.NoError(t, err)
	_, err = node.Fund(ctx, crypto.PubkeyToAddress(staker.PublicKey), new(big.Int).Mul(big.NewInt(10), evmchain.POL))
	require.NoError(t, err)
	d, err := evmchain.Deploy(ctx, node.RPCURL(), node.DevKey(),
		evmchain.WithStaker(crypto.PubkeyToAddress(staker.PublicKey), new(big.Int).Mul(big.NewInt(1000), evmchain.POL)))
	require.NoError(t, err)
	t.Cleanup(d.Close)
	sb, err := Start(ctx, Config{TokenSecret: testSecret, Runtime: fastRuntime(), EVMRPC: node.RPCURL()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sb.Close() })
	return &polygonChain{node: node, d: d, sb: sb, staker: staker, token: mintToken(t, "polygon")}
}

func (c *polygonChain) stakerAddr() common.Address { return crypto.PubkeyToAddress(c.staker.PublicKey) }

// approveTx is a signed approve of amount POL to the StakeManager by key, at key's next nonce.
func (c *polygonChain) approveTx(t *testing.T, key *ecdsa.PrivateKey, pol int64) *types.Transaction {
	t.Helper()
	data, err := c.d.Pack(evmchain.ContractToken, "approve", c.d.StakeManager, new(big.Int).Mul(big.NewInt(pol), evmchain.POL))
	require.NoError(t, err)
	tx, err := c.d.SignTx(testCtx(t), key, c.d.Token, data)
	require.NoError(t, err)
	return tx
}

func hexTx(t *testing.T, tx *types.Transaction) string {
	t.Helper()
	raw, err := tx.MarshalBinary()
	require.NoError(t, err)
	return hexutil.Encode(raw)
}

// post sends endpoint 4 a body with raw HTTP.
func (c *polygonChain) post(t *testing.T, signed string, staker common.Address) rawResponse {
	t.Helper()
	return do(t, http.MethodPost, c.sb.URL()+polygonSendPath, c.token, map[string]any{"signedTransaction": signed, "stakerAddress": staker.Hex()})
}

// answeredHash reads transactionHash from a 200 answer.
func answeredHash(t *testing.T, r rawResponse) string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	res, ok := r.Body["result"].(map[string]any)
	require.True(t, ok, "%s", r.Raw)
	h, ok := res["transactionHash"].(string)
	require.True(t, ok, "%s", r.Raw)
	return h
}

// mined waits for hash's receipt and requires success.
func (c *polygonChain) mined(t *testing.T, hash common.Hash) *types.Receipt {
	t.Helper()
	rcpt, err := c.d.WaitMined(testCtx(t), hash)
	require.NoError(t, err)
	require.Equal(t, types.ReceiptStatusSuccessful, rcpt.Status)
	return rcpt
}

// unknownToChain requires the chain to know nothing of hash, after two more blocks.
func (c *polygonChain) unknownToChain(t *testing.T, hash common.Hash) {
	t.Helper()
	ctx := testCtx(t)
	start, err := c.d.Client().BlockNumber(ctx)
	require.NoError(t, err)
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		n, err := c.d.Client().BlockNumber(ctx)
		require.NoError(ct, err)
		require.GreaterOrEqual(ct, n, start+2)
	}, 30*time.Second, 100*time.Millisecond)
	_, _, err = c.d.Client().TransactionByHash(ctx, hash)
	assert.ErrorIs(t, err, ethereum.NotFound, "the chain knows %s", hash.Hex())
}

func (c *polygonChain) allowance(t *testing.T) *big.Int {
	t.Helper()
	a, err := c.d.Allowance(testCtx(t), c.stakerAddr(), c.d.StakeManager)
	require.NoError(t, err)
	return a
}

// TestPolygonSendForwardsToChain delegates through endpoint 4 on a real chain: approve, then
// buyVoucherPOL; each answer is the chain's hash of the transaction, which mines, and the
// allowance and shares read from the chain are what was asked. A re-send of mined bytes is
// answered with the same hash.
func TestPolygonSendForwardsToChain(t *testing.T) {
	c := startPolygonChain(t)
	ctx := testCtx(t)
	cl := client(t, c.sb.URL(), "polygon")

	approve := c.approveTx(t, c.staker, 100)
	res, err := cl.PolygonSend(ctx, apiclient.PolygonSendRequest{SignedTransaction: hexTx(t, approve), StakerAddress: c.stakerAddr().Hex()})
	require.NoError(t, err)
	assert.JSONEq(t, `{"transactionHash":"`+approve.Hash().Hex()+`"}`, string(res))
	c.mined(t, approve.Hash())
	assert.Equal(t, new(big.Int).Mul(big.NewInt(100), evmchain.POL).String(), c.allowance(t).String())

	share := c.d.Validators[0].Share
	data, err := c.d.Pack(evmchain.ContractValidatorShare, "buyVoucherPOL", new(big.Int).Mul(big.NewInt(100), evmchain.POL), big.NewInt(0))
	require.NoError(t, err)
	buy, err := c.d.SignTx(ctx, c.staker, share, data)
	require.NoError(t, err)
	assert.Equal(t, buy.Hash().Hex(), answeredHash(t, c.post(t, hexTx(t, buy), c.stakerAddr())))
	c.mined(t, buy.Hash())
	shares, err := c.d.Shares(ctx, share, c.stakerAddr())
	require.NoError(t, err)
	assert.Equal(t, new(big.Int).Mul(big.NewInt(100), evmchain.POL).String(), shares.String())
	assert.Equal(t, "0", c.allowance(t).String())

	// The same bytes again: the chain knows them; the answer is their hash.
	assert.Equal(t, buy.Hash().Hex(), answeredHash(t, c.post(t, hexTx(t, buy), c.stakerAddr())))
}

// TestPolygonSendRefusals: a transaction signed by another key than stakerAddress, bytes that
// are no transaction, a transaction for another chain id: 400 ValidationException naming what
// is wrong, nothing forwarded. A transaction the chain refuses: 400 TransactionRejectedException
// with the chain's words.
func TestPolygonSendRefusals(t *testing.T) {
	c := startPolygonChain(t)

	t.Run("signer is not stakerAddress", func(t *testing.T) {
		other, err := crypto.GenerateKey()
		require.NoError(t, err)
		_, err = c.node.Fund(testCtx(t), crypto.PubkeyToAddress(other.PublicKey), evmchain.POL)
		require.NoError(t, err)
		tx := c.approveTx(t, other, 1)
		r := c.post(t, hexTx(t, tx), c.stakerAddr())
		e := requireErrorEnvelope(t, r, http.StatusBadRequest, nameValidation, codeValidation, typeClient)
		msg := e["message"].(string)
		assert.Contains(t, msg, "signed by "+crypto.PubkeyToAddress(other.PublicKey).Hex())
		assert.Contains(t, msg, "not by stakerAddress "+c.stakerAddr().Hex())
		c.unknownToChain(t, tx.Hash())
	})
	t.Run("not a transaction", func(t *testing.T) {
		r := c.post(t, "0x02f86b0102", c.stakerAddr())
		e := requireErrorEnvelope(t, r, http.StatusBadRequest, nameValidation, codeValidation, typeClient)
		assert.Contains(t, e["message"], "signedTransaction is not an EVM transaction")
	})
	t.Run("another chain id", func(t *testing.T) {
		tx, err := types.SignNewTx(c.staker, types.LatestSignerForChainID(big.NewInt(137)), &types.DynamicFeeTx{
			ChainID: big.NewInt(137), Nonce: 0, GasTipCap: big.NewInt(1), GasFeeCap: big.NewInt(1e10), Gas: 100_000, To: &c.d.Token,
		})
		require.NoError(t, err)
		r := c.post(t, hexTx(t, tx), c.stakerAddr())
		e := requireErrorEnvelope(t, r, http.StatusBadRequest, nameValidation, codeValidation, typeClient)
		assert.Contains(t, e["message"], "for chain id 137, the chain here is 1337")
	})
	t.Run("refused by the chain", func(t *testing.T) {
		poor, err := crypto.GenerateKey()
		require.NoError(t, err)
		tx, err := types.SignNewTx(poor, types.LatestSignerForChainID(c.d.ChainID), &types.DynamicFeeTx{
			ChainID: c.d.ChainID, Nonce: 0, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(1e11), Gas: 100_000, To: &c.d.Token,
		})
		require.NoError(t, err)
		r := c.post(t, hexTx(t, tx), crypto.PubkeyToAddress(poor.PublicKey))
		e := requireErrorEnvelope(t, r, http.StatusBadRequest, nameTxRejected, codeTxRejected, typeClient)
		assert.Contains(t, e["message"], "Rejected: insufficient funds")
	})
}

// TestPolygonSendFaults injects each fault at endpoint 4 and reads the chain: 429 (with
// Retry-After), 500 and a dropped connection before forwarding leave the chain untouched; a
// lost answer (500 or dropped connection) after forwarding leaves the transaction mined;
// "dropped" answers the hash of a transaction that never reaches the chain.
func TestPolygonSendFaults(t *testing.T) {
	c := startPolygonChain(t)
	setFaults := func(t *testing.T, f FaultConfig) {
		t.Helper()
		require.NoError(t, c.sb.SetFaults(f))
		t.Cleanup(func() { require.NoError(t, c.sb.SetFaults(FaultConfig{})) })
	}
	endpoint := func(ef EndpointFaults) FaultConfig {
		return FaultConfig{Endpoints: map[string]EndpointFaults{EndpointPolygonSend: ef}}
	}

	t.Run("429 with Retry-After, not forwarded", func(t *testing.T) {
		setFaults(t, endpoint(EndpointFaults{Next429: 1, RetryAfterSeconds: 3}))
		tx := c.approveTx(t, c.staker, 1)
		r := c.post(t, hexTx(t, tx), c.stakerAddr())
		requireErrorEnvelope(t, r, http.StatusTooManyRequests, nameThrottler, codeThrottler, typeClient)
		assert.Equal(t, "3", r.Header.Get("Retry-After"))
		c.unknownToChain(t, tx.Hash())
	})
	t.Run("500, not forwarded", func(t *testing.T) {
		setFaults(t, endpoint(EndpointFaults{Next500: 1}))
		tx := c.approveTx(t, c.staker, 2)
		r := c.post(t, hexTx(t, tx), c.stakerAddr())
		requireErrorEnvelope(t, r, http.StatusInternalServerError, nameInternal, codeInternal, typeServer)
		c.unknownToChain(t, tx.Hash())
	})
	t.Run("dropped connection, not forwarded", func(t *testing.T) {
		setFaults(t, endpoint(EndpointFaults{NextDrop: 1}))
		tx := c.approveTx(t, c.staker, 3)
		c.postExpectingDrop(t, hexTx(t, tx))
		c.unknownToChain(t, tx.Hash())
	})
	t.Run("answer lost as a 500 after forwarding", func(t *testing.T) {
		setFaults(t, FaultConfig{PolygonSendLostResponse: LostResponse{Next: 1}})
		tx := c.approveTx(t, c.staker, 4)
		r := c.post(t, hexTx(t, tx), c.stakerAddr())
		requireErrorEnvelope(t, r, http.StatusInternalServerError, nameInternal, codeInternal, typeServer)
		c.mined(t, tx.Hash())
		assert.Equal(t, new(big.Int).Mul(big.NewInt(4), evmchain.POL).String(), c.allowance(t).String())
		// Sent again, the same bytes are answered with their hash.
		assert.Equal(t, tx.Hash().Hex(), answeredHash(t, c.post(t, hexTx(t, tx), c.stakerAddr())))
	})
	t.Run("answer lost as a dropped connection after forwarding", func(t *testing.T) {
		setFaults(t, FaultConfig{PolygonSendLostResponse: LostResponse{Next: 1, Drop: true}})
		tx := c.approveTx(t, c.staker, 5)
		c.postExpectingDrop(t, hexTx(t, tx))
		c.mined(t, tx.Hash())
		assert.Equal(t, new(big.Int).Mul(big.NewInt(5), evmchain.POL).String(), c.allowance(t).String())
	})
	t.Run("dropped: hash answered, never forwarded", func(t *testing.T) {
		setFaults(t, FaultConfig{PolygonSendDropped: LostResponse{Next: 1}})
		tx := c.approveTx(t, c.staker, 6)
		assert.Equal(t, tx.Hash().Hex(), answeredHash(t, c.post(t, hexTx(t, tx), c.stakerAddr())))
		c.unknownToChain(t, tx.Hash())
		nonce, err := c.d.Client().NonceAt(testCtx(t), c.stakerAddr(), nil)
		require.NoError(t, err)
		assert.Equal(t, tx.Nonce(), nonce, "the staker's nonce was not consumed")
		assert.Equal(t, new(big.Int).Mul(big.NewInt(5), evmchain.POL).String(), c.allowance(t).String())
	})
}

// postExpectingDrop sends endpoint 4 a body and requires the connection to break without an
// answer.
func (c *polygonChain) postExpectingDrop(t *testing.T, signed string) {
	t.Helper()
	body := `{"signedTransaction":"` + signed + `","stakerAddress":"` + c.stakerAddr().Hex() + `"}`
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, c.sb.URL()+polygonSendPath, bytes.NewBufferString(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err == nil {
		resp.Body.Close()
	}
	require.Error(t, err, "expected a dropped connection")
	assert.False(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
}

// TestPolygonSendWrongHash: with polygonSendWrongHash the transaction is forwarded and mines
// under its own hash, while the answer names another hash the chain does not know; the next
// answer is honest again.
func TestPolygonSendWrongHash(t *testing.T) {
	c := startPolygonChain(t)
	require.NoError(t, c.sb.SetFaults(FaultConfig{PolygonSendWrongHash: LostResponse{Next: 1}}))
	tx := c.approveTx(t, c.staker, 7)
	answered := answeredHash(t, c.post(t, hexTx(t, tx), c.stakerAddr()))
	assert.NotEqual(t, strings.ToLower(tx.Hash().Hex()), strings.ToLower(answered))
	c.mined(t, tx.Hash())
	_, _, err := c.d.Client().TransactionByHash(testCtx(t), common.HexToHash(answered))
	assert.ErrorIs(t, err, ethereum.NotFound, "the answered hash is on chain")

	next := c.approveTx(t, c.staker, 8)
	assert.Equal(t, next.Hash().Hex(), answeredHash(t, c.post(t, hexTx(t, next), c.stakerAddr())))
	c.mined(t, next.Hash())
}

// TestPolygonSendForwardThenRefuse: with polygonSendForwardThenRefuse the transaction is
// forwarded and mines under its own hash while the answer is a 400 TransactionRejectedException,
// as if it never reached the chain; the next answer is honest again.
func TestPolygonSendForwardThenRefuse(t *testing.T) {
	c := startPolygonChain(t)
	require.NoError(t, c.sb.SetFaults(FaultConfig{PolygonSendForwardThenRefuse: LostResponse{Next: 1}}))
	tx := c.approveTx(t, c.staker, 7)
	r := c.post(t, hexTx(t, tx), c.stakerAddr())
	e := requireErrorEnvelope(t, r, http.StatusBadRequest, nameTxRejected, codeTxRejected, typeClient)
	assert.Equal(t, "Rejected: the transaction could not be processed", e["message"])
	c.mined(t, tx.Hash())
	assert.Zero(t, c.sb.Faults().PolygonSendForwardThenRefuse.Next, "the fault is used up")

	next := c.approveTx(t, c.staker, 8)
	assert.Equal(t, next.Hash().Hex(), answeredHash(t, c.post(t, hexTx(t, next), c.stakerAddr())))
	c.mined(t, next.Hash())
}

// TestPolygonFaultConfig: the endpoint-4 faults read from their JSON names and are validated
// like the broadcast ones.
func TestPolygonFaultConfig(t *testing.T) {
	var f FaultConfig
	require.NoError(t, json.Unmarshal([]byte(`{"polygonSendLostResponse":{"next":2,"drop":true},"polygonSendDropped":{"rate":0.5}}`), &f))
	assert.Equal(t, LostResponse{Next: 2, Drop: true}, f.PolygonSendLostResponse)
	assert.Equal(t, LostResponse{Rate: 0.5}, f.PolygonSendDropped)
	require.NoError(t, f.Validate())
	assert.ErrorContains(t, FaultConfig{PolygonSendDropped: LostResponse{Rate: 1.5}}.Validate(), "polygonSendDropped")
	assert.ErrorContains(t, FaultConfig{PolygonSendLostResponse: LostResponse{Next: -1}}.Validate(), "polygonSendLostResponse")
	assert.ErrorContains(t, FaultConfig{PolygonSendWrongHash: LostResponse{Rate: -0.1}}.Validate(), "polygonSendWrongHash")
	require.NoError(t, json.Unmarshal([]byte(`{"polygonSendForwardThenRefuse":{"next":1}}`), &f))
	assert.Equal(t, LostResponse{Next: 1}, f.PolygonSendForwardThenRefuse)
	assert.ErrorContains(t, FaultConfig{PolygonSendForwardThenRefuse: LostResponse{Rate: 2}}.Validate(), "polygonSendForwardThenRefuse")
}
