package solana

import (
	"context"
	"errors"
	"fmt"
	"github.com/stakeflow/stakeflow/activities"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	solchain "github.com/stakeflow/stakeflow/chain/solana"
)

// SolanaReader is the read-only chain access the activities use: one network, through an RPC
// proven to serve it. Reads return an error wrapping solchain.ErrNetworkUnverified while it is
// not proven, and Verified tells whether it is now.
type SolanaReader interface {
	SignatureStatus(ctx context.Context, sig string) (*solchain.SignatureStatus, error)
	BlockHeight(ctx context.Context) (uint64, error)
	IsBlockhashValid(ctx context.Context, blockhash string) (bool, error)
	EpochInfo(ctx context.Context) (*solchain.EpochInfo, error)
	StakeAccount(ctx context.Context, addr string) (*solchain.StakeAccount, error)
	StakeActivation(ctx context.Context, addr string) (*solchain.StakeActivation, error)
	AccountInfo(ctx context.Context, addr string) (*solchain.AccountInfo, error)
	Balance(ctx context.Context, addr string) (uint64, error)
	RentExemptMinimum(ctx context.Context, size uint64) (uint64, error)
	// MinimumDelegation is the least a stake account may delegate, in lamports, as the chain
	// answers it (getStakeMinimumDelegation).
	MinimumDelegation(ctx context.Context) (uint64, error)
	VoteAccount(ctx context.Context, vote string) (*solchain.VoteAccountStatus, error)
	TransactionFee(ctx context.Context, sig string) (uint64, error)
	// InstructionPrograms returns the program ids of a finalized transaction's instructions.
	InstructionPrograms(ctx context.Context, sig string) ([]string, error)
	UnixTime(ctx context.Context) (int64, error)
	// Verified returns nil when the RPC is proven to serve the network, an error saying why not
	// otherwise.
	Verified() error
}

var _ SolanaReader = (*solchain.Network)(nil)

// DefaultExpiryMarginBlocks is how far the finalized block height must move past the height seen
// when confirmation began before an absent transaction counts as expired: two blockhash lifetimes
// (150 blocks each), so that a blockhash issued just before the build, on a node ahead of ours,
// has expired too.
const DefaultExpiryMarginBlocks = 300

// confirmProgress is what Confirm heartbeats, so that a retry resumes with the same baseline.
type confirmProgress struct {
	StartHeight uint64 `json:"startHeight"`
	Seen        string `json:"seen,omitempty"`
}

func (a *Activities) chain(network string) (SolanaReader, error) {
	r, ok := a.Chains[network]
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("this worker has no RPC endpoint for network %s", network), activities.ErrInvalidInput, nil)
	}
	return r, nil
}

// Confirm follows a sent transaction until it is finalized, failed on chain, or provably unable
// to land: its signature is absent, its blockhash is no longer valid, and the finalized block
// height has moved ExpiryMarginBlocks past the height seen when confirmation began. It resumes
// from its last heartbeat when retried.
//
// A transaction found with an error counts as failed only once that is finalized: until then the
// block it is in may be dropped, and the transaction may still land without error (or expire).
// The fee of a finalized transaction, failed or not, is read from the chain, reported in the
// result and recorded (activities.MetricFeeLamports). The proof of expiry, which lets the workflow build a
// new transaction, is only ever drawn from a reader proven to serve the network.
//
// A transaction already final at the first look costs two reads (status and fee) and no
// heartbeat. The height that starts the expiry margin is read the first time the signature is
// found absent (a later start only makes the proof of expiry stricter), and heartbeats begin once
// the confirmation has lasted ConfirmHeartbeatAfter: a retry without them reads a new, later start
// height, which again only delays a proof of expiry, never hastens it.
func (a *Activities) Confirm(ctx context.Context, in ConfirmInput) (ConfirmResult, error) {
	r, err := a.chain(in.Network)
	if err != nil {
		return ConfirmResult{}, err
	}
	poll := in.PollInterval
	if poll <= 0 {
		poll = time.Second
	}
	margin := in.ExpiryMarginBlocks
	if margin == 0 {
		margin = DefaultExpiryMarginBlocks
	}
	quiet := confirmQuiet
	if a.ConfirmHeartbeatAfter > 0 {
		quiet = a.ConfirmHeartbeatAfter
	}
	if hb := activity.GetInfo(ctx).HeartbeatTimeout; hb > 0 {
		quiet = min(quiet, hb/4)
	}
	began := time.Now()
	logger := activity.GetLogger(ctx)
	var progress confirmProgress
	if activity.HasHeartbeatDetails(ctx) {
		if err := activity.GetHeartbeatDetails(ctx, &progress); err != nil {
			progress = confirmProgress{}
		}
	}
	feeTries := 0
	for {
		st, err := r.SignatureStatus(ctx, in.Signature)
		if err != nil {
			return ConfirmResult{}, chainErr("signature status of "+in.Signature, err)
		}
		if st.Found && st.Finalized() {
			res := ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: st.Slot}
			if st.Err != "" {
				res.Outcome, res.Error = activities.OutcomeFailed, a.onChainError(ctx, r, in.Signature, st.Err)
			}
			fee, done := a.fee(ctx, r, in, &feeTries)
			if !done {
				// Not readable yet (the node's transaction store may lag its status cache): ask again.
				if err := sleep(ctx, poll); err != nil {
					return ConfirmResult{}, err
				}
				continue
			}
			res.Fee = fee
			if res.Outcome == activities.OutcomeFailed {
				logger.Warn("Transaction failed on chain", "txSig", in.Signature, "slot", st.Slot, "error", st.Err, "feeLamports", fee)
			}
			return res, nil
		}
		if st.Found {
			progress.Seen = st.ConfirmationStatus
		} else {
			if progress.StartHeight == 0 {
				h, err := r.BlockHeight(ctx)
				if err != nil {
					return ConfirmResult{}, chainErr("block height", err)
				}
				progress.StartHeight = h
			}
			expired, err := a.provenExpired(ctx, r, in, progress.StartHeight, margin)
			if err != nil {
				return ConfirmResult{}, err
			}
			if expired {
				logger.Info("Transaction expired without landing", "txSig", in.Signature, "blockhash", in.RecentBlockhash)
				return ConfirmResult{Outcome: activities.OutcomeCannotLand}, nil
			}
		}
		if time.Since(began) >= quiet {
			activity.RecordHeartbeat(ctx, progress)
		}
		if err := sleep(ctx, poll); err != nil {
			return ConfirmResult{}, err
		}
	}
}

// onChainError says a landed transaction's error in one line, cause first: decoded to names, with
// the program of the failing instruction read from the chain, then "; " and the error as the
// RPC reported it. An error the decoder does not know is reported as is.
func (a *Activities) onChainError(ctx context.Context, r SolanaReader, sig, raw string) string {
	progs, err := r.InstructionPrograms(ctx, sig)
	if err != nil {
		// The error is still decoded; a custom code is then not named.
		activity.GetLogger(ctx).Warn("Programs of the failed transaction not readable", "txSig", sig, "error", err)
		progs = nil
	}
	d, ok := solchain.DecodeTxError(raw, progs)
	if !ok {
		return raw
	}
	return d.String() + "; on-chain error " + raw
}

// feeReadTries is how many times Confirm asks for a finalized transaction's fee before it reports
// the outcome without it.
const feeReadTries = 3

// fee reads the fee of a finalized transaction and records it. done is false when Confirm should
// ask again; after feeReadTries, or when the RPC refuses the read for good, the outcome is
// reported with fee 0 and the failure logged.
func (a *Activities) fee(ctx context.Context, r SolanaReader, in ConfirmInput, tries *int) (fee uint64, done bool) {
	fee, err := r.TransactionFee(ctx, in.Signature)
	if err == nil {
		activities.RecordFee(ctx, chainSolana, in.Network, string(in.Operation), fee)
		return fee, true
	}
	*tries++
	if *tries < feeReadTries && !chainRejected(err) {
		return 0, false
	}
	activity.GetLogger(ctx).Warn("Fee of the finalized transaction not readable; reporting the outcome without it", "txSig", in.Signature, "error", err)
	return 0, true
}

// chainSolana is the chain label of what the Solana reader records.
const chainSolana = "solana"

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// confirmQuiet is how long Confirm runs before it starts heartbeating (at most a quarter of the
// activity's heartbeat timeout). Each heartbeat is a write on the Temporal server; a transaction
// that finalizes within it needs none.
const confirmQuiet = 5 * time.Second

// provenExpired reports whether an absent transaction can no longer land. Every read of the proof
// goes through the reader's network proof, and the proof stands only if the reader is still
// proven once it is complete.
func (a *Activities) provenExpired(ctx context.Context, r SolanaReader, in ConfirmInput, startHeight, margin uint64) (bool, error) {
	valid, err := r.IsBlockhashValid(ctx, in.RecentBlockhash)
	if err != nil {
		return false, chainErr("blockhash validity", err)
	}
	if valid {
		return false, nil
	}
	h, err := r.BlockHeight(ctx)
	if err != nil {
		return false, chainErr("block height", err)
	}
	if h <= startHeight+margin {
		return false, nil
	}
	// It might have landed between the first read and now: look once more.
	st, err := r.SignatureStatus(ctx, in.Signature)
	if err != nil {
		return false, chainErr("signature status of "+in.Signature, err)
	}
	if st.Found {
		return false, nil
	}
	if err := r.Verified(); err != nil {
		return false, chainErr("proof of expiry of "+in.Signature, err)
	}
	return true, nil
}

// CheckFresh proves, before a signed transaction is first broadcast, that it is new: the chain
// must not know its signature (searched through the whole history) and, for a stake, the stake
// account it creates must not exist. The service builds the transactions; a transaction it
// serves again after it landed (for this operation's earlier attempt, or another operation)
// would otherwise be answered "already processed" and pass for this one's success. A transaction
// that is not new is refused, non-retryably, as activities.ErrStaleTransaction, saying what was found. Call
// it once per signed transaction, before its first broadcast, never after.
func (a *Activities) CheckFresh(ctx context.Context, in FreshInput) (FreshResult, error) {
	r, err := a.chain(in.Network)
	if err != nil {
		return FreshResult{}, err
	}
	st, err := r.SignatureStatus(ctx, in.Signature)
	if err != nil {
		return FreshResult{}, chainErr("signature status of "+in.Signature, err)
	}
	if st.Found {
		return FreshResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("signature %s already on chain at slot %d (%s): the service served a transaction that is not new; nothing was sent",
				in.Signature, st.Slot, st.ConfirmationStatus), activities.ErrStaleTransaction, nil)
	}
	if in.NewStakeAccount != "" {
		acct, err := r.AccountInfo(ctx, in.NewStakeAccount)
		switch {
		case errors.Is(err, solchain.ErrAccountNotFound):
		case err != nil:
			return FreshResult{}, chainErr("stake account "+in.NewStakeAccount, err)
		default:
			return FreshResult{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("stake account %s already exists (owner %s, %d lamports): the service served a transaction that is not new; nothing was sent",
					in.NewStakeAccount, acct.Owner, acct.Lamports), activities.ErrStaleTransaction, nil)
		}
	}
	return FreshResult{Signature: in.Signature, NewStakeAccount: in.NewStakeAccount}, nil
}

// ReadStakeState reads a stake account, its activation and the epoch clock.
func (a *Activities) ReadStakeState(ctx context.Context, in StakeStateInput) (StakeState, error) {
	r, err := a.chain(in.Network)
	if err != nil {
		return StakeState{}, err
	}
	acct, err := r.StakeAccount(ctx, in.StakeAccount)
	if err != nil {
		if errors.Is(err, solchain.ErrAccountNotFound) || errors.Is(err, solchain.ErrNotStakeAccount) || errors.Is(err, solchain.ErrMalformedStakeAccount) {
			return StakeState{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("stake account %s: %v", in.StakeAccount, err), activities.ErrStakeAccountState, nil)
		}
		return StakeState{}, chainErr("stake account "+in.StakeAccount, err)
	}
	out := StakeState{StakeAccount: in.StakeAccount, Lamports: acct.Lamports, SlotDuration: a.SlotDuration, RecheckAfter: a.EpochRecheck}
	if acct.Meta == nil {
		return StakeState{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("stake account %s is %s: nothing to unstake or withdraw", in.StakeAccount, acct.State), activities.ErrStakeAccountState, nil)
	}
	out.Staker, out.Withdrawer = acct.Meta.Staker, acct.Meta.Withdrawer
	ei, err := r.EpochInfo(ctx)
	if err != nil {
		return StakeState{}, chainErr("epoch info", err)
	}
	out.Epoch, out.SlotIndex, out.SlotsInEpoch = ei.Epoch, ei.SlotIndex, ei.SlotsInEpoch
	if lk := acct.Meta.Lockup; lk.UnixTimestamp != 0 || lk.Epoch != 0 {
		now, err := r.UnixTime(ctx)
		if err != nil {
			return StakeState{}, chainErr("cluster clock", err)
		}
		out.Lockup = &Lockup{UnixTimestamp: lk.UnixTimestamp, Epoch: lk.Epoch, Custodian: lk.Custodian,
			InForce: lk.UnixTimestamp > now || lk.Epoch > ei.Epoch, ClusterTime: now}
	}
	if acct.Stake == nil {
		out.State = StakeInitialized
		return out, nil
	}
	d := acct.Stake.Delegation
	out.Voter, out.ActivationEpoch = d.Voter, d.ActivationEpoch
	if d.DeactivationEpoch != solchain.NotDeactivating {
		out.Deactivating, out.DeactivationEpoch = true, d.DeactivationEpoch
	}
	act, err := r.StakeActivation(ctx, in.StakeAccount)
	if err != nil {
		return StakeState{}, chainErr("stake activation of "+in.StakeAccount, err)
	}
	out.State = act.State
	return out, nil
}

// chainErr classifies a chain read's error where it enters: a cancellation stays one; a bad
// argument is activities.ErrInvalidInput; an RPC not proven to serve the network is activities.ErrChainUnverified
// (retried: the worker re-checks it); a refusal that asking again will not change is
// activities.ErrChainRejected (see its contract); anything else is activities.ErrChainUnavailable (retried).
func chainErr(what string, err error) error {
	msg := fmt.Sprintf("%s: %v", what, err)
	switch {
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: %w", what, err)
	case errors.Is(err, solchain.ErrInvalidArgument):
		return temporal.NewNonRetryableApplicationError(msg, activities.ErrInvalidInput, nil)
	case errors.Is(err, solchain.ErrNetworkUnverified):
		return temporal.NewApplicationError(msg, activities.ErrChainUnverified)
	case chainRejected(err):
		return temporal.NewNonRetryableApplicationError(msg, activities.ErrChainRejected, nil)
	}
	return temporal.NewApplicationError(msg, activities.ErrChainUnavailable)
}

// chainRejected reports whether err is an RPC refusal that asking again will not change.
func chainRejected(err error) bool {
	var rpcErr *solchain.RPCError
	return errors.As(err, &rpcErr) && !rpcErr.Transient && !errors.Is(err, context.Canceled)
}
