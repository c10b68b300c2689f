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

// eventsHub is the EventsHub of the fake network.
var eventsHub = common.HexToAddress("0x00000000000000000000000000000000000000e7")

// TestReadDelegation: each value from its contract read; Staked and ExpectedShares computed as the
// share computes them, with the precision Polygon's rule gives the share's validator id: 100 for
// validator 1 (rate 150 = 1.5), 10**29 for validator 12.
func TestReadDelegation(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	h.chain.Head = 42
	h.chain.Calls = map[string][]any{
		polToken.Hex() + ".balanceOf": bigs(1000), "allowance": bigs(300),
		shareA.Hex() + ".balanceOf": bigs(400), "exchangeRate": bigs(150), "getLiquidRewards": bigs(7),
		"validatorId": bigs(1), "epoch": bigs(12), "withdrawalDelay": bigs(80),
	}
	v, err := h.env.ExecuteActivity(h.a.EVMReadDelegation, DelegationInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), Amount: "100"})
	require.NoError(t, err)
	var d Delegation
	require.NoError(t, v.Get(&d))
	// 400 shares x 150 / 100 = 600 staked; 100 x 100 / 150 = 66 shares.
	assert.Equal(t, Delegation{Block: 42, Balance: "1000", Allowance: "300", Shares: "400", Staked: "600", ExpectedShares: "66",
		LiquidRewards: "7", Epoch: 12, WithdrawalDelay: 80}, d)

	// Validator 12: precision 10**29; a rate of 2 x 10**29 (2 POL a share).
	h = newHarness(t, signerevm.Policy{ValidatorShares: []signerevm.ValidatorShare{{ValidatorID: 12, Address: shareA}}})
	rate, _ := new(big.Int).SetString("200000000000000000000000000000", 10)
	h.chain.Calls = map[string][]any{
		polToken.Hex() + ".balanceOf": bigs(1000), "allowance": bigs(300),
		shareA.Hex() + ".balanceOf": bigs(400), "exchangeRate": {rate}, "getLiquidRewards": bigs(7),
		"validatorId": bigs(12), "epoch": bigs(12), "withdrawalDelay": bigs(80),
	}
	v, err = h.env.ExecuteActivity(h.a.EVMReadDelegation, DelegationInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), Amount: "101"})
	require.NoError(t, err)
	require.NoError(t, v.Get(&d))
	assert.Equal(t, "50", d.ExpectedShares, "101 / 2, rounded down")
	assert.Equal(t, "800", d.Staked, "400 shares x 2")

	// A share answering another validator id than the allow-list's is refused.
	h.chain.Calls["validatorId"] = bigs(7)
	_, err = h.env.ExecuteActivity(h.a.EVMReadDelegation, DelegationInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), Amount: "101"})
	typ, nonRetryable := appErr(t, err)
	assert.Equal(t, activities.ErrChainRejected, typ)
	assert.True(t, nonRetryable)
	assert.Contains(t, err.Error(), "answers validatorId 7")

	// A transient failure of the validator id read is retried.
	h.chain.CallErrs = map[string]error{"validatorId": &evmchain.RPCError{Method: "eth_call", Transient: true, Err: assert.AnError}}
	_, err = h.env.ExecuteActivity(h.a.EVMReadDelegation, DelegationInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), Amount: "101"})
	typ, nonRetryable = appErr(t, err)
	assert.Equal(t, activities.ErrChainUnavailable, typ)
	assert.False(t, nonRetryable)
}

// TestRatePrecision: Polygon's rule (ValidatorShare._getRatePrecision at
// 0xPolygon/pos-contracts@ff11f0e08a43a207a3e7bcb7430771ba95d292ec): 100 below validator 8,
// 10**29 from 8 on.
func TestRatePrecision(t *testing.T) {
	high, _ := new(big.Int).SetString("100000000000000000000000000000", 10)
	for id, want := range map[uint64]*big.Int{0: big.NewInt(100), 1: big.NewInt(100), 7: big.NewInt(100), 8: high, 9: high, 1 << 40: high} {
		assert.Equal(t, want.String(), RatePrecision(id).String(), "validator %d", id)
	}
}

func burnedLog(emitter, user common.Address, validatorID, nonce int64) *types.Log {
	ev := readsABI.Events["ShareBurnedWithId"]
	data, err := ev.Inputs.NonIndexed().Pack(big.NewInt(55), big.NewInt(nonce))
	if err != nil {
		panic(err)
	}
	return &types.Log{Address: emitter, Topics: []common.Hash{ev.ID, common.BigToHash(big.NewInt(validatorID)), common.BytesToHash(user.Bytes()), common.BigToHash(big.NewInt(99))}, Data: data}
}

// TestReadUnbond: the nonce comes from the unstake's ShareBurnedWithId naming the staker and the
// share's validator, emitted by the network's EventsHub (as on Polygon: the share does not emit
// it); the same event from the share itself, for another validator or another user is ignored.
// The amount is withdrawExchangeRate x shares / precision (100 for validator 1).
func TestReadUnbond(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	n := h.a.Networks["dev"]
	n.EventsHub = eventsHub
	h.a.Networks["dev"] = n
	stranger := common.HexToAddress("0x00000000000000000000000000000000000000e5")
	logs := []*types.Log{burnedLog(eventsHub, stranger, 1, 9), burnedLog(shareA, h.staker, 1, 8), burnedLog(eventsHub, h.staker, 2, 7),
		burnedLog(eventsHub, h.staker, 1, 4)}
	h.chain.Receipts = map[common.Hash]func() (*evmchain.Receipt, error){ourHash: func() (*evmchain.Receipt, error) {
		r := finalReceipt(ourHash, 1)
		r.Logs = logs
		return r, nil
	}}
	h.chain.Calls = map[string][]any{"unbonds_new": bigs(200, 10), "withdrawExchangeRate": bigs(110), "validatorId": bigs(1),
		"epoch": bigs(12), "withdrawalDelay": bigs(80)}
	v, err := h.env.ExecuteActivity(h.a.EVMReadUnbond, UnbondInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), TxID: ourHash.Hex()})
	require.NoError(t, err)
	var u Unbond
	require.NoError(t, v.Get(&u))
	assert.Equal(t, Unbond{Nonce: 4, Shares: "200", Amount: "220", WithdrawEpoch: 10, Epoch: 12, WithdrawalDelay: 80}, u)
	assert.False(t, u.Claimable())

	// Only the share's own event, another validator's and another user's: no unbond.
	logs = logs[:3]
	_, err = h.env.ExecuteActivity(h.a.EVMReadUnbond, UnbondInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), TxID: ourHash.Hex()})
	typ, nonRetryable := appErr(t, err)
	assert.Equal(t, activities.ErrStakeAccountState, typ)
	assert.True(t, nonRetryable)
	assert.Contains(t, err.Error(), "no ShareBurnedWithId event from EventsHub "+eventsHub.Hex())

	// A network without an EventsHub cannot read an unbond from its unstake.
	n.EventsHub = common.Address{}
	h.a.Networks["dev"] = n
	_, err = h.env.ExecuteActivity(h.a.EVMReadUnbond, UnbondInput{Network: "dev", Staker: h.staker.Hex(), ValidatorShare: shareA.Hex(), TxID: ourHash.Hex()})
	typ, _ = appErr(t, err)
	assert.Equal(t, activities.ErrInvalidInput, typ)
	assert.Contains(t, err.Error(), "--polygon-events-hub")
}
