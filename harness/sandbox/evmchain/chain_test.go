//go:build integration

package evmchain

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/gethdev"
)

// startChain starts a geth --dev node for the test and returns it with a funded staker key.
func startChain(t *testing.T, ctx context.Context) (*gethdev.Node, *ecdsa.PrivateKey) {
	t.Helper()
	node, err := gethdev.Start(ctx, gethdev.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = node.Close() })
	staker, err := crypto.GenerateKey()
	require.NoError(t, err)
	_, err = node.Fund(ctx, crypto.PubkeyToAddress(staker.PublicKey), new(big.Int).Mul(big.NewInt(10), POL))
	require.NoError(t, err)
	return node, staker
}

func pol(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), POL) }

// TestDelegationLifecycleOnChain runs every delegator call against a real geth --dev chain and
// reads the outcome back from the chain: delegate (approve + buyVoucherPOL), rewards per
// checkpoint, withdrawRewardsPOL, restakePOL, unstake (sellVoucher_newPOL, the nonce from the
// receipt), claim refused before the withdrawal delay with Polygon's reason and paid after.
func TestDelegationLifecycleOnChain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	node, stakerKey := startChain(t, ctx)
	staker := crypto.PubkeyToAddress(stakerKey.PublicKey)

	d, err := Deploy(ctx, node.RPCURL(), node.DevKey(), WithStaker(staker, pol(1000)), WithWithdrawalDelay(3))
	require.NoError(t, err)
	defer d.Close()

	assert.EqualValues(t, gethdev.ChainID, d.ChainID.Int64())
	require.Len(t, d.Validators, 2)
	assert.Equal(t, []uint64{1, 8}, []uint64{d.Validators[0].ID, d.Validators[1].ID})
	assert.NotEqual(t, d.Validators[0].Share, d.Validators[1].Share)
	for _, a := range []common.Address{d.Token, d.StakeManager, d.StakingInfo, d.EventsHub, d.Validators[0].Share, d.Validators[1].Share} {
		code, err := d.Client().CodeAt(ctx, a, nil)
		require.NoError(t, err)
		assert.NotEmpty(t, code, "no code at %s", a.Hex())
	}
	share, other := d.Validators[0].Share, d.Validators[1].Share
	expectPOL := func(who common.Address, want *big.Int, what string) {
		t.Helper()
		got, err := d.TokenBalance(ctx, who)
		require.NoError(t, err)
		assert.Equal(t, want.String(), got.String(), what)
	}
	expectBig := func(got *big.Int, err error) func(want *big.Int, what string) {
		return func(want *big.Int, what string) {
			t.Helper()
			require.NoError(t, err, what)
			assert.Equal(t, want.String(), got.String(), what)
		}
	}
	call := func(to common.Address, contract, method string, args ...any) *types.Receipt {
		t.Helper()
		data, err := d.Pack(contract, method, args...)
		require.NoError(t, err)
		rcpt, err := d.Send(ctx, stakerKey, to, data)
		require.NoError(t, err, method)
		return rcpt
	}
	reverts := func(to common.Address, reason, method string, args ...any) {
		t.Helper()
		data, err := d.Pack(ContractValidatorShare, method, args...)
		require.NoError(t, err)
		_, err = d.SignTx(ctx, stakerKey, to, data)
		require.Error(t, err, "%s should revert", method)
		assert.Contains(t, err.Error(), "execution reverted: "+reason, method)
	}

	expectPOL(staker, pol(1000), "staker's POL after deploy")
	expectPOL(d.StakeManager, DefaultRewardReserve, "reward reserve")
	epoch, err := d.Epoch(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 1, epoch)
	delay, err := d.WithdrawalDelay(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 3, delay)

	// Delegating without approval: the StakeManager's transferFrom is refused.
	reverts(share, "ERC20: insufficient allowance", "buyVoucherPOL", pol(100), pol(100))
	// Delegate 100 POL: approve the StakeManager, then buy vouchers.
	call(d.Token, ContractToken, "approve", d.StakeManager, pol(100))
	expectBig(d.Allowance(ctx, staker, d.StakeManager))(pol(100), "allowance after approve")
	reverts(share, "Too much slippage", "buyVoucherPOL", pol(100), new(big.Int).Add(pol(100), big.NewInt(1)))
	rcpt := call(share, ContractValidatorShare, "buyVoucherPOL", pol(100), pol(100))
	minted, err := d.ParseShareMinted(rcpt, share)
	require.NoError(t, err)
	assert.Equal(t, ShareMinted{ValidatorID: 1, User: staker, Amount: pol(100), Tokens: pol(100)}, minted)
	expectPOL(staker, pol(900), "staker's POL after delegating")
	expectPOL(d.StakeManager, new(big.Int).Add(DefaultRewardReserve, pol(100)), "StakeManager holds the delegation")
	expectBig(d.Allowance(ctx, staker, d.StakeManager))(big.NewInt(0), "allowance after delegating")
	expectBig(d.Shares(ctx, share, staker))(pol(100), "shares")
	expectBig(d.Shares(ctx, other, staker))(big.NewInt(0), "shares at the other validator")
	expectBig(d.DelegatedAmount(ctx, 1))(pol(100), "delegated to validator 1")
	amount, rate, err := d.TotalStake(ctx, share, staker)
	require.NoError(t, err)
	assert.Equal(t, pol(100).String(), amount.String())
	assert.Equal(t, "100", rate.String(), "validator 1's exchange rate at Polygon's old precision, 100")
	onlyTransfers(t, rcpt, share)

	// Two checkpoints of 10 POL each, all to the only delegator of validator 1.
	require.NoError(t, d.AdvanceEpochs(ctx, 2))
	epoch, err = d.Epoch(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 3, epoch)
	expectBig(d.LiquidRewards(ctx, share, staker))(pol(20), "rewards after two checkpoints")
	call(share, ContractValidatorShare, "withdrawRewardsPOL")
	expectPOL(staker, pol(920), "staker's POL after withdrawing rewards")
	expectBig(d.LiquidRewards(ctx, share, staker))(big.NewInt(0), "rewards after withdrawing them")
	// With no rewards, withdrawRewardsPOL and restakePOL pay and mint nothing (Polygon's do not
	// revert either).
	call(share, ContractValidatorShare, "withdrawRewardsPOL")
	call(share, ContractValidatorShare, "restakePOL")
	expectPOL(staker, pol(920), "staker's POL after withdrawing no rewards")
	expectBig(d.Shares(ctx, share, staker))(pol(100), "shares after restaking no rewards")

	// Restake one checkpoint's rewards; restakePOL returns (amountRestaked, liquidReward).
	require.NoError(t, d.AdvanceEpochs(ctx, 1))
	data, err := d.Pack(ContractValidatorShare, "restakePOL")
	require.NoError(t, err)
	out, err := d.Client().CallContract(ctx, ethereum.CallMsg{From: staker, To: &share, Data: data}, nil)
	require.NoError(t, err)
	a, _ := Artifact(ContractValidatorShare)
	vals, err := a.ABI.Unpack("restakePOL", out)
	require.NoError(t, err)
	assert.Equal(t, []any{pol(10), pol(10)}, vals, "restakePOL's return")
	rcpt = call(share, ContractValidatorShare, "restakePOL")
	minted, err = d.ParseShareMinted(rcpt, share)
	require.NoError(t, err)
	assert.Equal(t, pol(10).String(), minted.Amount.String())
	expectBig(d.Shares(ctx, share, staker))(pol(110), "shares after restaking")
	expectPOL(staker, pol(920), "restaking pays nothing out")

	// Unstake 10 POL: the unbond nonce comes from the receipt, the unbond from the chain.
	reverts(other, "Too much requested", "sellVoucher_newPOL", pol(10), pol(10))
	reverts(share, "too much slippage", "sellVoucher_newPOL", pol(10), new(big.Int).Sub(pol(10), big.NewInt(1)))
	rcpt = call(share, ContractValidatorShare, "sellVoucher_newPOL", pol(10), pol(10))
	burned, err := d.ParseShareBurned(rcpt, share)
	require.NoError(t, err)
	assert.Equal(t, ShareBurned{ValidatorID: 1, User: staker, Amount: pol(10), Tokens: pol(10), Nonce: 1}, burned)
	onlyTransfers(t, rcpt, share)
	nonce, err := d.UnbondNonce(ctx, share, staker)
	require.NoError(t, err)
	assert.EqualValues(t, 1, nonce)
	unbond, err := d.Unbond(ctx, share, staker, 1)
	require.NoError(t, err)
	assert.Equal(t, Unbond{Shares: pol(10), WithdrawEpoch: 4}, unbond)
	expectBig(d.Shares(ctx, share, staker))(pol(100), "shares after unstaking")
	expectBig(d.DelegatedAmount(ctx, 1))(pol(100), "delegated to validator 1 after unstaking")

	// Claim: refused until epoch() >= withdrawEpoch + withdrawalDelay (4 + 3).
	reverts(share, "Incomplete withdrawal period", "unstakeClaimTokens_newPOL", big.NewInt(1))
	require.NoError(t, d.AdvanceEpochs(ctx, 2)) // epoch 6
	reverts(share, "Incomplete withdrawal period", "unstakeClaimTokens_newPOL", big.NewInt(1))
	require.NoError(t, d.AdvanceEpochs(ctx, 1)) // epoch 7
	call(share, ContractValidatorShare, "unstakeClaimTokens_newPOL", big.NewInt(1))
	expectPOL(staker, pol(930), "staker's POL after claiming")
	unbond, err = d.Unbond(ctx, share, staker, 1)
	require.NoError(t, err)
	assert.Equal(t, "0", unbond.Shares.String(), "a claimed unbond is cleared")
	reverts(share, "Incomplete withdrawal period", "unstakeClaimTokens_newPOL", big.NewInt(1))

	// Three checkpoints on 100 shares while unbonding: 30 POL of rewards, paid out.
	expectBig(d.LiquidRewards(ctx, share, staker))(pol(30), "rewards accrued while unbonding")
	call(share, ContractValidatorShare, "withdrawRewardsPOL")
	expectPOL(staker, pol(960), "staker's POL at the end")
	// The StakeManager paid out 20 + 30 of rewards and the 10 claimed; the 10 restaked stayed.
	expectPOL(d.StakeManager, new(big.Int).Add(DefaultRewardReserve, pol(100-20-30-10)), "StakeManager's POL at the end")

	// Validator 8 uses Polygon's high precision, 10**29: 50 POL buy 50 POL of shares at a rate
	// of exactly 10**29, and 20 POL unbond burns 20 POL of them (shares = amount x precision / rate).
	highPrecision, _ := new(big.Int).SetString("100000000000000000000000000000", 10)
	call(d.Token, ContractToken, "approve", d.StakeManager, pol(50))
	rcpt = call(other, ContractValidatorShare, "buyVoucherPOL", pol(50), pol(50))
	minted, err = d.ParseShareMinted(rcpt, other)
	require.NoError(t, err)
	assert.Equal(t, ShareMinted{ValidatorID: 8, User: staker, Amount: pol(50), Tokens: pol(50)}, minted)
	onlyTransfers(t, rcpt, other)
	amount, rate, err = d.TotalStake(ctx, other, staker)
	require.NoError(t, err)
	assert.Equal(t, pol(50).String(), amount.String())
	assert.Equal(t, highPrecision.String(), rate.String(), "validator 8's exchange rate at Polygon's high precision")
	rcpt = call(other, ContractValidatorShare, "sellVoucher_newPOL", pol(20), pol(20))
	burned, err = d.ParseShareBurned(rcpt, other)
	require.NoError(t, err)
	assert.Equal(t, ShareBurned{ValidatorID: 8, User: staker, Amount: pol(20), Tokens: pol(20), Nonce: 1}, burned)
	expectBig(d.Shares(ctx, other, staker))(pol(30), "validator 8's shares after unstaking")
	wrate, err := d.callBig(ctx, ContractValidatorShare, other, "withdrawExchangeRate")
	require.NoError(t, err)
	assert.Equal(t, highPrecision.String(), wrate.String())
}

// onlyTransfers: the share itself emits nothing but ERC-20 Transfer; its delegation events come
// from the StakingInfo and the EventsHub, as on Polygon.
func onlyTransfers(t *testing.T, rcpt *types.Receipt, share common.Address) {
	t.Helper()
	transfer := crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	for _, l := range rcpt.Logs {
		if l.Address == share {
			assert.Equal(t, transfer, l.Topics[0], "the share emitted an event of its own (topic %s)", l.Topics[0].Hex())
		}
	}
}
