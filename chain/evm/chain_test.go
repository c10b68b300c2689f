//go:build integration

package evmchain

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"github.com/stakeflow/stakeflow/chain/rpcproof"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/gethdev"
)

// node is one geth --dev shared by the real-chain tests of this package (they run in parallel,
// so their waits for finality overlap).
var node *gethdev.Node

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	// Blocks at the busy rate throughout: earlyInEpoch waits for heights with nothing sent.
	n, err := gethdev.Start(ctx, gethdev.Options{IdlePeriod: gethdev.DefaultPeriod})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start geth:", err)
		os.Exit(1)
	}
	node = n
	code := m.Run()
	_ = n.Close()
	os.Exit(code)
}

// Hand-assembled contracts (EVM opcodes: PUSH1 0x60, PUSH32 0x7f, MSTORE 0x52, CODECOPY 0x39,
// RETURN 0xf3, REVERT 0xfd).
var (
	// revertRuntime reverts every call with Error("nope"): it writes the ABI encoding of
	// Error(string) to memory and reverts with those 100 bytes.
	revertRuntime = concat(
		"7f"+"08c379a0"+strings.Repeat("00", 28), // PUSH32 selector of Error(string), left-aligned
		"6000", "52", // PUSH1 0, MSTORE: mem[0:32] = selector, zeros
		"6020", "6004", "52", // PUSH1 0x20, PUSH1 4, MSTORE: mem[4:36] = 0x20, the string's offset
		"6004", "6024", "52", // PUSH1 4, PUSH1 0x24, MSTORE: mem[36:68] = 4, the string's length
		"7f"+"6e6f7065"+strings.Repeat("00", 28), // PUSH32 "nope", left-aligned
		"6044", "52", // PUSH1 0x44, MSTORE: mem[68:100] = "nope", zero padded
		"6064", "6000", "fd", // PUSH1 100, PUSH1 0, REVERT: revert with mem[0:100]
	)
	// answerRuntime returns the uint256 42 to every call.
	answerRuntime = concat(
		"602a", "6000", "52", // PUSH1 42, PUSH1 0, MSTORE: mem[0:32] = 42
		"6020", "6000", "f3", // PUSH1 32, PUSH1 0, RETURN: return mem[0:32]
	)
)

func concat(parts ...string) []byte { return common.FromHex(strings.Join(parts, "")) }

// initCode returns creation code that deploys runtime: PUSH1 len, PUSH1 12 (where runtime
// starts), PUSH1 0, CODECOPY, PUSH1 len, PUSH1 0, RETURN, then runtime.
func initCode(runtime []byte) []byte {
	l := byte(len(runtime))
	return append([]byte{0x60, l, 0x60, 0x0c, 0x60, 0x00, 0x39, 0x60, l, 0x60, 0x00, 0xf3}, runtime...)
}

var answerABI = mustABI(`[{"type":"function","name":"answer","inputs":[],"outputs":[{"name":"","type":"uint256"}],"stateMutability":"view"}]`)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// client returns a Client of this package on the shared node.
func client(t *testing.T) *Client {
	c, err := Dial(testCtx(t), node.RPCURL())
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// funded returns a fresh key holding 1 ether.
func funded(t *testing.T) (*ecdsa.PrivateKey, common.Address) {
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	addr := crypto.PubkeyToAddress(key.PublicKey)
	_, err = node.Fund(testCtx(t), addr, big.NewInt(params.Ether))
	require.NoError(t, err)
	return key, addr
}

// signTx signs a dynamic-fee transaction from key with nonce.
func signTx(t *testing.T, key *ecdsa.PrivateKey, nonce uint64, to *common.Address, value *big.Int, gas uint64, data []byte) *types.Transaction {
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(node.ChainID()), &types.DynamicFeeTx{
		ChainID: node.ChainID(), Nonce: nonce, GasTipCap: big.NewInt(params.GWei), GasFeeCap: big.NewInt(10 * params.GWei),
		Gas: gas, To: to, Value: value, Data: data,
	})
	require.NoError(t, err)
	return tx
}

// send submits tx. geth's pool takes a new head in its own loop, after the receipt of the block
// is served: a transfer just mined to a fresh key may not be in the pool's view yet, so an
// "insufficient funds" refusal is retried until the pool has caught up.
func send(t *testing.T, tx *types.Transaction) {
	ctx := testCtx(t)
	for {
		err := node.Client().SendTransaction(ctx, tx)
		if err == nil || !strings.Contains(err.Error(), "insufficient funds") || ctx.Err() != nil {
			require.NoError(t, err)
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func mined(t *testing.T, tx *types.Transaction) *types.Receipt {
	r, err := node.WaitMined(testCtx(t), tx.Hash())
	require.NoError(t, err)
	return r
}

// deploy deploys runtime from key with nonce and returns its address.
func deploy(t *testing.T, key *ecdsa.PrivateKey, nonce uint64, runtime []byte) common.Address {
	tx := signTx(t, key, nonce, nil, nil, 200_000, initCode(runtime))
	send(t, tx)
	r := mined(t, tx)
	require.Equal(t, types.ReceiptStatusSuccessful, r.Status)
	code, err := node.Client().CodeAt(testCtx(t), r.ContractAddress, nil)
	require.NoError(t, err)
	require.Equal(t, runtime, code, "deployed code")
	return r.ContractAddress
}

// finalized reads the finalized height straight from the node.
func finalized(t *testing.T) uint64 {
	h, err := node.Client().HeaderByNumber(testCtx(t), big.NewInt(int64(rpc.FinalizedBlockNumber)))
	require.NoError(t, err)
	return h.Number.Uint64()
}

// earlyInEpoch waits until the head is early in one of geth's 32-block finality epochs, so a
// transaction sent now is mined several blocks before the block that finalizes it.
func earlyInEpoch(t *testing.T) {
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		head, err := node.Client().BlockNumber(testCtx(t))
		assert.NoError(ct, err)
		assert.True(ct, head%32 >= 1 && head%32 <= 20, "head %d", head)
	}, 40*time.Second, 50*time.Millisecond)
}

func TestRevertFixtureIsErrorString(t *testing.T) {
	// The bytes the hand-assembled contract reverts with are the ABI encoding of
	// Error("nope"), as go-ethereum's abi packs it.
	str, err := abi.NewType("string", "", nil)
	require.NoError(t, err)
	packed, err := abi.Arguments{{Type: str}}.Pack("nope")
	require.NoError(t, err)
	want := append(crypto.Keccak256([]byte("Error(string)"))[:4], packed...)
	got := make([]byte, 100)
	copy(got[0:4], revertRuntime[1:5])
	got[35] = 0x20
	got[67] = 4
	copy(got[68:], revertRuntime[47:51])
	assert.Equal(t, hexutil.Encode(want), hexutil.Encode(got))
}

func TestNetworkProvesChainID(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c := client(t)

	right := NewNetwork("dev", gethdev.ChainID, c, NetworkOptions{})
	_, err := right.LatestHeader(ctx)
	require.NoError(t, err, "a read proves the chain id inline")
	st := right.Status()
	assert.True(t, st.Verified)
	assert.Equal(t, "1337", st.Served)

	wrong := NewNetwork("mainnet", 1, c, NetworkOptions{})
	_, err = wrong.Nonces(ctx, node.DevAddress())
	require.Error(t, err, "nothing is read before the chain id is proven")
	var ue *rpcproof.UnverifiedError
	require.ErrorAs(t, err, &ue)
	assert.ErrorIs(t, err, ErrNetworkUnverified)
	assert.Contains(t, err.Error(), "expected chain id 1,")
	assert.Contains(t, err.Error(), "served 1337")
	err = wrong.Verify(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "expected chain id 1,")
	assert.Contains(t, err.Error(), "served 1337")
	assert.False(t, wrong.Status().Verified)
}

func TestNoncesMoveAsTxsMine(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c := client(t)
	key, addr := funded(t)

	n, err := c.Nonces(ctx, addr)
	require.NoError(t, err)
	assert.Equal(t, Nonces{FinalizedBlock: n.FinalizedBlock}, *n, "a fresh account has used no nonce")

	earlyInEpoch(t)
	to := common.Address{0x01}
	tx0 := signTx(t, key, 0, &to, big.NewInt(1), 21_000, nil)
	tx2 := signTx(t, key, 2, &to, big.NewInt(1), 21_000, nil) // waits for nonce 1
	send(t, tx0)
	send(t, tx2)
	r := mined(t, tx0)

	n, err = c.Nonces(ctx, addr)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), n.Latest, "tx0 mined")
	assert.Equal(t, uint64(1), n.Pending, "nonce 2 is queued behind the gap, so pending stays 1")
	if r.BlockNumber.Uint64() > n.FinalizedBlock {
		assert.Equal(t, uint64(0), n.Finalized, "tx0's block %d is above finalized %d", r.BlockNumber, n.FinalizedBlock)
	}

	tx1 := signTx(t, key, 1, &to, big.NewInt(1), 21_000, nil)
	send(t, tx1)
	r2 := mined(t, tx2)
	_, err = node.WaitFinalized(ctx, r2.BlockNumber.Uint64())
	require.NoError(t, err)
	n, err = c.Nonces(ctx, addr)
	require.NoError(t, err)
	assert.Equal(t, uint64(3), n.Latest)
	assert.Equal(t, uint64(3), n.Pending)
	assert.Equal(t, uint64(3), n.Finalized)
	assert.GreaterOrEqual(t, n.FinalizedBlock, r2.BlockNumber.Uint64())
}

func TestReceiptFinal(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c := client(t)
	key, _ := funded(t)
	reverter := deploy(t, key, 0, revertRuntime)

	earlyInEpoch(t)
	to := common.Address{0x02}
	ok := signTx(t, key, 1, &to, big.NewInt(5), 21_000, nil)
	bad := signTx(t, key, 2, &reverter, nil, 100_000, []byte{0x12, 0x34})
	starved := signTx(t, key, 3, &reverter, nil, 21_005, nil)
	send(t, ok)
	send(t, bad)
	send(t, starved)
	okR, badR, starvedR := mined(t, ok), mined(t, bad), mined(t, starved)
	require.Equal(t, types.ReceiptStatusSuccessful, okR.Status)
	require.Equal(t, types.ReceiptStatusFailed, badR.Status)
	require.Equal(t, types.ReceiptStatusFailed, starvedR.Status)

	// Mined but not finalized: not final.
	_, err := c.ReceiptFinal(ctx, ok.Hash())
	if fin := finalized(t); badR.BlockNumber.Uint64() > fin {
		var nf *NotFinalError
		require.ErrorAs(t, err, &nf, "block %d above finalized %d", okR.BlockNumber, fin)
		assert.ErrorIs(t, err, ErrNotFinal)
		assert.Equal(t, NotFinalAbove, nf.Reason)
		assert.Equal(t, okR.BlockNumber.Uint64(), nf.BlockNumber)
	}

	_, err = node.WaitFinalized(ctx, max(badR.BlockNumber.Uint64(), starvedR.BlockNumber.Uint64()))
	require.NoError(t, err)

	got, err := c.ReceiptFinal(ctx, ok.Hash())
	require.NoError(t, err)
	assert.True(t, got.Succeeded())
	assert.Equal(t, ok.Hash(), got.TxHash)
	assert.Equal(t, okR.BlockNumber.Uint64(), got.BlockNumber)
	assert.Equal(t, okR.BlockHash, got.BlockHash)
	assert.Equal(t, uint64(21_000), got.GasUsed, "a plain transfer costs 21000 gas")
	assert.Equal(t, okR.EffectiveGasPrice.String(), got.EffectiveGasPrice.String())
	assert.Nil(t, got.Revert)
	canon, err := node.Client().HeaderByNumber(ctx, okR.BlockNumber)
	require.NoError(t, err)
	assert.Equal(t, canon.Hash(), got.BlockHash)

	got, err = c.ReceiptFinal(ctx, bad.Hash())
	require.NoError(t, err)
	assert.False(t, got.Succeeded())
	assert.Equal(t, uint64(0), got.Status)
	assert.Equal(t, badR.GasUsed, got.GasUsed)
	assert.Empty(t, got.Logs)
	require.NotNil(t, got.Revert)
	assert.True(t, got.Revert.Replayed)
	assert.Equal(t, "nope", got.Revert.Reason)
	assert.Equal(t, "execution reverted: nope", got.Revert.Error())

	// Out of gas: the call halts with gas left for two instructions of the contract, and the
	// transaction uses its whole limit (the intrinsic 21000 and 5). A replay with that limit would
	// halt the same, which the node answers with an error, not a revert.
	got, err = c.ReceiptFinal(ctx, starved.Hash())
	require.NoError(t, err)
	assert.False(t, got.Succeeded())
	assert.Equal(t, uint64(21_005), got.GasUsed)
	require.NotNil(t, got.Revert)
	assert.Equal(t, uint64(21_005), got.Revert.OutOfGas)
	assert.Equal(t, "execution ran out of gas: the transaction used its whole gas limit of 21005 (or met an invalid instruction)", got.Revert.Summary())

	// A hash the chain never saw has no receipt.
	_, err = c.ReceiptFinal(ctx, common.Hash{0xab})
	var nf *NotFinalError
	require.ErrorAs(t, err, &nf)
	assert.Equal(t, NotFinalNoReceipt, nf.Reason)
}

func TestNonceConsumedBy(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c := client(t)
	key, addr := funded(t)

	to := common.Address{0x03}
	other := signTx(t, key, 0, &to, big.NewInt(7), 21_000, nil)
	mine := signTx(t, key, 0, &to, big.NewInt(8), 21_000, nil) // same nonce, never lands
	require.NotEqual(t, other.Hash(), mine.Hash())

	st, err := c.NonceConsumedBy(ctx, addr, 0, mine.Hash())
	require.NoError(t, err)
	assert.Equal(t, NonceNotConsumed, st.Use, "nothing sent yet")

	earlyInEpoch(t)
	send(t, other)
	r := mined(t, other)
	if fin := finalized(t); r.BlockNumber.Uint64() > fin {
		st, err = c.NonceConsumedBy(ctx, addr, 0, mine.Hash())
		require.NoError(t, err)
		if st.FinalizedBlock < r.BlockNumber.Uint64() {
			assert.Equal(t, NonceNotConsumed, st.Use, "mined at %d but finalized only %d: not judged yet", r.BlockNumber, st.FinalizedBlock)
		}
	}
	_, err = node.WaitFinalized(ctx, r.BlockNumber.Uint64())
	require.NoError(t, err)

	st, err = c.NonceConsumedBy(ctx, addr, 0, mine.Hash())
	require.NoError(t, err)
	assert.Equal(t, NonceConsumedByOther, st.Use)
	assert.Equal(t, other.Hash(), st.Other, "the transaction that took the nonce is named")
	assert.Equal(t, uint64(1), st.FinalizedNonce)

	st, err = c.NonceConsumedBy(ctx, addr, 0, other.Hash())
	require.NoError(t, err)
	assert.Equal(t, NonceConsumedByTx, st.Use)
	require.NotNil(t, st.Receipt)
	assert.Equal(t, r.BlockHash, st.Receipt.BlockHash)

	st, err = c.NonceConsumedBy(ctx, addr, 1, other.Hash())
	assert.ErrorIs(t, err, ErrWrongTransaction, "other is nonce 0, not 1: asking so is refused, got %+v", st)
	_, err = c.NonceConsumedBy(ctx, node.DevAddress(), 0, other.Hash())
	assert.ErrorIs(t, err, ErrWrongTransaction, "other is not the developer account's")
}

func TestTransactionLookup(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c := client(t)
	key, addr := funded(t)

	l, err := c.Transaction(ctx, common.Hash{0xcd})
	require.NoError(t, err)
	assert.Equal(t, TxAbsent, l.State)
	assert.Nil(t, l.Tx)

	to := common.Address{0x04}
	gapped := signTx(t, key, 1, &to, big.NewInt(1), 21_000, nil) // waits for nonce 0 in the pool
	send(t, gapped)
	l, err = c.Transaction(ctx, gapped.Hash())
	require.NoError(t, err)
	assert.Equal(t, TxPending, l.State)
	assert.Equal(t, addr, l.From)
	assert.Equal(t, gapped.Hash(), l.Tx.Hash())

	first := signTx(t, key, 0, &to, big.NewInt(1), 21_000, nil)
	send(t, first)
	r := mined(t, gapped)
	l, err = c.Transaction(ctx, gapped.Hash())
	require.NoError(t, err)
	assert.Equal(t, TxMined, l.State)
	assert.Equal(t, r.BlockNumber.Uint64(), l.BlockNumber)
	assert.Equal(t, r.BlockHash, l.BlockHash)
	assert.Equal(t, r.TransactionIndex, l.Index)
}

func TestCallsFeesAndEstimates(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c := client(t)
	key, addr := funded(t)
	answer := deploy(t, key, 0, answerRuntime)
	reverter := deploy(t, key, 1, revertRuntime)

	out, err := c.Call(ctx, nil, answer, answerABI, "answer")
	require.NoError(t, err)
	require.Len(t, out, 1)
	assert.Equal(t, "42", out[0].(*big.Int).String())
	out, err = c.Call(ctx, big.NewInt(int64(rpc.FinalizedBlockNumber)), answer, answerABI, "answer")
	if err == nil { // the contract may not be finalized yet; when it is, the read is the same
		assert.Equal(t, "42", out[0].(*big.Int).String())
	}

	_, err = c.Call(ctx, nil, reverter, answerABI, "answer")
	var rev *RevertError
	require.ErrorAs(t, err, &rev)
	assert.Equal(t, "nope", rev.Reason)
	assert.False(t, IsTransient(err), "a revert reverts again")

	_, err = c.Call(ctx, nil, common.Address{0x05}, answerABI, "answer")
	assert.ErrorContains(t, err, "no contract at", "no code answers no data")

	gas, err := c.EstimateGas(ctx, ethereum.CallMsg{From: addr, To: &common.Address{0x06}, Value: big.NewInt(1)})
	require.NoError(t, err)
	assert.Equal(t, uint64(21_000), gas)
	_, err = c.EstimateGas(ctx, ethereum.CallMsg{From: addr, To: &reverter})
	require.ErrorAs(t, err, &rev)
	assert.Equal(t, "nope", rev.Reason)

	fees, err := c.Fees(ctx)
	require.NoError(t, err)
	head, err := node.Client().HeaderByNumber(ctx, new(big.Int).SetUint64(fees.Block))
	require.NoError(t, err)
	assert.Equal(t, head.BaseFee.String(), fees.BaseFee.String())
	var tip hexutil.Big
	require.NoError(t, node.Client().Client().CallContext(ctx, &tip, "eth_maxPriorityFeePerGas"))
	assert.Equal(t, tip.ToInt().String(), fees.Tip.String())
}

// TestSendRawTransaction sends signed bytes through a proven Network: the node mines exactly
// them; the same bytes again are refused by the node in its own words (a JSON-RPC error); a
// Network whose RPC serves another chain sends nothing.
func TestSendRawTransaction(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	key, addr := funded(t)
	n := NewNetwork("dev", gethdev.ChainID, client(t), NetworkOptions{})
	to := common.HexToAddress("0x00000000000000000000000000000000000000e1")
	tx := signTx(t, key, 0, &to, big.NewInt(7), 21_000, nil)
	raw, err := tx.MarshalBinary()
	require.NoError(t, err)

	// geth's pool may not have seen the funding block yet: "insufficient funds" until it has.
	for {
		err = n.SendRawTransaction(ctx, raw)
		if err == nil || !strings.Contains(err.Error(), "insufficient funds") || ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, err)
	r := mined(t, tx)
	assert.Equal(t, types.ReceiptStatusSuccessful, r.Status)
	got, err := node.Client().BalanceAt(ctx, to, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(7), got.Int64(), "the recipient holds what the bytes sent")
	nonce, err := node.Client().NonceAt(ctx, addr, nil)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), nonce)

	err = n.SendRawTransaction(ctx, raw)
	require.Error(t, err, "the node has these bytes already")
	var re *RPCError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "eth_sendRawTransaction", re.Method)
	var rpcErr rpc.Error
	require.ErrorAs(t, err, &rpcErr, "a refusal is the node's JSON-RPC answer")
	assert.Regexp(t, "already known|nonce too low", rpcErr.Error())
	assert.True(t, n.Status().Verified, "a refusal does not withdraw the proof")

	other := signTx(t, key, 1, &to, big.NewInt(7), 21_000, nil)
	otherRaw, err := other.MarshalBinary()
	require.NoError(t, err)
	wrong := NewNetwork("mainnet", 1, client(t), NetworkOptions{})
	err = wrong.SendRawTransaction(ctx, otherRaw)
	require.ErrorIs(t, err, ErrNetworkUnverified)
	l, err := client(t).Transaction(ctx, other.Hash())
	require.NoError(t, err)
	assert.Equal(t, TxAbsent, l.State, "nothing was sent to an RPC serving another chain")
}

// revertWith returns a contract runtime that reverts every call with data: CODECOPY of the bytes
// following the 12-byte prologue to memory, then REVERT with them.
func revertWith(data []byte) []byte {
	l := byte(len(data))
	return append([]byte{0x60, l, 0x60, 0x0c, 0x60, 0x00, 0x39, 0x60, l, 0x60, 0x00, 0xfd}, data...)
}

// TestRealRevertsDecoded: contracts on the geth node revert with a custom error and with a panic;
// eth_call and the gas estimate return the data, and the RevertError names them.
func TestRealRevertsDecoded(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c := client(t)
	key, addr := funded(t)
	cases := []struct {
		data []byte
		want string
	}{
		{encodeError(t, "ERC20InsufficientAllowance(address,uint256,uint256)", []string{"address", "uint256", "uint256"}, holder, big.NewInt(3), big.NewInt(1000)),
			"ERC20InsufficientAllowance(spender=0x00000000000000000000000000000000000000A1, allowance=3, needed=1000)"},
		{encodeError(t, "Panic(uint256)", []string{"uint256"}, big.NewInt(0x11)), "panic 0x11: arithmetic overflow or underflow"},
	}
	for i, tc := range cases {
		contract := deploy(t, key, uint64(i), revertWith(tc.data))
		_, err := c.Call(ctx, nil, contract, answerABI, "answer")
		var rev *RevertError
		require.ErrorAs(t, err, &rev)
		assert.Equal(t, tc.want, rev.Reason)
		assert.Equal(t, tc.want+" (execution reverted)", rev.Summary())
		_, err = c.EstimateGas(ctx, ethereum.CallMsg{From: addr, To: &contract})
		require.ErrorAs(t, err, &rev)
		assert.Equal(t, tc.want, rev.Reason)
	}
}

// A full node serves the state of its last 128 blocks only. On a chain longer than twice that,
// the transaction that took a nonce is still named: the search walks down from the finalized
// block instead of bisecting from genesis, whose state is gone. And a transaction that reverted
// in a block whose state is gone has its final receipt all the same: the reason, which a replay
// of its call would find, is unknown, and the receipt says what the node answered the replay.
func TestPrunedStateNeitherHidesANonceUserNorHoldsBackAFailedReceipt(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	long, err := gethdev.Start(ctx, gethdev.Options{Period: gethdev.MinPeriod, IdlePeriod: gethdev.MinPeriod})
	require.NoError(t, err)
	t.Cleanup(func() { _ = long.Close() })
	c, err := Dial(ctx, long.RPCURL())
	require.NoError(t, err)
	t.Cleanup(c.Close)

	key, addr := long.DevKey(), long.DevAddress()
	nonce, err := long.Client().PendingNonceAt(ctx, addr)
	require.NoError(t, err)
	reverter := crypto.CreateAddress(addr, nonce)
	deployed := signTx(t, key, nonce, nil, nil, 200_000, initCode(revertRuntime))
	bad := signTx(t, key, nonce+1, &reverter, nil, 100_000, []byte{0x12, 0x34})
	for _, tx := range []*types.Transaction{deployed, bad} {
		require.NoError(t, long.Client().SendTransaction(ctx, tx))
	}
	badR, err := long.WaitMined(ctx, bad.Hash())
	require.NoError(t, err)
	require.Equal(t, types.ReceiptStatusFailed, badR.Status)
	nonce += 2
	to := common.Address{0x05}
	other := signTx(t, key, nonce, &to, big.NewInt(7), 21_000, nil)
	mine := signTx(t, key, nonce, &to, big.NewInt(8), 21_000, nil) // same nonce, never lands

	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		head, err := long.Client().BlockNumber(ctx)
		assert.NoError(ct, err)
		assert.GreaterOrEqual(ct, head, uint64(400))
	}, 2*time.Minute, 50*time.Millisecond, "the chain grows past twice the state a full node keeps")
	_, err = long.Client().NonceAt(ctx, addr, big.NewInt(1))
	require.Error(t, err, "the node no longer serves the state of block 1")

	require.NoError(t, long.Client().SendTransaction(ctx, other))
	r, err := long.WaitMined(ctx, other.Hash())
	require.NoError(t, err)
	_, err = long.WaitFinalized(ctx, r.BlockNumber.Uint64())
	require.NoError(t, err)

	st, err := c.NonceConsumedBy(ctx, addr, nonce, mine.Hash())
	require.NoError(t, err)
	assert.Equal(t, NonceConsumedByOther, st.Use)
	assert.Equal(t, other.Hash(), st.Other, "the transaction that took the nonce is named")

	_, err = long.Client().NonceAt(ctx, addr, badR.BlockNumber)
	require.Error(t, err, "the node no longer serves the state of the block the revert is in")
	got, err := c.ReceiptFinal(ctx, bad.Hash())
	require.NoError(t, err, "the receipt is the chain's final word, whatever a replay can find")
	assert.False(t, got.Succeeded())
	require.NotNil(t, got.Revert)
	assert.False(t, got.Revert.Replayed)
	assert.Zero(t, got.Revert.OutOfGas, "it reverted with gas left")
	assert.Contains(t, got.Revert.Unreplayed, "state", "geth names the state it no longer holds")
	assert.Equal(t, `execution reverted (reason unknown: a replay of the call was answered "`+got.Revert.Unreplayed+`")`, got.Revert.Error())
}
