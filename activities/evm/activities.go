package evm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/params"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/amount"
	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/approval"
	evmchain "github.com/stakeflow/stakeflow/chain/evm"
	"github.com/stakeflow/stakeflow/lease"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// Chain is the access to one EVM network the activities use, through an RPC proven to serve it
// (chain/evm's Network): reads, and SendRawTransaction for the transactions the staking service
// has no broadcast endpoint for (EVMSendRPC). Each returns an error wrapping
// evmchain.ErrNetworkUnverified while the RPC is not proven.
type Chain interface {
	LatestHeader(ctx context.Context) (*types.Header, error)
	Nonces(ctx context.Context, addr common.Address) (*evmchain.Nonces, error)
	Fees(ctx context.Context) (*evmchain.Fees, error)
	EstimateGas(ctx context.Context, msg ethereum.CallMsg) (uint64, error)
	Balance(ctx context.Context, addr common.Address) (*big.Int, error)
	Transaction(ctx context.Context, hash common.Hash) (*evmchain.TxLookup, error)
	ReceiptFinal(ctx context.Context, hash common.Hash) (*evmchain.Receipt, error)
	NonceConsumedBy(ctx context.Context, addr common.Address, nonce uint64, hash common.Hash) (*evmchain.NonceStatus, error)
	Call(ctx context.Context, block *big.Int, to common.Address, contract *abi.ABI, method string, args ...any) ([]any, error)
	SendRawTransaction(ctx context.Context, raw []byte) error
}

var _ Chain = (*evmchain.Network)(nil)

// TxSigner verifies an unsigned transaction against its intent, exactly, and signs it (signer/evm's
// Signer). Its policy (chain id, POL token, StakeManager, allow-listed validator shares, fee caps,
// slippage) is the one place these are configured: the builder and the policy check read it.
type TxSigner interface {
	Sign(ctx context.Context, intent signerevm.Intent, unsigned []byte) (*signerevm.Signed, error)
	// SignCancel verifies a cancel transaction (a zero-value self-transfer under a sent nonce)
	// by exact expectation and signs it.
	SignCancel(ctx context.Context, intent signerevm.CancelIntent, unsigned []byte) (*signerevm.Signed, error)
	Policy() signerevm.Policy
}

var _ TxSigner = (*signerevm.Signer)(nil)

// KeyHolder tells whether the worker holds the key of an address (signer/evm's Keyring).
type KeyHolder interface {
	Has(addr common.Address) bool
}

var _ KeyHolder = (*signerevm.Keyring)(nil)

// StakingService is the part of the staking service the activities call: endpoint 4, which
// forwards a signed Polygon transaction to the chain.
type StakingService interface {
	PolygonSend(ctx context.Context, req apiclient.PolygonSendRequest) (json.RawMessage, error)
}

var _ StakingService = (*apiclient.Client)(nil)

// Network is what the activities use on one EVM network.
type Network struct {
	// Chain reads the network.
	Chain Chain
	// Signer signs for it; its policy's chain id must be the network's.
	Signer TxSigner
	// EventsHub is Polygon's EventsHub (proxy) on this network: the contract that emits the
	// ValidatorShares' ShareBurnedWithId, which names an unstake's unbond nonce. Required to
	// read an unbond from its unstake.
	EventsHub common.Address
}

// Policy is the worker's operating policy for EVM operations, in wei.
type Policy struct {
	// ApprovalThresholdWei: operations moving at least this many wei wait for an approval (nil
	// or 0: never).
	ApprovalThresholdWei *big.Int
	// DualApprovalThresholdWei: operations moving at least this many wei wait for two distinct
	// approvals (nil or 0: never).
	DualApprovalThresholdWei *big.Int
	// Approvers are the worker's configured approvers (--approvers), carried in every decision.
	Approvers []approval.Approver
}

// Defaults of the Activities' tunables.
const (
	// DefaultGasMarginPercent is the margin added to eth_estimateGas's answer, unless
	// DefaultGasHeadroom is more.
	DefaultGasMarginPercent = 25
	// DefaultGasHeadroom is the least gas added to eth_estimateGas's answer: what the chain moving
	// between the estimate and the block can add to one delegator call. A ValidatorShare call
	// pays out the rewards accrued by the time it runs; a checkpoint landing in between turns a
	// call that paid nothing at the estimate into a POL transfer that can create the staker's
	// balance slot (a staker who delegated all it held), and where new state is priced by the
	// byte (EIP-8037: params.StorageCreationSize × params.CostPerStateByte, 97,920 gas a slot in
	// go-ethereum) that lump is more than a margin in percent covers: measured on geth --dev, an
	// unstake estimated at 378,171 gas used 517,483 after one checkpoint. Two new slots and
	// the transfer's own execution (at most about 50,000 gas) fit. Gas not used is not paid for.
	DefaultGasHeadroom = 2*params.StorageCreationSize*params.CostPerStateByte + 50_000
	// DefaultReplaceAfter is how long the newest build may stay unmined before Confirm answers
	// expired (ConfirmInput.ReplaceAfter overrides it).
	DefaultReplaceAfter = 3 * time.Minute
	// DefaultResendEvery is how often Confirm re-sends the newest signed bytes while the node
	// knows no build (neither pending nor mined).
	DefaultResendEvery = 15 * time.Second
	// FeeBumpNumerator / FeeBumpDenominator is the least a rebuild raises both fee caps by over
	// the transaction it replaces: 12.5% (node pools require 10%).
	FeeBumpNumerator   = 9
	FeeBumpDenominator = 8
)

// Activities are the EVM activities (Polygon staking on Ethereum L1). Each method is one activity;
// their names carry the EVM prefix so that they never collide with another chain's on one worker.
// Networks, Keys, Service and, for EVMRequestLease, Temporal and TaskQueue are required; the rest
// have defaults.
type Activities struct {
	// Networks are the EVM networks the worker serves, by name (one of networks.EVM).
	Networks map[string]Network
	Keys     KeyHolder
	Service  StakingService
	Policy   Policy
	// Temporal starts and signals the addresses' nonce leases (EVMRequestLease); TaskQueue is the
	// queue they run on (the worker's, workflows.TaskQueue).
	Temporal  lease.Starter
	TaskQueue string
	// GasMarginPercent is added to the gas estimate (0: DefaultGasMarginPercent), unless
	// GasHeadroom is more.
	GasMarginPercent uint64
	// GasHeadroom is the least gas added to the estimate (0: DefaultGasHeadroom).
	GasHeadroom uint64
	// EpochRecheck caps each wait for the withdrawal delay before the unbond is read again
	// (Unbond.RecheckAfter; 0: the workflow's MaxEpochWait).
	EpochRecheck time.Duration
	// ResendEvery is how often Confirm re-sends the newest build while the node knows none
	// (0: DefaultResendEvery).
	ResendEvery time.Duration
	// ReplaceAfter is how long the newest build may stay unmined before Confirm answers expired,
	// when the step names no time of its own (0: DefaultReplaceAfter).
	ReplaceAfter time.Duration
	// ConfirmHeartbeatAfter is how long Confirm runs before it starts heartbeating; zero means
	// five seconds, and never more than a quarter of the activity's heartbeat timeout.
	ConfirmHeartbeatAfter time.Duration
	// Raw holds signed transactions that steps name by hash only (EVMSendRPC and EVMConfirm's
	// re-sends through the worker's RPC read them there, then from the node); nil: the steps
	// carry their bytes.
	Raw *RawCache
}

// Error types of the EVM activities, besides the shared activities.Err* (and ErrNonceConflict).
const (
	// ErrWouldRevert: the node's gas estimate says the call reverts (its reason named): nothing
	// was built. Non-retryable.
	ErrWouldRevert = "WouldRevert"
	// ErrFeeCap: the policy's fee caps stop a transaction at the fees the chain needs (a base
	// fee above the cap, or a replacement's required bump): nothing was built. Non-retryable.
	ErrFeeCap = "FeeCapExceeded"
	// ErrWrongHash: the service answered another transaction hash than the signed bytes': a
	// service to distrust; the chain decides what landed. Non-retryable.
	ErrWrongHash = "ServiceWrongHash"
)

// EVMCheckPolicy applies the worker's policy (allow-listed validator shares, approval thresholds in
// wei) to an operation before anything is built. Local activity.
//
// activities.PolicyDecision carries its thresholds as uint64: a threshold above 2^64-1 wei (about
// 18.4 POL) is reported as 0 there; the decision (ApprovalsRequired) is made on the full values.
func (a *Activities) EVMCheckPolicy(ctx context.Context, in PolicyInput) (activities.PolicyDecision, error) {
	n, err := a.network(in.Network)
	if err != nil {
		return activities.PolicyDecision{}, err
	}
	staker, err := address("staker", in.Staker)
	if err != nil {
		return activities.PolicyDecision{}, err
	}
	if a.Keys == nil || !a.Keys.Has(staker) {
		return activities.PolicyDecision{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("this worker holds no key for staker %s", staker.Hex()), activities.ErrUnknownKey, nil)
	}
	share, err := address("validator share", in.ValidatorShare)
	if err != nil {
		return activities.PolicyDecision{}, err
	}
	p := n.Signer.Policy()
	if !allowed(p, share) {
		return activities.PolicyDecision{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("validator share %s is not on the worker's allow-list %s", share.Hex(), allowList(p)), activities.ErrPolicy, nil)
	}
	amount := new(big.Int)
	if in.Amount != "" {
		if amount, err = weiAmount("amount", in.Amount); err != nil {
			return activities.PolicyDecision{}, err
		}
	}
	one, two := a.Policy.ApprovalThresholdWei, a.Policy.DualApprovalThresholdWei
	required := 0
	if positive(one) && amount.Cmp(one) >= 0 {
		required = 1
	}
	if positive(two) && amount.Cmp(two) >= 0 {
		required = 2
	}
	return activities.PolicyDecision{
		ApprovalRequired: required > 0, ApprovalsRequired: required,
		ApprovalThreshold: fitUint64(one), DualApprovalThreshold: fitUint64(two),
		Approvers: a.Policy.Approvers,
	}, nil
}

// EVMReadNonces reads an address's nonces (latest, pending, finalized).
// It is the reader of the EVM family's nonce leases (lease.Register).
func (a *Activities) EVMReadNonces(ctx context.Context, in lease.ReadInput) (lease.Nonces, error) {
	n, err := a.network(in.Network)
	if err != nil {
		return lease.Nonces{}, err
	}
	addr, err := address("address", in.Address)
	if err != nil {
		return lease.Nonces{}, err
	}
	got, err := n.Chain.Nonces(ctx, addr)
	if err != nil {
		return lease.Nonces{}, chainErr("nonces of "+addr.Hex(), err)
	}
	return lease.Nonces{Latest: got.Latest, Pending: got.Pending, Finalized: got.Finalized}, nil
}

// EVMRequestLease asks the nonce lease of (network, address) for the operation named, starting
// the lease when it is not running (lease.Ask).
func (a *Activities) EVMRequestLease(ctx context.Context, in lease.Request) error {
	if _, err := a.network(in.Network); err != nil {
		return err
	}
	addr, err := address("address", in.Address)
	if err != nil {
		return err
	}
	in.Address = addr.Hex()
	return lease.Ask(ctx, a.Temporal, a.TaskQueue, lease.EVM, in)
}

// network returns the configured network name, or a non-retryable error naming it.
func (a *Activities) network(name string) (Network, error) {
	n, ok := a.Networks[name]
	if !ok || n.Chain == nil || n.Signer == nil {
		return Network{}, invalid(fmt.Sprintf("this worker serves no EVM network %q", name))
	}
	return n, nil
}

func invalid(msg string) error {
	return temporal.NewNonRetryableApplicationError(msg, activities.ErrInvalidInput, nil)
}

// address parses a 0x-hex address.
func address(what, s string) (common.Address, error) {
	if !common.IsHexAddress(s) {
		return common.Address{}, invalid(fmt.Sprintf("%s %q is not a 0x-hex EVM address", what, s))
	}
	a := common.HexToAddress(s)
	if a == (common.Address{}) {
		return common.Address{}, invalid(fmt.Sprintf("%s is the zero address", what))
	}
	return a, nil
}

// hash parses a 0x-hex transaction hash.
func hash(s string) (common.Hash, error) {
	b, err := decodeHex(s)
	if err != nil || len(b) != common.HashLength {
		return common.Hash{}, invalid(fmt.Sprintf("transaction hash %q is not 32 bytes of 0x hex", s))
	}
	return common.BytesToHash(b), nil
}

// weiAmount parses a decimal amount of wei.
func weiAmount(what, s string) (*big.Int, error) {
	a, err := amount.Parse(s)
	if err != nil {
		return nil, invalid(fmt.Sprintf("%s %q is not a non-negative decimal number of wei: %v", what, s, err))
	}
	return a.Big(), nil
}

func positive(v *big.Int) bool { return v != nil && v.Sign() > 0 }

// fitUint64 is v when it fits a uint64, else 0.
func fitUint64(v *big.Int) uint64 {
	if v == nil || v.Sign() <= 0 || !v.IsUint64() {
		return 0
	}
	return v.Uint64()
}

func allowed(p signerevm.Policy, share common.Address) bool {
	for _, v := range p.ValidatorShares {
		if v.Address == share {
			return true
		}
	}
	return false
}

func allowList(p signerevm.Policy) string {
	if len(p.ValidatorShares) == 0 {
		return "(none configured)"
	}
	s := "["
	for i, v := range p.ValidatorShares {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s (validator %d)", v.Address.Hex(), v.ValidatorID)
	}
	return s + "]"
}

// chainErr classifies a chain read's failure: not proven to serve the network yet is
// ErrChainUnverified (retried); a refusal that asking again will not change is ErrChainRejected
// (non-retryable for the activity); a revert is ErrWouldRevert, its decoded reason first; anything
// else ErrChainUnavailable.
func chainErr(what string, err error) error {
	msg := fmt.Sprintf("%s: %v", what, err)
	var rev *evmchain.RevertError
	var rpcErr *evmchain.RPCError
	switch {
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: %w", what, err)
	case errors.Is(err, evmchain.ErrNetworkUnverified):
		return temporal.NewApplicationError(msg, activities.ErrChainUnverified)
	case errors.As(err, &rev) && rev.Reason != "":
		// Cause first; the chain's answer, whole, is the cause.
		return temporal.NewNonRetryableApplicationError(rev.Summary()+"; "+what, ErrWouldRevert, err)
	case errors.As(err, &rev):
		return temporal.NewNonRetryableApplicationError(msg, ErrWouldRevert, nil)
	case errors.Is(err, evmchain.ErrWrongTransaction):
		return temporal.NewNonRetryableApplicationError(msg, activities.ErrInvalidInput, nil)
	case errors.As(err, &rpcErr) && !rpcErr.Transient:
		return temporal.NewNonRetryableApplicationError(msg, activities.ErrChainRejected, nil)
	}
	return temporal.NewApplicationError(msg, activities.ErrChainUnavailable)
}

// ChainError classifies a chain read's failure as the EVM activities do (see chainErr), for the
// activities of other EVM operations (EigenLayer checkpoints).
func ChainError(what string, err error) error { return chainErr(what, err) }
