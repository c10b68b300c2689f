package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities/notify"
)

// NotifyWorkflowType is the workflow type of one event's delivery (NotifyWorkflow).
const NotifyWorkflowType = "StakeflowNotify"

// nf is the nil Notifier the workflows name its activities through.
var nf *notify.Notifier

// NotifyOptions: the post of one event, retried with backoff for a day (a receiver that is down
// delays the event, never the operation), each attempt bounded.
func NotifyOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: 24 * time.Hour,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute,
			NonRetryableErrorTypes: []string{"InvalidEvent", "InvalidWebhook"},
		},
	}
}

// NotifyWorkflow delivers one event of an operation (its ID is the event's): an operation starts
// it as a child it abandons, so the delivery outlives the operation and never holds it up.
func NotifyWorkflow(ctx workflow.Context, ev notify.Event) error {
	actx := workflow.WithActivityOptions(ctx, NotifyOptions())
	return workflow.ExecuteActivity(actx, nf.Notify, ev).Get(ctx, nil)
}

// notifySetup asks the worker, once per operation, whether it posts events. The answer is
// recorded (a local activity), so a replay takes the same path.
func (o *Operation) notifySetup(ctx workflow.Context) {
	lctx := workflow.WithLocalActivityOptions(ctx, PolicyOptions())
	var cfg notify.Config
	if err := workflow.ExecuteLocalActivity(lctx, nf.NotifyConfig).Get(ctx, &cfg); err != nil {
		// Notifications never stop an operation.
		o.logger.Warn("Notifications off for this operation: the worker's answer failed", "error", err)
		return
	}
	o.notifyOn = cfg.Enabled
}

// notify posts an event of type typ, when the worker has a webhook: it starts the event's
// delivery as an abandoned child workflow and waits only for its start. It runs on a
// disconnected context, so that a cancelled operation still tells.
func (o *Operation) notify(ctx workflow.Context, typ string) {
	if !o.notifyOn {
		return
	}
	o.notified[typ]++
	id := o.status.OperationID + "/" + typ
	if n := o.notified[typ]; n > 1 {
		id = fmt.Sprintf("%s/%d", id, n)
	}
	ev := notify.Event{
		ID: id, Type: typ, At: workflow.Now(ctx), OperationID: o.status.OperationID,
		Chain: o.status.Chain, Network: o.status.Network, Operation: o.status.Operation, Staker: o.status.Staker,
		Amount: o.status.Amount, Unit: o.status.Unit, Step: o.status.Step, TxIDs: o.TxIDs(),
	}
	if st := o.status.Stall; st != nil && typ == notify.EventStalled {
		ev.Step, ev.Reason = st.Step, st.LastError
		if st.WaysOut != "" {
			ev.Reason += "; ways out: " + st.WaysOut
		}
	}
	if typ == notify.EventFailed {
		ev.Reason = o.status.Reason
	}
	ev.Text = o.eventText(ev)
	// Never cancelled: cancelling the context a child was started on cancels the child.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	cctx := workflow.WithChildOptions(dctx, workflow.ChildWorkflowOptions{
		WorkflowID:            id,
		ParentClosePolicy:     enums.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		StaticSummary:         "notify: " + typ + " of " + o.status.OperationID,
	})
	child := workflow.ExecuteChildWorkflow(cctx, NotifyWorkflowType, ev)
	if err := child.GetChildWorkflowExecution().Get(dctx, nil); err != nil {
		o.logger.Warn("Event not posted: its delivery could not start", "event", typ, "error", err)
	}
}

// eventText is the event in one line for people.
func (o *Operation) eventText(ev notify.Event) string {
	what := fmt.Sprintf("%s %s by %s on %s %s", o.status.Operation, o.amount(o.status.Amount), o.status.Staker, o.status.Chain, o.status.Network)
	if o.status.Amount == "" {
		what = fmt.Sprintf("%s by %s on %s %s", o.status.Operation, o.status.Staker, o.status.Chain, o.status.Network)
	}
	switch ev.Type {
	case notify.EventAwaitingApproval:
		return fmt.Sprintf("stakeflow: %s awaits approval (%s)", what, ev.OperationID)
	case notify.EventStalled:
		return fmt.Sprintf("stakeflow: %s stalled at %s: %s (%s)", what, ev.Step, ev.Reason, ev.OperationID)
	case notify.EventFailed:
		return fmt.Sprintf("stakeflow: %s failed: %s (%s)", what, ev.Reason, ev.OperationID)
	case notify.EventCancelled:
		return fmt.Sprintf("stakeflow: %s cancelled (%s)", what, ev.OperationID)
	}
	return fmt.Sprintf("stakeflow: %s completed (%s)", what, ev.OperationID)
}
