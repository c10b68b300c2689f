package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	solchain "github.com/stakeflow/stakeflow/chain/solana"
)

// SolanaReader is the read-only chain access the activities use.
type SolanaReader interface {
	SignatureStatus(ctx context.Context, sig string) (*solchain.SignatureStatus, error)
	BlockHeight(ctx context.Context) (uint64, error)
	IsBlockhashValid(ctx context.Context, blockhash string) (bool, error)
	EpochInfo(ctx context.Context) (*solchain.EpochInfo, error)
	StakeAccount(ctx context.Context, addr string) (*solchain.StakeAccount, error)
	StakeActivation(ctx context.Context, addr string) (*solchain.StakeActivation, error)
}

var _ SolanaReader = (*solchain.Client)(nil)

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
			fmt.Sprintf("this worker has no RPC endpoint for network %s", network), ErrInvalidInput, nil)
	}
	return r, nil
}

// Confirm follows a sent transaction until it is finalized, failed on chain, or provably unable
// to land: its signature is absent, its blockhash is no longer valid, and the finalized block
// height has moved ExpiryMarginBlocks past the height seen when confirmation began. It resumes
// from its last heartbeat when retried.
//
// A transaction already final at the first look costs one read and no heartbeat. The height that
// starts the expiry margin is read the first time the signature is found absent (a later start
// only makes the proof of expiry stricter), and heartbeats begin once the confirmation has lasted
// ConfirmHeartbeatAfter: a retry without them reads a new, later start height, which again only
// delays a proof of expiry, never hastens it.
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
	for {
		st, err := r.SignatureStatus(ctx, in.Signature)
		if err != nil {
			return ConfirmResult{}, chainErr("signature status of "+in.Signature, err)
		}
		switch {
		case st.Found && st.Err != "":
			logger.Warn("Transaction failed on chain", "txSig", in.Signature, "slot", st.Slot, "error", st.Err)
			return ConfirmResult{Outcome: OutcomeFailed, Slot: st.Slot, Error: st.Err}, nil
		case st.Found && st.Finalized():
			return ConfirmResult{Outcome: OutcomeFinalized, Slot: st.Slot}, nil
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
				return ConfirmResult{Outcome: OutcomeExpired}, nil
			}
		}
		if time.Since(began) >= quiet {
			activity.RecordHeartbeat(ctx, progress)
		}
		select {
		case <-ctx.Done():
			return ConfirmResult{}, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// confirmQuiet is how long Confirm runs before it starts heartbeating (at most a quarter of the
// activity's heartbeat timeout). Each heartbeat is a write on the Temporal server; a transaction
// that finalizes within it needs none.
const confirmQuiet = 5 * time.Second

// provenExpired reports whether an absent transaction can no longer land.
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
	return !st.Found, nil
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
				fmt.Sprintf("stake account %s: %v", in.StakeAccount, err), ErrStakeAccountState, nil)
		}
		return StakeState{}, chainErr("stake account "+in.StakeAccount, err)
	}
	out := StakeState{StakeAccount: in.StakeAccount, Lamports: acct.Lamports, SlotDuration: a.SlotDuration, RecheckAfter: a.EpochRecheck}
	if acct.Meta == nil {
		return StakeState{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("stake account %s is %s: nothing to unstake or withdraw", in.StakeAccount, acct.State), ErrStakeAccountState, nil)
	}
	out.Staker, out.Withdrawer = acct.Meta.Staker, acct.Meta.Withdrawer
	ei, err := r.EpochInfo(ctx)
	if err != nil {
		return StakeState{}, chainErr("epoch info", err)
	}
	out.Epoch, out.SlotIndex, out.SlotsInEpoch = ei.Epoch, ei.SlotIndex, ei.SlotsInEpoch
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

func chainErr(what string, err error) error {
	if errors.Is(err, solchain.ErrInvalidArgument) {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: %v", what, err), ErrInvalidInput, nil)
	}
	return temporal.NewApplicationError(fmt.Sprintf("%s: %v", what, err), ErrChainUnavailable)
}
