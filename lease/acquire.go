package lease

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/workflows"
)

// Lease is an operation's hold on its address's nonces, from Acquire until Release.
type Lease struct {
	// id is the lease's workflow ID.
	id         string
	workflowID string
	start      uint64
	// Next is the next nonce the operation may use.
	Next uint64
}

// Acquire asks the lease of address on chain's network for its nonces, through request (the
// chain's request activity, which signals the lease and starts it when it is not running), and
// waits for them, resting in StepWaitingNonce. A conflict on chain fails the operation with
// ErrNonceConflict; a cancel while waiting leaves the queue with no nonce used.
func Acquire(ctx workflow.Context, o *workflows.Operation, chain Chain, network, address string, request Requester) (*Lease, error) {
	info := workflow.GetInfo(ctx)
	name, err := workflows.NameInID(ctx, strings.ToLower(address))
	if err != nil {
		return nil, err
	}
	id := IDOf(chain, network, name)
	req := Request{Chain: chain, Network: network, Address: address,
		WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID, Lease: id}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: time.Minute, NonRetryableErrorTypes: activities.NonRetryable},
	})
	if err := o.Get(ctx, workflow.ExecuteActivity(actx, request, req), nil); err != nil {
		return nil, err
	}
	o.SetStep(ctx, StepWaitingNonce)
	o.Flush(ctx)
	g, granted := waitForGrant(ctx, o, id)
	l := &Lease{id: id, workflowID: req.WorkflowID, start: g.Nonce, Next: g.Nonce}
	if !granted {
		// Leave the queue (or give back a lease granted meanwhile) with no nonce used.
		l.Next = 0
		_ = l.Release(ctx)
		return nil, temporal.NewCanceledError("cancelled while waiting for the address's nonce; nothing was sent")
	}
	if g.Error != "" {
		return nil, temporal.NewNonRetryableApplicationError(g.Error, ErrNonceConflict, nil)
	}
	return l, nil
}

// waitForGrant waits for the sequencer's grant, resting in StepWaitingNonce. The operation shows
// itself stalled (status, search attribute, metric, notification) when the sequencer tells it the
// lease does not come (its holder closed without releasing, a release the chain contradicts), and
// when its wait lasts longer than MaxStallWait, naming the operation that holds the lease. It
// reports false when the operation was cancelled first.
func waitForGrant(ctx workflow.Context, o *workflows.Operation, seqID string) (Grant, bool) {
	var (
		g                  Grant
		granted, cancelled bool
		holder             string
		bound              workflow.Future
	)
	every := o.Options().MaxStallWait
	since := workflow.Now(ctx)
	tctx, stopTimer := workflow.WithCancel(ctx)
	defer stopTimer()
	grants := workflow.GetSignalChannel(ctx, SignalGrant)
	notices := workflow.GetSignalChannel(ctx, SignalNotice)
	told := "" // the sequencer's reason, when it told one
	for !granted && !cancelled {
		if bound == nil {
			bound = workflow.NewTimer(tctx, every)
		}
		var notice *Notice
		overdue := false
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(grants, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, &g)
			granted = true
		})
		sel.AddReceive(notices, func(c workflow.ReceiveChannel, _ bool) {
			notice = new(Notice)
			c.Receive(ctx, notice)
		})
		if bound != nil {
			sel.AddFuture(bound, func(f workflow.Future) {
				bound = nil
				overdue = f.Get(ctx, nil) == nil
			})
		}
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) { cancelled = true })
		sel.Select(ctx)
		switch {
		case granted || cancelled:
		case notice != nil:
			if notice.Holder != "" {
				holder = notice.Holder
			}
			if notice.Stalled {
				told = notice.Reason
				o.StallWaiting(ctx, StepWaitingNonce, told, every)
			} else {
				// A new holder: what the sequencer said before no longer holds.
				told = ""
			}
		case overdue && told != "":
			o.StallWaiting(ctx, StepWaitingNonce, told, every)
		case overdue:
			what := "the operation holding it (not told yet: see the lease " + seqID + ")"
			if holder != "" {
				what = "operation " + holder
			}
			o.StallWaiting(ctx, StepWaitingNonce, fmt.Sprintf("waiting since %s for the nonce lease of its address, held by %s",
				since.UTC().Format(time.RFC3339), what), every)
		}
	}
	o.Unstall(ctx, StepWaitingNonce)
	return g, granted
}

// Release gives the lease back with the next unused nonce. It runs on a disconnected context: a
// cancelled operation still frees its address.
func (l *Lease) Release(ctx workflow.Context) error {
	if l == nil {
		return nil
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	return workflow.SignalExternalWorkflow(dctx, l.id, "", SignalRelease,
		Release{WorkflowID: l.workflowID, Next: l.Next}).Get(dctx, nil)
}
