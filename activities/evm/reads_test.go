package evm

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/activities"
	evmchain "github.com/stakeflow/stakeflow/chain/evm"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

func bigs(vs ...int64) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = big.NewInt(v)
	}
	return out
}

// TestReadDelegation: each value from its contract read; Staked and ExpectedShares computed as the
// share computes them (here with Polygon's old precision of 100 for validator 3: rate 150 = 1.5).
func TestReadDelegation(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	h.chain.Head = 42
	h.chain.Calls = map[string][]any{
		polToken.Hex() + ".balanceOf": bigs(1000), "allowance": bigs(300),
		shareA.Hex() + ".balanceOf": bigs(400), "exchangeRate": bigs(150), "getLiquidRewards": bigs(7),
		"validatorId": bigs(3), "epoch": bigs(12), "withdrawalDelay": bigs(80),
	}
	h.chain.CallErrs = map[string]error{"EXCHANGE_RATE_PRECISION": &evmchain.RPCError{Method: "eth_call", Err: &evmchain.RevertError{Replayed: true}}}
	v, err := h.env.ExecuteActivity(h.a.EVMReadDelegation, DelegationInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), Amount: "100"})
	require.NoError(t, err)
	var d Delegation
	require.NoError(t, v.Get(&d))
	assert.Equal(t, Delegation{Block: 42, Balance: "1000", Allowance: "300", Shares: "400", Staked: "600", ExpectedShares: "66",
		LiquidRewards: "7", Epoch: 12, WithdrawalDelay: 80}, d)

	// A share that exposes its precision (the stand-in's 1e29) is taken at its word.
	p29 := new(big.Int).Exp(big.NewInt(10), big.NewInt(29), nil)
	h.chain.CallErrs = nil
	h.chain.Calls["EXCHANGE_RATE_PRECISION"] = []any{p29}
	h.chain.Calls["exchangeRate"] = []any{new(big.Int).Mul(big.NewInt(2), p29)}
	v, err = h.env.ExecuteActivity(h.a.EVMReadDelegation, DelegationInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), Amount: "101"})
	require.NoError(t, err)
	require.NoError(t, v.Get(&d))
	assert.Equal(t, "50", d.ExpectedShares)
	assert.Equal(t, "800", d.Staked)

	// A transient failure of the precision read is not taken for "no getter".
	h.chain.CallErrs = map[string]error{"EXCHANGE_RATE_PRECISION": &evmchain.RPCError{Method: "eth_call", Transient: true, Err: assert.AnError}}
	_, err = h.env.ExecuteActivity(h.a.EVMReadDelegation, DelegationInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), Amount: "101"})
	typ, nonRetryable := appErr(t, err)
	assert.Equal(t, activities.ErrChainUnavailable, typ)
	assert.False(t, nonRetryable)
}

func burnedLog(emitter, user common.Address, nonce int64) *types.Log {
	ev := readsABI.Events["ShareBurnedWithId"]
	data, err := ev.Inputs.NonIndexed().Pack(big.NewInt(55), big.NewInt(nonce))
	if err != nil {
		panic(err)
	}
	return &types.Log{Address: emitter, Topics: []common.Hash{ev.ID, common.BigToHash(big.NewInt(1)), common.BytesToHash(user.Bytes()), common.BigToHash(big.NewInt(99))}, Data: data}
}

// TestReadUnbond: the nonce comes from the unstake's ShareBurnedWithId naming the staker, emitted
// by the share (others' events and other emitters ignored); the amount is withdrawExchangeRate ×
// shares / precision.
func TestReadUnbond(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	stranger := common.HexToAddress("0x00000000000000000000000000000000000000e5")
	h.chain.Receipts = map[common.Hash]func() (*evmchain.Receipt, error){ourHash: func() (*evmchain.Receipt, error) {
		r := finalReceipt(ourHash, 1)
		r.Logs = []*types.Log{burnedLog(shareA, stranger, 9), burnedLog(shareOff, h.staker, 8), burnedLog(shareA, h.staker, 4)}
		return r, nil
	}}
	h.chain.Calls = map[string][]any{"unbonds_new": bigs(200, 10), "withdrawExchangeRate": bigs(110), "EXCHANGE_RATE_PRECISION": bigs(100),
		"epoch": bigs(12), "withdrawalDelay": bigs(80)}
	v, err := h.env.ExecuteActivity(h.a.EVMReadUnbond, UnbondInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), TxID: ourHash.Hex()})
	require.NoError(t, err)
	var u Unbond
	require.NoError(t, v.Get(&u))
	assert.Equal(t, Unbond{Nonce: 4, Shares: "200", Amount: "220", WithdrawEpoch: 10, Epoch: 12, WithdrawalDelay: 80}, u)
	assert.False(t, u.Claimable())

	h.chain.Receipts[ourHash] = func() (*evmchain.Receipt, error) {
		r := finalReceipt(ourHash, 1)
		r.Logs = []*types.Log{burnedLog(shareOff, h.staker, 8)}
		return r, nil
	}
	_, err = h.env.ExecuteActivity(h.a.EVMReadUnbond, UnbondInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), TxID: ourHash.Hex()})
	typ, nonRetryable := appErr(t, err)
	assert.Equal(t, activities.ErrStakeAccountState, typ)
	assert.True(t, nonRetryable)
	assert.Contains(t, err.Error(), "no ShareBurnedWithId")

	// On mainnet the EventsHub emits it.
	h.a.EventsHub = shareOff
	v, err = h.env.ExecuteActivity(h.a.EVMReadUnbond, UnbondInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), TxID: ourHash.Hex()})
	require.NoError(t, err)
	require.NoError(t, v.Get(&u))
	assert.EqualValues(t, 8, u.Nonce)
}
