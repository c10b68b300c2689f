package evm

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// readsJSON is the read side of the POL token (ERC-20), Polygon's ValidatorShare and its
// StakeManager that the activities call, and the event that names an unbond, as a JSON ABI. The
// calls that move funds are signer/evm's (ABIJSON). Sources: the functions as the ABIs of npm
// @maticnetwork/meta@2.4.59 (network/mainnet/v1/artifacts/plasma/{ERC20,ValidatorShare,
// StakeManager}.json) give them; ShareBurnedWithId, which that package lacks, as
// 0xPolygon/pos-contracts@ff11f0e08a43a207a3e7bcb7430771ba95d292ec contracts/staking/EventsHub.sol
// declares it. TestReadsMatchPublishedABIs holds each to its source.
const readsJSON = `[
{"type":"function","name":"balanceOf","stateMutability":"view",
 "inputs":[{"name":"account","type":"address"}],"outputs":[{"name":"","type":"uint256"}]},
{"type":"function","name":"allowance","stateMutability":"view",
 "inputs":[{"name":"owner","type":"address"},{"name":"spender","type":"address"}],"outputs":[{"name":"","type":"uint256"}]},
{"type":"function","name":"exchangeRate","stateMutability":"view",
 "inputs":[],"outputs":[{"name":"","type":"uint256"}]},
{"type":"function","name":"withdrawExchangeRate","stateMutability":"view",
 "inputs":[],"outputs":[{"name":"","type":"uint256"}]},
{"type":"function","name":"getLiquidRewards","stateMutability":"view",
 "inputs":[{"name":"user","type":"address"}],"outputs":[{"name":"","type":"uint256"}]},
{"type":"function","name":"unbondNonces","stateMutability":"view",
 "inputs":[{"name":"","type":"address"}],"outputs":[{"name":"","type":"uint256"}]},
{"type":"function","name":"unbonds_new","stateMutability":"view",
 "inputs":[{"name":"","type":"address"},{"name":"","type":"uint256"}],
 "outputs":[{"name":"shares","type":"uint256"},{"name":"withdrawEpoch","type":"uint256"}]},
{"type":"function","name":"validatorId","stateMutability":"view",
 "inputs":[],"outputs":[{"name":"","type":"uint256"}]},
{"type":"function","name":"epoch","stateMutability":"view",
 "inputs":[],"outputs":[{"name":"","type":"uint256"}]},
{"type":"function","name":"withdrawalDelay","stateMutability":"view",
 "inputs":[],"outputs":[{"name":"","type":"uint256"}]},
{"type":"event","name":"ShareBurnedWithId","anonymous":false,"inputs":[
 {"name":"validatorId","type":"uint256","indexed":true},{"name":"user","type":"address","indexed":true},
 {"name":"amount","type":"uint256","indexed":true},{"name":"tokens","type":"uint256","indexed":false},
 {"name":"nonce","type":"uint256","indexed":false}]}
]`

var readsABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(readsJSON))
	if err != nil {
		panic("activities/evm: readsJSON does not parse: " + err.Error())
	}
	return a
}()

// Polygon's exchange-rate precisions, as ValidatorShare._getRatePrecision chooses them: the
// "foundation" validators, ids below 8, keep the old precision of 100; every other validator uses
// 10**29. Source: 0xPolygon/pos-contracts@ff11f0e08a43a207a3e7bcb7430771ba95d292ec
// contracts/staking/validatorShare/ValidatorShare.sol (its two private precision constants, 100
// and 10 ** 29, and _getRatePrecision: validatorId < 8). The contract exposes neither: there is
// nothing to read.
var (
	exchangeRatePrecision     = big.NewInt(100)
	exchangeRateHighPrecision = new(big.Int).Exp(big.NewInt(10), big.NewInt(29), nil)
)

// foundationValidators: validator ids below this one use exchangeRatePrecision.
const foundationValidators = 8

// RatePrecision is the exchange-rate precision of validator id's ValidatorShare
// (ValidatorShare._getRatePrecision).
func RatePrecision(id uint64) *big.Int {
	if id < foundationValidators {
		return new(big.Int).Set(exchangeRatePrecision)
	}
	return new(big.Int).Set(exchangeRateHighPrecision)
}

// reader makes contract reads at one block.
type reader struct {
	chain Chain
	block *big.Int
}

func (r reader) uint(ctx context.Context, to common.Address, method string, args ...any) (*big.Int, error) {
	vals, err := r.chain.Call(ctx, r.block, to, &readsABI, method, args...)
	if err != nil {
		return nil, chainErr(fmt.Sprintf("reading %s of %s", method, to.Hex()), err)
	}
	v, ok := vals[0].(*big.Int)
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s of %s is not a uint256", method, to.Hex()), activities.ErrChainRejected, nil)
	}
	return v, nil
}

func (r reader) uint64(ctx context.Context, to common.Address, method string, args ...any) (uint64, error) {
	v, err := r.uint(ctx, to, method, args...)
	if err != nil {
		return 0, err
	}
	if !v.IsUint64() {
		return 0, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s of %s is %s, beyond 64 bits", method, to.Hex(), v), activities.ErrChainRejected, nil)
	}
	return v.Uint64(), nil
}

// validatorID is the share's validatorId(); when the policy's allow-list names the share, the
// two must agree (a share answering another id is not the contract the operator listed).
func (r reader) validatorID(ctx context.Context, share common.Address, p signerevm.Policy) (uint64, error) {
	id, err := r.uint64(ctx, share, "validatorId")
	if err != nil {
		return 0, err
	}
	for _, v := range p.ValidatorShares {
		if v.Address == share && v.ValidatorID != id {
			return 0, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("validator share %s answers validatorId %d, but --polygon-validator-shares lists it as validator %d", share.Hex(), id, v.ValidatorID),
				activities.ErrChainRejected, nil)
		}
	}
	return id, nil
}

// precision is the share's exchange-rate precision by Polygon's rule on its validator id.
func (r reader) precision(ctx context.Context, share common.Address, p signerevm.Policy) (*big.Int, error) {
	id, err := r.validatorID(ctx, share, p)
	if err != nil {
		return nil, err
	}
	return RatePrecision(id), nil
}

// ExpectedShares is what amount buys (buyVoucherPOL) or burns (sellVoucher_newPOL) at rate, as
// the ValidatorShare computes it: amount × precision / rate, rounded down.
func ExpectedShares(amount, rate, precision *big.Int) *big.Int {
	if rate.Sign() == 0 {
		return new(big.Int)
	}
	v := new(big.Int).Mul(amount, precision)
	return v.Div(v, rate)
}

// EVMReadDelegation reads a staker's position with one validator at one block (the head).
func (a *Activities) EVMReadDelegation(ctx context.Context, in DelegationInput) (Delegation, error) {
	n, err := a.network(in.Network)
	if err != nil {
		return Delegation{}, err
	}
	staker, err := address("staker", in.Staker)
	if err != nil {
		return Delegation{}, err
	}
	share, err := address("validator share", in.ValidatorShare)
	if err != nil {
		return Delegation{}, err
	}
	var amount *big.Int
	if in.Amount != "" {
		if amount, err = weiAmount("amount", in.Amount); err != nil {
			return Delegation{}, err
		}
	}
	p := n.Signer.Policy()
	head, err := n.Chain.LatestHeader(ctx)
	if err != nil {
		return Delegation{}, chainErr("latest block", err)
	}
	r := reader{chain: n.Chain, block: head.Number}
	d := Delegation{Block: head.Number.Uint64()}
	balance, err := r.uint(ctx, p.POLToken, "balanceOf", staker)
	if err != nil {
		return Delegation{}, err
	}
	allowance, err := r.uint(ctx, p.POLToken, "allowance", staker, p.StakeManager)
	if err != nil {
		return Delegation{}, err
	}
	shares, err := r.uint(ctx, share, "balanceOf", staker)
	if err != nil {
		return Delegation{}, err
	}
	rate, err := r.uint(ctx, share, "exchangeRate")
	if err != nil {
		return Delegation{}, err
	}
	precision, err := r.precision(ctx, share, p)
	if err != nil {
		return Delegation{}, err
	}
	rewards, err := r.uint(ctx, share, "getLiquidRewards", staker)
	if err != nil {
		return Delegation{}, err
	}
	if d.Epoch, err = r.uint64(ctx, p.StakeManager, "epoch"); err != nil {
		return Delegation{}, err
	}
	if d.WithdrawalDelay, err = r.uint64(ctx, p.StakeManager, "withdrawalDelay"); err != nil {
		return Delegation{}, err
	}
	if rate.Sign() == 0 {
		return Delegation{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("validator share %s reports an exchange rate of 0 at block %d", share.Hex(), d.Block), activities.ErrChainRejected, nil)
	}
	staked := new(big.Int).Mul(shares, rate)
	staked.Div(staked, precision)
	d.Balance, d.Allowance, d.Shares, d.Staked, d.LiquidRewards = balance.String(), allowance.String(), shares.String(), staked.String(), rewards.String()
	if amount != nil {
		d.ExpectedShares = ExpectedShares(amount, rate, precision).String()
	}
	return d, nil
}

// EVMReadUnbond reads an unbond, found from the unstake's finalized receipt (the
// ShareBurnedWithId event naming the staker and the share's validator, which Polygon's EventsHub
// emits) or by its nonce.
func (a *Activities) EVMReadUnbond(ctx context.Context, in UnbondInput) (Unbond, error) {
	n, err := a.network(in.Network)
	if err != nil {
		return Unbond{}, err
	}
	staker, err := address("staker", in.Staker)
	if err != nil {
		return Unbond{}, err
	}
	share, err := address("validator share", in.ValidatorShare)
	if err != nil {
		return Unbond{}, err
	}
	if in.TxID == "" && in.Nonce == 0 {
		return Unbond{}, invalid("the unbond is named neither by its unstake transaction nor by its nonce")
	}
	head, err := n.Chain.LatestHeader(ctx)
	if err != nil {
		return Unbond{}, chainErr("latest block", err)
	}
	r := reader{chain: n.Chain, block: head.Number}
	p := n.Signer.Policy()
	id, err := r.validatorID(ctx, share, p)
	if err != nil {
		return Unbond{}, err
	}
	nonce := in.Nonce
	if in.TxID != "" {
		if nonce, err = unbondNonceOf(ctx, n, in.TxID, staker, share, id); err != nil {
			return Unbond{}, err
		}
	}
	vals, err := n.Chain.Call(ctx, r.block, share, &readsABI, "unbonds_new", staker, new(big.Int).SetUint64(nonce))
	if err != nil {
		return Unbond{}, chainErr(fmt.Sprintf("reading unbond %d of %s on %s", nonce, staker.Hex(), share.Hex()), err)
	}
	shares, _ := vals[0].(*big.Int)
	withdrawEpoch, _ := vals[1].(*big.Int)
	if shares == nil || withdrawEpoch == nil || !withdrawEpoch.IsUint64() {
		return Unbond{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("unbond %d of %s on %s does not decode", nonce, staker.Hex(), share.Hex()), activities.ErrChainRejected, nil)
	}
	wrate, err := r.uint(ctx, share, "withdrawExchangeRate")
	if err != nil {
		return Unbond{}, err
	}
	precision := RatePrecision(id)
	u := Unbond{Nonce: nonce, Shares: shares.String(), WithdrawEpoch: withdrawEpoch.Uint64(), RecheckAfter: a.EpochRecheck}
	amount := new(big.Int).Mul(wrate, shares)
	u.Amount = amount.Div(amount, precision).String()
	if u.Epoch, err = r.uint64(ctx, p.StakeManager, "epoch"); err != nil {
		return Unbond{}, err
	}
	if u.WithdrawalDelay, err = r.uint64(ctx, p.StakeManager, "withdrawalDelay"); err != nil {
		return Unbond{}, err
	}
	return u, nil
}

// unbondNonceOf reads the unbond nonce from the ShareBurnedWithId event of a finalized unstake.
// On Polygon the ValidatorShare does not emit it: it asks the EventsHub to
// (ValidatorShare._sellVoucher_new calls EventsHub.logShareBurnedWithId), so the log's address is
// the network's EventsHub (proxy) and its first topic the share's validator id.
func unbondNonceOf(ctx context.Context, n Network, txID string, staker, share common.Address, validatorID uint64) (uint64, error) {
	if n.EventsHub == (common.Address{}) {
		return 0, temporal.NewNonRetryableApplicationError(
			"no EventsHub is configured for this network (--polygon-events-hub): the unbond's ShareBurnedWithId event cannot be read",
			activities.ErrInvalidInput, nil)
	}
	h, err := hash(txID)
	if err != nil {
		return 0, err
	}
	rcpt, err := n.Chain.ReceiptFinal(ctx, h)
	if err != nil {
		// The workflow asks only once the unstake is final: a receipt not final (yet, or any
		// more after a reorg) is a read to make again.
		return 0, chainErr("final receipt of unstake "+h.Hex(), err)
	}
	if !rcpt.Succeeded() {
		return 0, temporal.NewNonRetryableApplicationError(fmt.Sprintf("unstake %s reverted: it made no unbond", h.Hex()), activities.ErrStakeAccountState, nil)
	}
	ev := readsABI.Events["ShareBurnedWithId"]
	idTopic := common.BigToHash(new(big.Int).SetUint64(validatorID))
	for _, l := range rcpt.Logs {
		if l.Address != n.EventsHub || len(l.Topics) != 4 || l.Topics[0] != ev.ID || l.Topics[1] != idTopic ||
			common.BytesToAddress(l.Topics[2].Bytes()) != staker {
			continue
		}
		vals, err := ev.Inputs.NonIndexed().Unpack(l.Data)
		if err != nil {
			return 0, temporal.NewNonRetryableApplicationError(fmt.Sprintf("ShareBurnedWithId in %s does not decode: %v", h.Hex(), err), activities.ErrChainRejected, nil)
		}
		nonce, _ := vals[1].(*big.Int)
		if nonce == nil || !nonce.IsUint64() || nonce.Sign() == 0 {
			return 0, temporal.NewNonRetryableApplicationError(fmt.Sprintf("ShareBurnedWithId in %s names unbond nonce %v", h.Hex(), vals[1]), activities.ErrChainRejected, nil)
		}
		return nonce.Uint64(), nil
	}
	return 0, temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("unstake %s has no ShareBurnedWithId event from EventsHub %s for %s and validator %d (share %s)",
			h.Hex(), n.EventsHub.Hex(), staker.Hex(), validatorID, share.Hex()),
		activities.ErrStakeAccountState, nil)
}
