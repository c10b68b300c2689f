package ton

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actton "github.com/stakeflow/stakeflow/activities/ton"
	"github.com/stakeflow/stakeflow/workflows"
)

// ta is the nil Activities pointer the workflows name TON activities through.
var ta *actton.Activities

// Watch (workflow type TONWatchWorkflow) follows a transaction until the service reports it
// final, and returns it; not found within the deadline, it fails naming the hash.
func Watch(ctx workflow.Context, in WatchInput) (WatchResult, error) {
	if err := in.Validate(); err != nil {
		return WatchResult{}, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrInvalidInput, nil)
	}
	hash, _ := actton.NormalizeHash(in.Hash)
	o, err := workflows.NewOperation(ctx, workflows.Setup{
		Chain: Chain, Network: in.Network, Operation: OpWatch, Unit: Unit,
		RequestedBy: in.RequestedBy, Options: in.Options,
		Labels: workflows.Labels{Account: "account", Block: "lt"},
	})
	if err != nil {
		return WatchResult{}, err
	}
	deadline := in.Deadline
	if deadline == 0 {
		deadline = DefaultDeadline
	}
	tx, err := Confirm(ctx, o, in.Network, hash, deadline)
	if err != nil {
		return WatchResult{}, o.Fail(ctx, err)
	}
	o.Done(ctx)
	return WatchResult{Operation: OpWatch, Network: in.Network, Transaction: tx}, nil
}

// Confirm is the confirm step of a TON operation: it follows the transaction hash (normalised)
// until the service reports it final, for at most deadline, in the confirming step, and records
// the account it belongs to. Not found by then, it fails with actton.ErrTransactionNotFound
// naming the hash.
func Confirm(ctx workflow.Context, o *workflows.Operation, network, hash string, deadline time.Duration) (actton.Transaction, error) {
	o.SetStep(ctx, workflows.StepConfirming)
	o.Flush(ctx)
	in := actton.ConfirmInput{Network: network, Hash: hash, Deadline: workflow.Now(ctx).Add(deadline)}
	actx := workflow.WithActivityOptions(ctx, confirmOptions(deadline))
	var tx actton.Transaction
	err := o.Get(ctx, workflow.ExecuteActivity(actx, ta.TONConfirm, in), &tx)
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		// The worker was away past the deadline: the transaction was not found in time either.
		err = temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("TON transaction %s not found on %s within %s", hash, network, deadline), actton.ErrTransactionNotFound, err)
	}
	if err != nil {
		return tx, err
	}
	o.SetAccount(tx.Account)
	o.Logger().Info("TON transaction final", "txHash", tx.Hash, "account", tx.Account, "lt", tx.Lt, "polls", tx.Polls)
	return tx, nil
}

// confirmOptions: TONConfirm polls within one attempt, heartbeating; an attempt lost with its
// worker is retried until the deadline (and a minute for the last read).
func confirmOptions(deadline time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		ScheduleToCloseTimeout: deadline + time.Minute,
		HeartbeatTimeout:       workflows.ConfirmHeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			NonRetryableErrorTypes: append([]string{actton.ErrTransactionNotFound}, activities.NonRetryable...),
		},
	}
}
