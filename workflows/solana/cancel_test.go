package solana

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	"github.com/stakeflow/stakeflow/workflows"
)

// Cancellation at each point of an operation (docs/exactly-once.md "Cancelling before the first broadcast ends
// the operation with nothing sent; after it, the workflow still follows the transaction to its end
// and reports cancelRequested"). TestCancelWhileAwaitingApproval, TestCancelDuringBuildSendsNothing,
// TestCancelAfterBroadcastStillConfirms (cancel during confirm) and
// TestCancelDuringDeactivationWaitSendsNoWithdraw are in workflows_test.go.

// cancelled records the activities the test environment cancelled.
type cancelled struct {
	mu    sync.Mutex
	names []string
}

func (s *WorkflowSuite) recordCancelled() *cancelled {
	c := &cancelled{}
	s.env.SetOnActivityCanceledListener(func(info *activity.Info) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.names = append(c.names, info.ActivityType.Name)
	})
	return c
}

func (c *cancelled) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.names...)
}

// cancelReason is the detail a workflow's CanceledError carries (the workflow's own words).
func cancelReason(err error) string {
	var ce *temporal.CanceledError
	if !errors.As(err, &ce) || !ce.HasDetails() {
		return ""
	}
	var reason string
	if ce.Details(&reason) != nil {
		return ""
	}
	return reason
}

func (s *WorkflowSuite) requireCancelled() {
	s.Require().True(s.env.IsWorkflowCompleted())
	s.Require().True(temporal.IsCanceledError(s.env.GetWorkflowError()), "got %v", s.env.GetWorkflowError())
}

// TestCancelWhileCheckingValidatorBuildsNothing: a cancel while the named validator is checked (the
// last step before the first build) ends the operation cancelled, with nothing built.
func (s *WorkflowSuite) TestCancelWhileCheckingValidatorBuildsNothing() {
	s.mockUnexpected("Build", "Broadcast")
	s.mockPolicy(false)
	s.env.OnActivity(a.CheckValidator, mock.Anything, mock.Anything).After(time.Minute).Return(actsolana.ValidatorCheckResult{Status: "active"}, nil)
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, 10*time.Second)
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.requireCancelled()
	s.env.AssertNotCalled(s.T(), "Build", mock.Anything, mock.Anything)
	s.env.AssertNotCalled(s.T(), "Broadcast", mock.Anything, mock.Anything)
	st := s.status()
	s.Equal(workflows.StepCancelled, st.Step)
	s.Empty(st.Attempts)
	s.Equal(workflows.StepCancelled, s.sa[workflows.SAStep.GetName()])
}

// TestCancelWhileCheckingPolicyBuildsNothing: a cancel while the policy is checked ends the
// operation cancelled, with nothing built.
func (s *WorkflowSuite) TestCancelWhileCheckingPolicyBuildsNothing() {
	s.mockUnexpected("Build", "Broadcast")
	s.env.OnActivity(a.CheckPolicy, mock.Anything, mock.Anything).After(time.Minute).Return(activities.PolicyDecision{}, nil)
	s.env.OnActivity(a.CheckValidator, mock.Anything, mock.Anything).Return(actsolana.ValidatorCheckResult{Status: "active"}, nil).Maybe()
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, 10*time.Second)
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.requireCancelled()
	s.env.AssertNotCalled(s.T(), "Build", mock.Anything, mock.Anything)
	s.env.AssertNotCalled(s.T(), "Broadcast", mock.Anything, mock.Anything)
	s.Equal(workflows.StepCancelled, s.status().Step)
}

// TestCancelAfterSignBeforeBroadcastSendsNothing: a cancel that arrives while the chain is asked
// whether the signed transaction is new ends the operation with nothing broadcast; the attempt
// says "not-sent".
func (s *WorkflowSuite) TestCancelAfterSignBeforeBroadcastSendsNothing() {
	s.mockUnexpected("Broadcast", "Confirm")
	c := &chain{}
	s.mockPolicy(false)
	s.env.OnActivity(a.CheckValidator, mock.Anything, mock.Anything).Return(actsolana.ValidatorCheckResult{}, nil)
	s.env.OnActivity(a.Build, mock.Anything, mock.Anything).Return(c.build)
	s.env.OnActivity(a.Sign, mock.Anything, mock.Anything).Return(c.sign)
	// The cancel arrives while CheckFresh runs (before its answer that the transaction is new).
	s.env.OnActivity(a.CheckFresh, mock.Anything, mock.Anything).Return(func(ctx context.Context, in actsolana.FreshInput) (actsolana.FreshResult, error) {
		res, err := c.checkFresh(ctx, in)
		s.env.CancelWorkflow()
		return res, err
	})
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.requireCancelled()
	s.env.AssertNotCalled(s.T(), "Broadcast", mock.Anything, mock.Anything)
	s.env.AssertNotCalled(s.T(), "Confirm", mock.Anything, mock.Anything)
	s.Len(c.signs, 1, "signed once")
	s.Len(c.fresh, 1)
	st := s.status()
	s.Equal(workflows.StepCancelled, st.Step)
	s.Require().Len(st.Attempts, 1)
	s.Equal("not-sent", st.Attempts[0].Outcome)
	s.True(st.Attempts[0].BroadcastAt.IsZero(), "never broadcast")
	s.Empty(st.Transactions)
	s.False(st.CancelRequested, "cancelled before anything was sent, not a cancel after it")
}

// TestCancelDuringBroadcastStillSendsAndConfirms: a cancel while the broadcast runs does not cut it
// short (it runs on a disconnected context): the transaction is followed to finalized and the
// result reports CancelRequested.
func (s *WorkflowSuite) TestCancelDuringBroadcastStillSendsAndConfirms() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockThroughSign(c)
	cancels := s.recordCancelled()
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).After(time.Minute).Return(c.broadcast)
	confirms := &clock{}
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(func(context.Context, actsolana.ConfirmInput) (actsolana.ConfirmResult, error) {
		confirms.tick(s.env.Now())
		return actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 5, Fee: 5000}, nil
	})
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, 10*time.Second)
	start := s.env.Now()
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	r := s.result()
	s.True(r.CancelRequested)
	s.Require().Len(r.Transactions, 1)
	s.Equal("sig-1", r.Transactions[0].TxID)
	s.Empty(cancels.all(), "no activity was cancelled: the broadcast ran to its end")
	s.Require().Len(c.broadcasts, 1)
	s.Equal("signed-1", c.broadcasts[0].SignedTransaction)
	times := confirms.all()
	s.Require().Len(times, 1)
	s.GreaterOrEqual(times[0].Sub(start), time.Minute, "confirmation began once the broadcast had finished")
	st := s.status()
	s.Equal(workflows.StepDone, st.Step)
	s.True(st.CancelRequested)
	s.Equal(1, c.builds)
}

// TestCancelDuringConfirmThatExpiresRebuildsNothing: a cancel while a transaction is confirmed,
// which then proves it expired, ends the operation cancelled; nothing is built again.
func (s *WorkflowSuite) TestCancelDuringConfirmThatExpiresRebuildsNothing() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockThroughSign(c)
	cancels := s.recordCancelled()
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(c.broadcast)
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).After(time.Minute).
		Return(actsolana.ConfirmResult{Outcome: activities.OutcomeCannotLand}, nil).Once()
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, 10*time.Second)
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.requireCancelled()
	s.Contains(cancelReason(s.env.GetWorkflowError()), "expired without landing")
	s.Empty(cancels.all(), "the confirmation was followed to its end")
	s.Equal(1, c.builds, "nothing is rebuilt after the expiry")
	s.Len(c.signs, 1)
	s.Len(c.broadcasts, 1)
	st := s.status()
	s.Equal(workflows.StepCancelled, st.Step)
	s.Require().Len(st.Attempts, 1)
	s.Equal(activities.OutcomeCannotLand, st.Attempts[0].Outcome)
	s.Empty(st.Transactions)
}
