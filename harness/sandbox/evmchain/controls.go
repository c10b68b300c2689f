package evmchain

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// AdvanceEpochs moves the StakeManager's epoch n checkpoints on and pays each validator's
// delegators n checkpoint rewards, and waits until it is mined.
func (d *Deployment) AdvanceEpochs(ctx context.Context, n uint64) error {
	return d.ownerCall(ctx, ContractStakeManager, d.StakeManager, "advanceEpochs", new(big.Int).SetUint64(n))
}

// SetCheckpointReward sets the wei each validator's delegators share at every later checkpoint.
func (d *Deployment) SetCheckpointReward(ctx context.Context, wei *big.Int) error {
	return d.ownerCall(ctx, ContractStakeManager, d.StakeManager, "setCheckpointReward", wei)
}

// Mint creates wei POL for to.
func (d *Deployment) Mint(ctx context.Context, to common.Address, wei *big.Int) error {
	return d.ownerCall(ctx, ContractToken, d.Token, "mint", to, wei)
}

func (d *Deployment) ownerCall(ctx context.Context, contract string, to common.Address, method string, args ...any) error {
	data, err := d.Pack(contract, method, args...)
	if err != nil {
		return err
	}
	if _, err := d.Send(ctx, d.key, to, data); err != nil {
		return fmt.Errorf("evmchain: %s.%s: %w", contract, method, err)
	}
	return nil
}

// Pack encodes a call of method of contract (ContractToken, ContractStakeManager,
// ContractValidatorShare).
func (d *Deployment) Pack(contract, method string, args ...any) ([]byte, error) {
	a, ok := d.abis[contract]
	if !ok {
		return nil, fmt.Errorf("evmchain: unknown contract %q", contract)
	}
	data, err := a.Pack(method, args...)
	if err != nil {
		return nil, fmt.Errorf("evmchain: pack %s.%s: %w", contract, method, err)
	}
	return data, nil
}

// call reads method of contract at to, at the latest block.
func (d *Deployment) call(ctx context.Context, contract string, to common.Address, method string, args ...any) ([]any, error) {
	data, err := d.Pack(contract, method, args...)
	if err != nil {
		return nil, err
	}
	out, err := d.client.CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, nil)
	if err != nil {
		return nil, fmt.Errorf("evmchain: call %s.%s at %s: %w", contract, method, to.Hex(), err)
	}
	vals, err := d.abis[contract].Unpack(method, out)
	if err != nil {
		return nil, fmt.Errorf("evmchain: decode %s.%s: %w", contract, method, err)
	}
	return vals, nil
}

func (d *Deployment) callBig(ctx context.Context, contract string, to common.Address, method string, args ...any) (*big.Int, error) {
	vals, err := d.call(ctx, contract, to, method, args...)
	if err != nil {
		return nil, err
	}
	v, ok := vals[0].(*big.Int)
	if !ok {
		return nil, fmt.Errorf("evmchain: %s.%s answered %T, not uint256", contract, method, vals[0])
	}
	return v, nil
}

// Epoch is the StakeManager's epoch().
func (d *Deployment) Epoch(ctx context.Context) (uint64, error) {
	v, err := d.callBig(ctx, ContractStakeManager, d.StakeManager, "epoch")
	if err != nil {
		return 0, err
	}
	return v.Uint64(), nil
}

// WithdrawalDelay is the StakeManager's withdrawalDelay().
func (d *Deployment) WithdrawalDelay(ctx context.Context) (uint64, error) {
	v, err := d.callBig(ctx, ContractStakeManager, d.StakeManager, "withdrawalDelay")
	if err != nil {
		return 0, err
	}
	return v.Uint64(), nil
}

// DelegatedAmount is the POL (wei) delegated to validatorID, unbonding stake excluded.
func (d *Deployment) DelegatedAmount(ctx context.Context, validatorID uint64) (*big.Int, error) {
	return d.callBig(ctx, ContractStakeManager, d.StakeManager, "delegatedAmount", new(big.Int).SetUint64(validatorID))
}

// TokenBalance is owner's POL balance (wei).
func (d *Deployment) TokenBalance(ctx context.Context, owner common.Address) (*big.Int, error) {
	return d.callBig(ctx, ContractToken, d.Token, "balanceOf", owner)
}

// Allowance is what spender may still pull from owner's POL (wei).
func (d *Deployment) Allowance(ctx context.Context, owner, spender common.Address) (*big.Int, error) {
	return d.callBig(ctx, ContractToken, d.Token, "allowance", owner, spender)
}

// Shares is the delegator's share balance in share (balanceOf).
func (d *Deployment) Shares(ctx context.Context, share, delegator common.Address) (*big.Int, error) {
	return d.callBig(ctx, ContractValidatorShare, share, "balanceOf", delegator)
}

// LiquidRewards is the delegator's unpaid rewards in share (getLiquidRewards).
func (d *Deployment) LiquidRewards(ctx context.Context, share, delegator common.Address) (*big.Int, error) {
	return d.callBig(ctx, ContractValidatorShare, share, "getLiquidRewards", delegator)
}

// ExchangeRate is share's exchangeRate().
func (d *Deployment) ExchangeRate(ctx context.Context, share common.Address) (*big.Int, error) {
	return d.callBig(ctx, ContractValidatorShare, share, "exchangeRate")
}

// TotalStake is the delegator's stake in share (wei) and the rate it was computed at
// (getTotalStake).
func (d *Deployment) TotalStake(ctx context.Context, share, delegator common.Address) (amount, rate *big.Int, err error) {
	vals, err := d.call(ctx, ContractValidatorShare, share, "getTotalStake", delegator)
	if err != nil {
		return nil, nil, err
	}
	return vals[0].(*big.Int), vals[1].(*big.Int), nil
}

// UnbondNonce is the delegator's last unbond nonce in share (unbondNonces).
func (d *Deployment) UnbondNonce(ctx context.Context, share, delegator common.Address) (uint64, error) {
	v, err := d.callBig(ctx, ContractValidatorShare, share, "unbondNonces", delegator)
	if err != nil {
		return 0, err
	}
	return v.Uint64(), nil
}

// Unbond is one unbonding of a delegator (unbonds_new).
type Unbond struct {
	// Shares are withdraw-pool shares; zero once claimed (or never made).
	Shares *big.Int
	// WithdrawEpoch is the epoch of the unbonding; claimable once epoch() >= WithdrawEpoch +
	// withdrawalDelay().
	WithdrawEpoch uint64
}

// Unbond reads the delegator's unbond nonce in share.
func (d *Deployment) Unbond(ctx context.Context, share, delegator common.Address, nonce uint64) (Unbond, error) {
	vals, err := d.call(ctx, ContractValidatorShare, share, "unbonds_new", delegator, new(big.Int).SetUint64(nonce))
	if err != nil {
		return Unbond{}, err
	}
	return Unbond{Shares: vals[0].(*big.Int), WithdrawEpoch: vals[1].(*big.Int).Uint64()}, nil
}

// ShareBurned is a ShareBurnedWithId event: an unbonding made by sellVoucher_newPOL.
type ShareBurned struct {
	ValidatorID uint64
	User        common.Address
	// Amount is the POL (wei) unbonded, Tokens the shares burnt.
	Amount, Tokens *big.Int
	// Nonce is the unbond nonce to claim with unstakeClaimTokens_newPOL.
	Nonce uint64
}

// ShareMinted is a ShareMinted event: a delegation by buyVoucherPOL or restakePOL.
type ShareMinted struct {
	ValidatorID uint64
	User        common.Address
	// Amount is the POL (wei) delegated, Tokens the shares minted.
	Amount, Tokens *big.Int
}

// validatorOfShare is the validator id of share among the deployment's validators.
func (d *Deployment) validatorOfShare(share common.Address) (uint64, error) {
	for _, v := range d.Validators {
		if v.Share == share {
			return v.ID, nil
		}
	}
	return 0, fmt.Errorf("evmchain: %s is not a validator share of this deployment", share.Hex())
}

// shareEvent finds the event called name, emitted by emitter (the contract whose artifact
// declares it) for share's validator, in rcpt; it returns its topics and non-indexed values.
func (d *Deployment) shareEvent(rcpt *types.Receipt, contract string, emitter, share common.Address, name string) ([]common.Hash, []any, error) {
	id, err := d.validatorOfShare(share)
	if err != nil {
		return nil, nil, err
	}
	a, err := Artifact(contract)
	if err != nil {
		return nil, nil, err
	}
	ev := a.ABI.Events[name]
	idTopic := common.BigToHash(new(big.Int).SetUint64(id))
	for _, l := range rcpt.Logs {
		if l.Address != emitter || len(l.Topics) != 4 || l.Topics[0] != ev.ID || l.Topics[1] != idTopic {
			continue
		}
		vals, err := ev.Inputs.NonIndexed().Unpack(l.Data)
		if err != nil {
			return nil, nil, fmt.Errorf("evmchain: %s data: %w", name, err)
		}
		return l.Topics, vals, nil
	}
	return nil, nil, fmt.Errorf("evmchain: no %s from %s %s for validator %d in transaction %s", name, contract, emitter.Hex(), id, rcpt.TxHash.Hex())
}

// ParseShareBurned reads the ShareBurnedWithId event of share's validator in rcpt, which the
// EventsHub emits (as on Polygon).
func (d *Deployment) ParseShareBurned(rcpt *types.Receipt, share common.Address) (ShareBurned, error) {
	topics, vals, err := d.shareEvent(rcpt, ContractEventsHub, d.EventsHub, share, "ShareBurnedWithId")
	if err != nil {
		return ShareBurned{}, err
	}
	return ShareBurned{
		ValidatorID: topics[1].Big().Uint64(), User: common.BytesToAddress(topics[2].Bytes()),
		Amount: topics[3].Big(), Tokens: vals[0].(*big.Int), Nonce: vals[1].(*big.Int).Uint64(),
	}, nil
}

// ParseShareMinted reads the ShareMinted event of share's validator in rcpt, which the
// StakingInfo emits (as on Polygon).
func (d *Deployment) ParseShareMinted(rcpt *types.Receipt, share common.Address) (ShareMinted, error) {
	topics, vals, err := d.shareEvent(rcpt, ContractStakingInfo, d.StakingInfo, share, "ShareMinted")
	if err != nil {
		return ShareMinted{}, err
	}
	return ShareMinted{
		ValidatorID: topics[1].Big().Uint64(), User: common.BytesToAddress(topics[2].Bytes()),
		Amount: topics[3].Big(), Tokens: vals[0].(*big.Int),
	}, nil
}
