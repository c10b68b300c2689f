package solana

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actsolana "github.com/stakeflow/stakeflow/activities/solana"
)

// StakeWorkflow stakes lamports from the staker into a new stake account delegated to a vote
// account: validate, balance pre-flight, policy and approval, validator pre-flight, build, verify and sign, broadcast,
// confirm to finalized.
func StakeWorkflow(ctx workflow.Context, in StakeInput) (Result, error) {
	if err := in.Validate(); err != nil {
		return Result{}, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrInvalidInput, nil)
	}
	intent := actsolana.Intent{
		Operation: actsolana.OpStake, Chain: Chain, Network: in.Network,
		Staker: in.Staker, Lamports: in.Lamports, VoteAccount: in.VoteAccount,
	}
	o, err := newOperation(ctx, intent, in.Options, in.RequestedBy)
	if err != nil {
		return Result{}, err
	}
	if err := o.runStake(ctx); err != nil {
		return Result{}, o.Fail(ctx, err)
	}
	o.Done(ctx)
	return o.result(), nil
}

func (o *operation) runStake(ctx workflow.Context) error {
	if err := o.preflight(ctx, actsolana.OpStake); err != nil {
		return err
	}
	if err := o.checkPolicy(ctx); err != nil {
		return err
	}
	if o.intent.VoteAccount != "" {
		if err := o.checkValidator(ctx, o.intent.VoteAccount); err != nil {
			return err
		}
	}
	_, err := o.transact(ctx, o.intent)
	return err
}
