package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stakeflow/stakeflow/apiclient"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/signer"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// Bare runs the stake sequence in a plain Go program, without Temporal: the same service calls,
// verification, signing and confirmation as StakeWorkflow's activities, called directly.
type Bare struct {
	// Service is the staking service, Signer verifies and signs with the keys in Keys, Chain
	// reads signature statuses; Network is the Solana network operations name.
	Service *apiclient.Client
	Signer  *signer.Solana
	Keys    *signer.SolanaKeyring
	Chain   *solchain.Client
	Network string
	// Poll is the pause between signature status reads, as the workflow's ConfirmPollInterval.
	Poll time.Duration
}

// ErrNoKey is returned when the bare client holds no key for the staker.
var ErrNoKey = errors.New("no key for staker")

// Stake stakes lamports from staker to vote and follows the transaction until it is finalized.
// It returns the new stake account.
func (b *Bare) Stake(ctx context.Context, staker, vote string, lamports uint64) (string, error) {
	return b.stake(ctx, staker, vote, lamports, true)
}

// StakeUnchecked is Stake without the validator status call. It prepares stake accounts fast:
// the sandbox answers that call by scanning every stake account, so it slows as they grow.
func (b *Bare) StakeUnchecked(ctx context.Context, staker, vote string, lamports uint64) (string, error) {
	return b.stake(ctx, staker, vote, lamports, false)
}

func (b *Bare) stake(ctx context.Context, staker, vote string, lamports uint64, checkValidator bool) (string, error) {
	if !b.Keys.Has(staker) {
		return "", fmt.Errorf("%w %s", ErrNoKey, staker)
	}
	if checkValidator {
		res, err := b.Service.SolanaValidatorStatus(ctx, b.Network, []string{vote})
		if err != nil {
			return "", fmt.Errorf("validator status: %w", err)
		}
		if err := checkActive(res, vote); err != nil {
			return "", err
		}
	}
	tx, err := b.Service.Stake(ctx, apiclient.StakeRequest{
		Chain: wfsolana.Chain, Network: b.Network, StakerAddress: staker, Amount: strconv.FormatUint(lamports, 10),
	})
	if err != nil {
		return "", fmt.Errorf("build stake: %w", err)
	}
	signed, err := b.Signer.Sign(ctx, tx.UnsignedTransactionData, signer.Intent{
		Chain: wfsolana.Chain, Network: b.Network, Operation: signer.OpStake, Staker: staker, Lamports: lamports, VoteAccount: vote,
	})
	if err != nil {
		return "", fmt.Errorf("sign stake: %w", err)
	}
	if err := b.sendAndConfirm(ctx, staker, signed); err != nil {
		return "", err
	}
	return signed.StakeAccount, nil
}

// Deactivate deactivates a stake account of lamports and follows the transaction until it is
// finalized.
func (b *Bare) Deactivate(ctx context.Context, staker, stakeAccount string, lamports uint64) error {
	tx, err := b.Service.Unstake(ctx, apiclient.UnstakeRequest{
		Chain: wfsolana.Chain, Network: b.Network, StakerAddress: staker,
		Extra: apiclient.UnstakeExtra{Amount: strconv.FormatUint(lamports, 10), StakeAccount: stakeAccount},
	})
	if err != nil {
		return fmt.Errorf("build unstake: %w", err)
	}
	signed, err := b.Signer.Sign(ctx, tx.UnsignedTransactionData, signer.Intent{
		Chain: wfsolana.Chain, Network: b.Network, Operation: signer.OpUnstake, Staker: staker, StakeAccount: stakeAccount,
	})
	if err != nil {
		return fmt.Errorf("sign unstake: %w", err)
	}
	return b.sendAndConfirm(ctx, staker, signed)
}

func (b *Bare) sendAndConfirm(ctx context.Context, staker string, signed *signer.Signed) error {
	if _, err := b.Service.Broadcast(ctx, apiclient.BroadcastRequest{
		Chain: wfsolana.Chain, Network: b.Network, StakerAddress: staker, SignedTransaction: signed.SignedTransaction,
	}); err != nil {
		return fmt.Errorf("broadcast %s: %w", signed.Signature, err)
	}
	// Confirm reads the block height first, as the Confirm activity does for its expiry baseline.
	if _, err := b.Chain.BlockHeight(ctx); err != nil {
		return fmt.Errorf("block height: %w", err)
	}
	for {
		st, err := b.Chain.SignatureStatus(ctx, signed.Signature)
		if err != nil {
			return fmt.Errorf("signature status of %s: %w", signed.Signature, err)
		}
		switch {
		case st.Found && st.Err != "":
			return fmt.Errorf("transaction %s failed on chain: %s", signed.Signature, st.Err)
		case st.Found && st.Finalized():
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(b.Poll):
		}
	}
}

// checkActive refuses a vote account the service does not report active.
func checkActive(res *apiclient.ValidatorStatusResult, vote string) error {
	p, err := res.ParseStatuses()
	if err != nil {
		return fmt.Errorf("validator status of %s: %w", vote, err)
	}
	status := p.Text
	switch p.Form {
	case apiclient.StatusesString:
		// The status text may itself hold a JSON map or list of statuses.
		inner := apiclient.ValidatorStatusResult{Statuses: []byte(p.Text)}
		if q, err := inner.ParseStatuses(); err == nil && q.Form != apiclient.StatusesString {
			return checkActive(&inner, vote)
		}
	case apiclient.StatusesMap:
		status = p.Map[vote]
	case apiclient.StatusesList:
		if len(p.List) == 1 {
			status = p.List[0]
		}
	}
	if !strings.EqualFold(status, "active") {
		return fmt.Errorf("vote account %s is %q, not active", vote, status)
	}
	return nil
}
