package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities/notify"
)

// StallWaiting shows the operation stalled while it waits in step for something outside it that
// does not come (another operation's nonce lease, say): status (Stall, step stalled), search
// attribute, Web UI details, the stalled metric once, and a notification the first time and
// whenever the reason changes. nextCheck is when the wait is looked at again. Unstall ends it.
func (o *Operation) StallWaiting(ctx workflow.Context, step, reason string, nextCheck time.Duration) {
	now := workflow.Now(ctx)
	st := o.status.Stall
	tell := st == nil || st.LastError != reason
	if st == nil {
		o.metrics.stalled()
		st = &Stall{Step: step, Since: now}
	}
	st.Tries++
	st.LastError, st.NextTryAt = reason, now.Add(nextCheck)
	o.status.Stall = st
	o.logger.Warn("Operation stalled", "step", step, "tries", st.Tries, "reason", reason)
	o.SetStep(ctx, StepStalled)
	if tell {
		o.notify(ctx, notify.EventStalled)
	}
}

// Unstall ends a stall recorded by StallWaiting: the operation is back in step.
func (o *Operation) Unstall(ctx workflow.Context, step string) {
	if o.status.Stall == nil {
		return
	}
	o.status.Stall = nil
	o.SetStep(ctx, step)
	o.Flush(ctx)
}
