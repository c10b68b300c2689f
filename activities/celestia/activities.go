package celestia

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/apiclient"
	cosmoschain "github.com/stakeflow/stakeflow/chain/cosmos"
	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
)

// Chain is the read-only access to one Celestia network (chain/cosmos's Client).
type Chain interface {
	Account(ctx context.Context, addr string) (*cosmoschain.Account, error)
	Tx(ctx context.Context, hash string) (*cosmoschain.TxResult, error)
	UnbondingTime(ctx context.Context) (time.Duration, error)
	LatestBlock(ctx context.Context) (cosmoschain.Block, error)
	Delegation(ctx context.Context, delegator, validator string) (*big.Int, error)
	Balance(ctx context.Context, addr, denom string) (*big.Int, error)
	Rewards(ctx context.Context, delegator, validator, denom string) (*big.Int, error)
	Unbonding(ctx context.Context, delegator string) ([]cosmoschain.UnbondingEntry, error)
}

var _ Chain = (*cosmoschain.Client)(nil)

// TxSigner verifies and signs (signer/cosmos's Signer).
type TxSigner interface {
	PubKey(delegator string) ([]byte, error)
	Sign(ctx context.Context, u signercosmos.Unsigned, in signercosmos.Intent, acct signercosmos.Account) (*signercosmos.Signed, error)
	Policy() signercosmos.Policy
}

var _ TxSigner = (*signercosmos.Signer)(nil)

// StakingService is endpoint 3 of the staking service.
type StakingService interface {
	CelestiaSend(ctx context.Context, network string, req apiclient.CelestiaSendRequest) (*apiclient.CelestiaBroadcastResult, error)
}

var _ StakingService = (*apiclient.Client)(nil)

// Policy holds the approval thresholds of Celestia operations, in utia (0: never).
type Policy struct {
	ApprovalThreshold     uint64
	DualApprovalThreshold uint64
}

// Activities are the Celestia activities.
type Activities struct {
	// Chains maps a network name to its chain.
	Chains map[string]Chain
	// Signer verifies and signs for every network (its policy is shared).
	Signer TxSigner
	// Service is the staking service.
	Service StakingService
	// Policy is the approval policy.
	Policy Policy
	// GasLimit is the gas limit of every transaction (default 200,000).
	GasLimit uint64
	// GasPriceMilli is the gas price in thousandths of a utia (default the minimum, 2).
	GasPriceMilli uint64
	// ReplaceAfter is Confirm's ReplaceAfter when its input has none (default 1m).
	ReplaceAfter time.Duration
	// Temporal and TaskQueue start and signal the delegators' sequencers.
	Temporal  WorkflowStarter
	TaskQueue string
}

func (a *Activities) chain(network string) (Chain, error) {
	c, ok := a.Chains[network]
	if !ok || c == nil {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("this worker has no Celestia REST endpoint for network %q (--celestia-rest)", network), activities.ErrInvalidInput, nil)
	}
	return c, nil
}

func (a *Activities) fee() signercosmos.FeeParams {
	gas := a.GasLimit
	if gas == 0 {
		gas = 200_000
	}
	price := max(a.GasPriceMilli, signercosmos.MinGasPriceMilli)
	return signercosmos.FeeParams{GasLimit: gas, Fee: (gas*price + 999) / 1000}
}

// classify turns a chain read error into an application error.
func classify(what string, err error) error {
	msg := fmt.Sprintf("%s: %v", what, err)
	switch {
	case errors.Is(err, cosmoschain.ErrNetworkUnverified):
		return temporal.NewApplicationError(msg, activities.ErrChainUnverified)
	case errors.Is(err, cosmoschain.ErrRejected):
		return temporal.NewNonRetryableApplicationError(msg, activities.ErrChainRejected, err)
	}
	return temporal.NewApplicationError(msg, activities.ErrChainUnavailable)
}

func invalid(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrInvalidInput, nil)
}

// CelestiaCheckPolicy checks the worker holds the delegator's key, the validators are on the
// allow-list, and says how many approvals the amount needs. Local activity.
func (a *Activities) CelestiaCheckPolicy(_ context.Context, in PolicyInput) (activities.PolicyDecision, error) {
	if err := in.Intent.Validate(); err != nil {
		return activities.PolicyDecision{}, invalid(err)
	}
	if _, err := a.chain(in.Intent.Network); err != nil {
		return activities.PolicyDecision{}, err
	}
	if _, err := a.Signer.PubKey(in.Intent.Delegator); err != nil {
		return activities.PolicyDecision{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("this worker holds no key for delegator %s", in.Intent.Delegator), activities.ErrUnknownKey, nil)
	}
	p := a.Signer.Policy()
	vals := []string{in.Intent.Validator}
	if in.Intent.DstValidator != "" {
		vals = append(vals, in.Intent.DstValidator)
	}
	for _, v := range vals {
		ok := false
		for _, w := range p.Validators {
			ok = ok || w == v
		}
		if !ok {
			return activities.PolicyDecision{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("validator %s is not on the worker's allow-list (--celestia-validators)", v), activities.ErrPolicy, nil)
		}
	}
	amount := new(big.Int)
	if in.Intent.Amount != "" {
		amount.SetString(in.Intent.Amount, 10)
	}
	required := 0
	if t := a.Policy.ApprovalThreshold; t > 0 && amount.Cmp(new(big.Int).SetUint64(t)) >= 0 {
		required = 1
	}
	if t := a.Policy.DualApprovalThreshold; t > 0 && amount.Cmp(new(big.Int).SetUint64(t)) >= 0 {
		required = 2
	}
	return activities.PolicyDecision{ApprovalRequired: required > 0, ApprovalsRequired: required,
		ApprovalThreshold: a.Policy.ApprovalThreshold, DualApprovalThreshold: a.Policy.DualApprovalThreshold}, nil
}

// CelestiaReadPosition reads the delegator's balance, delegation and rewards with a validator.
func (a *Activities) CelestiaReadPosition(ctx context.Context, in PositionInput) (Position, error) {
	c, err := a.chain(in.Network)
	if err != nil {
		return Position{}, err
	}
	bal, err := c.Balance(ctx, in.Delegator, Unit)
	if err != nil {
		return Position{}, classify("reading the balance", err)
	}
	del, err := c.Delegation(ctx, in.Delegator, in.Validator)
	if err != nil {
		return Position{}, classify("reading the delegation", err)
	}
	rew, err := c.Rewards(ctx, in.Delegator, in.Validator, Unit)
	if err != nil {
		return Position{}, classify("reading the rewards", err)
	}
	return Position{Balance: bal.String(), Delegated: del.String(), Rewards: rew.String()}, nil
}

// CelestiaBuild builds the step's transaction from the intent and the account number and
// sequence the chain reports; a pinned sequence (a rebuild) is reused as it is.
func (a *Activities) CelestiaBuild(ctx context.Context, in BuildInput) (BuildResult, error) {
	c, err := a.chain(in.Intent.Network)
	if err != nil {
		return BuildResult{}, err
	}
	pub, err := a.Signer.PubKey(in.Intent.Delegator)
	if err != nil {
		return BuildResult{}, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrUnknownKey, nil)
	}
	acc, err := c.Account(ctx, in.Intent.Delegator)
	if err != nil {
		return BuildResult{}, classify("reading the account", err)
	}
	if acc == nil {
		return BuildResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the chain knows no account %s (never funded)", in.Intent.Delegator), activities.ErrInsufficientFunds, nil)
	}
	acct := signercosmos.Account{AccountNumber: acc.Number, Sequence: acc.Sequence}
	if in.Sequence != nil {
		acct.Sequence = *in.Sequence
	}
	fee := a.fee()
	u, err := signercosmos.Build(in.Intent, pub, acct, fee, a.Signer.Policy().Memo)
	if err != nil {
		return BuildResult{}, invalid(err)
	}
	activity.GetLogger(ctx).Info("Built", "delegator", in.Intent.Delegator, "sequence", acct.Sequence, "build", in.Build)
	return BuildResult{Intent: in.Intent, Unsigned: u, Account: acct, Fee: fee}, nil
}

// CelestiaSign verifies the transaction against the intent, account and policy, and signs it.
// Local activity.
func (a *Activities) CelestiaSign(ctx context.Context, in SignInput) (SignResult, error) {
	s, err := a.Signer.Sign(ctx, in.Unsigned, in.Intent, in.Account)
	if err != nil {
		if errors.Is(err, signercosmos.ErrUnknownKey) {
			return SignResult{}, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrUnknownKey, nil)
		}
		return SignResult{}, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrVerificationFailed, nil)
	}
	fee := a.fee().Fee
	return SignResult{TxBase64: s.TxBase64, Hash: s.Hash, Sequence: s.Sequence, MaxFee: fmt.Sprint(fee)}, nil
}

// CelestiaBroadcast sends the signed bytes through endpoint 3 (the same bytes on every retry).
// A refusal after an earlier attempt, or one that says the sequence is used, says nothing about
// these bytes (an earlier send may have landed): ErrBroadcastUncertain, and the chain decides.
func (a *Activities) CelestiaBroadcast(ctx context.Context, in BroadcastInput) (BroadcastResult, error) {
	res, err := a.Service.CelestiaSend(ctx, in.Network, apiclient.CelestiaSendRequest{SignedTransaction: in.TxBase64})
	if err != nil {
		var apiErr *apiclient.APIError
		if errors.As(err, &apiErr) && apiErr.StatusCode == 400 && !activities.Unauthorized(err) {
			msg := fmt.Sprintf("endpoint 3 refused transaction %s: %v", in.Hash, err)
			if activity.GetInfo(ctx).Attempt > 1 || strings.Contains(err.Error(), "sequence") || strings.Contains(err.Error(), "already") {
				return BroadcastResult{}, temporal.NewNonRetryableApplicationError(msg, activities.ErrBroadcastUncertain, nil)
			}
			return BroadcastResult{}, temporal.NewNonRetryableApplicationError(msg, activities.ErrTransactionRejected, nil)
		}
		return BroadcastResult{}, activities.ClassifyService("endpoint 3", err)
	}
	if !strings.EqualFold(res.TransactionHash, in.Hash) {
		return BroadcastResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("endpoint 3 answered transaction hash %s for the signed bytes of %s; the chain decides", res.TransactionHash, in.Hash), ErrWrongHash, nil)
	}
	return BroadcastResult{Hash: in.Hash, BlockID: res.BlockID}, nil
}

// CelestiaConfirm follows the step's builds on the chain until one is included (code 0:
// finalized, Cosmos blocks being final; another code: failed with the chain's log), or until none
// has been seen for ReplaceAfter while the sequence stays unused (expired: build again under the
// same sequence). A sequence consumed by none of them is a conflict. Heartbeats each poll.
func (a *Activities) CelestiaConfirm(ctx context.Context, in ConfirmInput) (ConfirmResult, error) {
	c, err := a.chain(in.Network)
	if err != nil {
		return ConfirmResult{}, err
	}
	poll, replace := in.PollInterval, in.ReplaceAfter
	if poll <= 0 {
		poll = 2 * time.Second
	}
	if replace <= 0 {
		replace = a.ReplaceAfter
	}
	if replace <= 0 {
		replace = time.Minute
	}
	start := time.Now()
	for {
		// The sequence first, then the hashes: a transaction included between the two reads is
		// found by the second.
		acc, err := c.Account(ctx, in.Delegator)
		if err != nil {
			return ConfirmResult{}, classify("reading the account", err)
		}
		for _, h := range in.Hashes {
			tx, err := c.Tx(ctx, h)
			if err != nil {
				return ConfirmResult{}, classify("reading transaction "+h, err)
			}
			if tx == nil {
				continue
			}
			res := ConfirmResult{Hash: tx.Hash, Height: tx.Height, Fee: fmt.Sprint(a.fee().Fee)}
			if tx.Code == 0 {
				res.Outcome = activities.OutcomeFinalized
			} else {
				res.Outcome = activities.OutcomeFailed
				res.Error = fmt.Sprintf("code %d (%s): %s", tx.Code, tx.Codespace, tx.Log)
			}
			return res, nil
		}
		if acc != nil && acc.Sequence > in.Sequence {
			return ConfirmResult{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("sequence %d of %s was used by a transaction stakeflow did not send (none of %v is on chain)", in.Sequence, in.Delegator, in.Hashes),
				ErrSequenceConflict, nil)
		}
		if time.Since(start) >= replace {
			return ConfirmResult{Outcome: activities.OutcomeReplace}, nil
		}
		activity.RecordHeartbeat(ctx, len(in.Hashes))
		select {
		case <-ctx.Done():
			return ConfirmResult{}, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// CelestiaReadUnbonding reads the unbonding entry an undelegation created, the chain's time and
// the unbonding period.
func (a *Activities) CelestiaReadUnbonding(ctx context.Context, in UnbondingInput) (Unbonding, error) {
	c, err := a.chain(in.Network)
	if err != nil {
		return Unbonding{}, err
	}
	period, err := c.UnbondingTime(ctx)
	if err != nil {
		return Unbonding{}, classify("reading the staking params", err)
	}
	blk, err := c.LatestBlock(ctx)
	if err != nil {
		return Unbonding{}, classify("reading the latest block", err)
	}
	entries, err := c.Unbonding(ctx, in.Delegator)
	if err != nil {
		return Unbonding{}, classify("reading the unbonding queue", err)
	}
	bal, err := c.Balance(ctx, in.Delegator, Unit)
	if err != nil {
		return Unbonding{}, classify("reading the balance", err)
	}
	u := Unbonding{ChainTime: blk.Time, UnbondingTime: period, Balance: bal.String()}
	for _, e := range entries {
		if e.Validator == in.Validator && e.CreationHeight == in.Height {
			u.Pending, u.CompletionTime = true, e.CompletionTime
		}
	}
	return u, nil
}
