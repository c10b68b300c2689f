package celestia

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/amount"
	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/approval"
	cosmoschain "github.com/stakeflow/stakeflow/chain/cosmos"
	"github.com/stakeflow/stakeflow/lease"
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
	Block(ctx context.Context, height uint64) (*cosmoschain.BlockTxs, error)
	BroadcastSync(ctx context.Context, raw []byte) (*cosmoschain.CheckResult, error)
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
	// Approvers are the worker's configured approvers (--approvers), carried in every decision.
	Approvers []approval.Approver
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
	// TimeoutBlocks is how many blocks ahead of the chain's height a build sets its timeout
	// height (default DefaultTimeoutBlocks).
	TimeoutBlocks uint64
	// StallAfter is how long Confirm keeps looking for a proof it lacks (the sequence used but
	// the transaction that used it not found yet, or one of ours in a block whose result the index
	// does not give) before it reports the step stalled (default 5m); the step stays open and
	// confirms again.
	StallAfter time.Duration
	// Temporal and TaskQueue start and signal the delegators' nonce leases (CelestiaRequestLease).
	Temporal  lease.Starter
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
	asked, _ := amount.Parse(in.Intent.Amount) // validated before; none (withdraw-rewards) is zero
	required := 0
	if t := a.Policy.ApprovalThreshold; t > 0 && asked.Cmp(amount.FromUint64(t)) >= 0 {
		required = 1
	}
	if t := a.Policy.DualApprovalThreshold; t > 0 && asked.Cmp(amount.FromUint64(t)) >= 0 {
		required = 2
	}
	return activities.PolicyDecision{ApprovalRequired: required > 0, ApprovalsRequired: required,
		ApprovalThreshold: a.Policy.ApprovalThreshold, DualApprovalThreshold: a.Policy.DualApprovalThreshold,
		Approvers: a.Policy.Approvers}, nil
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
	blk, err := c.LatestBlock(ctx)
	if err != nil {
		return BuildResult{}, classify("reading the latest block", err)
	}
	acct := signercosmos.Account{AccountNumber: acc.Number, Sequence: acc.Sequence}
	if in.Sequence != nil {
		if acc.Sequence > *in.Sequence {
			if in.Build <= 1 {
				return BuildResult{}, temporal.NewNonRetryableApplicationError(
					fmt.Sprintf("sequence %d of %s was used (the chain's is %d) before this step signed anything: a transaction stakeflow did not send; nothing was signed",
						*in.Sequence, in.Intent.Delegator, acc.Sequence), ErrSequenceConflict, nil)
			}
			return BuildResult{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("sequence %d of %s is used (the chain's is %d) since the step's last build was sent: no new build; the builds sent decide",
					*in.Sequence, in.Intent.Delegator, acc.Sequence), ErrSequenceConflict, nil)
		}
		acct.Sequence = *in.Sequence
	}
	intent := in.Intent
	intent.TimeoutHeight = in.TimeoutHeight
	if intent.TimeoutHeight == 0 {
		blocks := a.TimeoutBlocks
		if blocks == 0 {
			blocks = DefaultTimeoutBlocks
		}
		intent.TimeoutHeight = blk.Height + blocks
	}
	fee := a.fee()
	u, err := signercosmos.Build(intent, pub, acct, fee, a.Signer.Policy().Memo)
	if err != nil {
		return BuildResult{}, invalid(err)
	}
	activity.GetLogger(ctx).Info("Built", "delegator", in.Intent.Delegator, "sequence", acct.Sequence, "build", in.Build,
		"height", blk.Height, "timeoutHeight", intent.TimeoutHeight)
	return BuildResult{Height: blk.Height, Intent: intent, Unsigned: u, Account: acct, Fee: fee}, nil
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
// A refusal (400) is not trusted alone: the service may have forwarded the bytes and answered
// 400 anyway. The same bytes go through the worker's own proven REST endpoint
// (BROADCAST_MODE_SYNC): accepted there, the broadcast succeeded; refused there in a way that
// proves the bytes can never land nor have landed (undecodable, signature or key refused),
// ErrTransactionRejected; any other answer (already known, sequence used, a fee or balance
// refusal, no answer) says nothing about whether an earlier copy landed: ErrBroadcastUncertain,
// and the chain decides.
func (a *Activities) CelestiaBroadcast(ctx context.Context, in BroadcastInput) (BroadcastResult, error) {
	res, err := a.Service.CelestiaSend(ctx, in.Network, apiclient.CelestiaSendRequest{SignedTransaction: in.TxBase64})
	if err != nil {
		var apiErr *apiclient.APIError
		if errors.As(err, &apiErr) && apiErr.StatusCode == 400 && !activities.Unauthorized(err) {
			return a.broadcastOwn(ctx, in, fmt.Sprintf("endpoint 3 refused transaction %s: %v", in.Hash, err))
		}
		return BroadcastResult{}, activities.ClassifyService("endpoint 3", err)
	}
	if !strings.EqualFold(res.TransactionHash, in.Hash) {
		return BroadcastResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("endpoint 3 answered transaction hash %s for the signed bytes of %s; the chain decides", res.TransactionHash, in.Hash), ErrWrongHash, nil)
	}
	return BroadcastResult{Hash: in.Hash, BlockID: res.BlockID}, nil
}

// neverLands lists the CheckTx codes (codespace sdk) that prove bytes can never be included and
// never were: a landed transaction re-sent is refused as already known (19) or by its used
// sequence (32), which the ante handler checks before the signature, never by these.
var neverLands = map[uint32]string{2: "undecodable", 4: "signature or key refused"}

// broadcastOwn sends the bytes endpoint 3 refused through the worker's own REST endpoint.
func (a *Activities) broadcastOwn(ctx context.Context, in BroadcastInput, refusal string) (BroadcastResult, error) {
	uncertain := func(format string, args ...any) error {
		return temporal.NewNonRetryableApplicationError(refusal+"; "+fmt.Sprintf(format, args...)+"; the chain decides", activities.ErrBroadcastUncertain, nil)
	}
	c, err := a.chain(in.Network)
	if err != nil {
		return BroadcastResult{}, err
	}
	raw, err := base64.StdEncoding.DecodeString(in.TxBase64)
	if err != nil || !strings.EqualFold(signercosmos.TxHash(raw), in.Hash) {
		return BroadcastResult{}, invalid(fmt.Errorf("the signed bytes of %s do not decode to it", in.Hash))
	}
	chk, err := c.BroadcastSync(ctx, raw)
	if err != nil {
		return BroadcastResult{}, uncertain("the worker's own REST endpoint could not be asked (%v)", err)
	}
	if chk.Code == 0 {
		activity.GetLogger(ctx).Warn("Endpoint 3 refused a transaction the chain's node accepted", "txHash", in.Hash, "refusal", refusal)
		return BroadcastResult{Hash: in.Hash}, nil
	}
	if why, ok := neverLands[chk.Code]; ok && (chk.Codespace == "sdk" || chk.Codespace == "") {
		return BroadcastResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%s; the chain's node refused the same bytes for good (%s): code %d (%s): %s", refusal, why, chk.Code, chk.Codespace, chk.Log),
			activities.ErrTransactionRejected, nil)
	}
	return BroadcastResult{}, uncertain("the chain's node answered code %d (%s): %s", chk.Code, chk.Codespace, chk.Log)
}

// CelestiaConfirm follows the step's builds on the chain until it has the chain's word on them:
//   - one of them is included (found by hash in the index, or in a block): finalized (code 0;
//     Cosmos blocks are final) or failed with the chain's log;
//   - none can land anymore (OutcomeCannotLand): another transaction, read in a block, holds the
//     step's sequence (its signer and sequence decoded; named), or the chain is past every build's
//     timeout height and none of them is in the blocks from FromHeight to the highest timeout
//     height;
//   - the newest build unseen for ReplaceAfter, the sequence unused and no timeout height passed
//     (OutcomeReplace: send it again under the same sequence).
//
// A used sequence whose transaction the index does not know is not a conflict: the blocks are
// read for the proof, and until it comes Confirm keeps polling; past StallAfter without it, it
// returns ErrChainRejected (the workflow shows the step stalled and confirms again). Heartbeats
// each poll.
func (a *Activities) CelestiaConfirm(ctx context.Context, in ConfirmInput) (ConfirmResult, error) {
	c, err := a.chain(in.Network)
	if err != nil {
		return ConfirmResult{}, err
	}
	poll, replace, stallAfter := in.PollInterval, in.ReplaceAfter, a.StallAfter
	if poll <= 0 {
		poll = 2 * time.Second
	}
	if replace <= 0 {
		replace = a.ReplaceAfter
	}
	if replace <= 0 {
		replace = time.Minute
	}
	if stallAfter <= 0 {
		stallAfter = 5 * time.Minute
	}
	p := newProver(c, in)
	start := time.Now()
	var unproven time.Time
	for {
		// The height first, then the sequence, then the hashes: a transaction included between
		// the reads is found by a later one.
		blk, err := c.LatestBlock(ctx)
		if err != nil {
			return ConfirmResult{}, classify("reading the latest block", err)
		}
		acc, err := c.Account(ctx, in.Delegator)
		if err != nil {
			return ConfirmResult{}, classify("reading the account", err)
		}
		if res, err := a.ours(ctx, c, in.Hashes); res != nil || err != nil {
			return *res, err
		}
		used := acc != nil && acc.Sequence > in.Sequence
		passed := p.timeoutPassed(blk.Height)
		var why string
		switch {
		case used || passed:
			if err := p.scan(ctx, blk.Height); err != nil {
				return ConfirmResult{}, err
			}
			switch {
			case p.oursHash != "":
				if res, err := a.ours(ctx, c, []string{p.oursHash}); res != nil || err != nil {
					return *res, err
				}
				why = fmt.Sprintf("transaction %s is in block %d, but the node's index does not give its result yet", p.oursHash, p.oursHeight)
			case p.holder != "":
				return ConfirmResult{Outcome: activities.OutcomeCannotLand, Holder: p.holder, Error: fmt.Sprintf(
					"sequence %d of %s was used by transaction %s (block %d), which stakeflow did not send: none of %v can land",
					in.Sequence, in.Delegator, p.holder, p.holderHeight, in.Hashes)}, nil
			case passed && p.complete():
				return ConfirmResult{Outcome: activities.OutcomeCannotLand, Error: fmt.Sprintf(
					"the chain is at height %d, past timeout height %d, and none of %v is in blocks %d to %d: none can land",
					blk.Height, p.maxTimeout, in.Hashes, in.FromHeight, p.maxTimeout)}, nil
			case used:
				why = fmt.Sprintf("sequence %d of %s is used (the chain's is %d), but neither the index nor blocks %d to %d show which transaction used it yet",
					in.Sequence, in.Delegator, acc.Sequence, in.FromHeight, p.next-1)
			default:
				why = fmt.Sprintf("timeout height %d passed, but blocks %d to %d are not all read yet", p.maxTimeout, p.next, p.maxTimeout)
			}
		case time.Since(start) >= replace:
			return ConfirmResult{Outcome: activities.OutcomeReplace}, nil
		}
		if why == "" {
			unproven = time.Time{}
		} else if unproven.IsZero() {
			unproven = time.Now()
		} else if time.Since(unproven) >= stallAfter {
			return ConfirmResult{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("%s after %s; the step stays open and follows its transactions", why, stallAfter), activities.ErrChainRejected, nil)
		}
		activity.RecordHeartbeat(ctx, p.next)
		select {
		case <-ctx.Done():
			return ConfirmResult{}, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// ours looks the hashes up in the index; a result when one is included.
func (a *Activities) ours(ctx context.Context, c Chain, hashes []string) (*ConfirmResult, error) {
	for _, h := range hashes {
		tx, err := c.Tx(ctx, h)
		if err != nil {
			return &ConfirmResult{}, classify("reading transaction "+h, err)
		}
		if tx == nil {
			continue
		}
		res := &ConfirmResult{Hash: tx.Hash, Height: tx.Height, Fee: fmt.Sprint(a.fee().Fee)}
		if tx.Code == 0 {
			res.Outcome = activities.OutcomeFinalized
		} else {
			res.Outcome = activities.OutcomeFailed
			res.Error = fmt.Sprintf("code %d (%s): %s", tx.Code, tx.Codespace, tx.Log)
		}
		return res, nil
	}
	return nil, nil
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
