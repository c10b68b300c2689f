package solana

import (
	"context"
	"sync"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	"github.com/stakeflow/stakeflow/workflows"
)

// The tests in this file pin the defaults docs/exactly-once.md, docs/configuration.md and docs/reliability.md state, as an operation
// started with zero workflows.Options gets them: each fails when the default changes. The numbers are
// written out here on purpose, not read from the code.

// clock records the workflow time of each call of a fake.
type clock struct {
	mu    sync.Mutex
	times []time.Time
}

func (c *clock) tick(now time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.times = append(c.times, now)
	return len(c.times)
}

func (c *clock) all() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.times...)
}

func gaps(times []time.Time) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(times); i++ {
		out = append(out, times[i].Sub(times[i-1]))
	}
	return out
}

// TestDefaultMaxBuildsIsThree: docs/exactly-once.md "At most three builds per step". With zero workflows.Options, three
// transactions that each expire end the operation TooManyBuilds, and a fourth is never built.
func (s *WorkflowSuite) TestDefaultMaxBuildsIsThree() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockThroughSign(c)
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(c.broadcast)
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeCannotLand}, nil)
	in := stakeInput()
	s.Require().Zero(in.Options)
	s.env.ExecuteWorkflow(StakeWorkflow, in)

	s.Equal(workflows.ErrTooManyBuilds, s.workflowErrorType())
	s.Contains(s.env.GetWorkflowError().Error(), "3 transactions built, each proven unable to land")
	s.Equal(3, c.builds, "three builds, and no fourth")
	s.Len(c.signs, 3)
	s.Len(c.broadcasts, 3)
	st := s.status()
	s.Require().Len(st.Attempts, 3)
	for i, at := range st.Attempts {
		s.Equal(i+1, at.Build)
		s.Equal(activities.OutcomeCannotLand, at.Outcome)
	}
}

// TestDefaultApprovalTimeoutIs24h: workflows.Options.ApprovalTimeout "Default 24h". An operation nobody
// decides on still waits at 23h59m and times out at 24h, with nothing built.
func (s *WorkflowSuite) TestDefaultApprovalTimeoutIs24h() {
	s.mockUnexpected("Build")
	s.mockPolicy(true)
	var before workflows.Status
	s.env.RegisterDelayedCallback(func() { before = s.status() }, 24*time.Hour-time.Minute)
	start := s.env.Now()
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.Equal(workflows.ErrApprovalTimeout, s.workflowErrorType())
	s.Equal(workflows.StepAwaitingApproval, before.Step, "still waiting a minute before 24h")
	s.Equal(24*time.Hour, s.env.Now().Sub(start), "timed out at 24h")
	s.Contains(s.env.GetWorkflowError().Error(), "within 24h0m0s")
	s.env.AssertNotCalled(s.T(), "Build", mock.Anything, mock.Anything)
}

// scheduleToClose returns a fake of an activity that records the ScheduleToCloseTimeout the
// workflow gave it (the bound of its retries) and answers with ret.
func scheduleToClose[In, Out any](got *time.Duration, mu *sync.Mutex, ret func() (Out, error)) func(context.Context, In) (Out, error) {
	return func(ctx context.Context, _ In) (Out, error) {
		mu.Lock()
		*got = activity.GetInfo(ctx).ScheduleToCloseTimeout
		mu.Unlock()
		return ret()
	}
}

// TestDefaultBroadcastTimeoutIs2m: workflows.Options.BroadcastTimeout "Default 2m": with zero workflows.Options the
// retries of one broadcast (the same bytes re-sent) are bounded by 2 minutes before the chain
// decides. (The test environment stops retries after 10 attempts, so the bound is read where the
// activity sees it.)
func (s *WorkflowSuite) TestDefaultBroadcastTimeoutIs2m() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockThroughSign(c)
	var mu sync.Mutex
	var bound time.Duration
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(scheduleToClose[actsolana.BroadcastInput](&bound, &mu,
		func() (actsolana.BroadcastResult, error) { return actsolana.BroadcastResult{Signature: "sig-1"}, nil }))
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 7}, nil)
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.result()
	mu.Lock()
	defer mu.Unlock()
	s.Equal(2*time.Minute, bound)
}

// TestDefaultBuildTimeoutIs30m: workflows.Options.BuildTimeout "Default 30m": with zero workflows.Options and nothing
// sent, a failing service is retried for at most 30 minutes, then the operation fails.
func (s *WorkflowSuite) TestDefaultBuildTimeoutIs30m() {
	s.mockPolicy(false)
	s.mockValidator()
	s.mockUnexpected("Broadcast")
	var mu sync.Mutex
	var bound time.Duration
	s.env.OnActivity(a.Build, mock.Anything, mock.Anything).Return(scheduleToClose[actsolana.Intent](&bound, &mu,
		func() (actsolana.BuildResult, error) {
			return actsolana.BuildResult{}, temporal.NewApplicationError("503 ServiceUnavailableException", activities.ErrServiceUnavailable)
		}))
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.Require().True(s.env.IsWorkflowCompleted())
	s.Require().Error(s.env.GetWorkflowError())
	s.Equal(workflows.StepFailed, s.status().Step)
	mu.Lock()
	defer mu.Unlock()
	s.Equal(30*time.Minute, bound)
	s.env.AssertNotCalled(s.T(), "Broadcast", mock.Anything, mock.Anything)
}

// TestDefaultMaxStallWaitIs10m: docs/exactly-once.md "tries again on a backoff up to maxStallWait (10 minutes)".
// A confirmation the RPC keeps refusing is tried again 30 s, 1, 2, 4, 8 minutes later, then every
// 10 minutes.
func (s *WorkflowSuite) TestDefaultMaxStallWaitIs10m() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockThroughSign(c)
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(c.broadcast)
	tries := &clock{}
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(func(context.Context, actsolana.ConfirmInput) (actsolana.ConfirmResult, error) {
		if tries.tick(s.env.Now()) <= 8 {
			return actsolana.ConfirmResult{}, temporal.NewNonRetryableApplicationError("solana rpc: 403 Forbidden", activities.ErrChainRejected, nil)
		}
		return actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 9}, nil
	})
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.result()
	s.Equal([]time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute,
		10 * time.Minute, 10 * time.Minute, 10 * time.Minute}, gaps(tries.all()))
}

// deactivating is a stake account read while deactivating, slotsLeft slots before its epoch ends,
// after the first read (active) and until reads run out (then inactive).
func deactivating(reads *clock, now func() time.Time, slotsInEpoch, slotsLeft uint64, deactivatingReads int) func(context.Context, actsolana.StakeStateInput) (actsolana.StakeState, error) {
	return func(_ context.Context, in actsolana.StakeStateInput) (actsolana.StakeState, error) {
		st := stakeStateRead(reads.tick(now()), actsolana.StakeActive, in.StakeAccount, deactivatingReads)
		st.SlotIndex, st.SlotsInEpoch = slotsInEpoch-slotsLeft, slotsInEpoch
		return st, nil
	}
}

// TestDefaultEpochWaitRechecksHourly: docs/exactly-once.md "durable timers sized from the slots left in the epoch
// (re-reading the stake account after each, at least hourly)"; workflows.Options.MaxEpochWait "Default 1h".
// With an epoch far from its end and no recheck asked by the worker, the stake account is read
// again every hour of workflow time.
func (s *WorkflowSuite) TestDefaultEpochWaitRechecksHourly() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockHappyChain(c)
	reads := &clock{}
	// 10 million slots left: 46 days at 400 ms.
	s.env.OnActivity(a.ReadStakeState, mock.Anything, mock.Anything).Return(deactivating(reads, s.env.Now, 20_000_000, 10_000_000, 5))
	s.env.ExecuteWorkflow(UnstakeWorkflow, UnstakeInput{Network: "mainnet-beta", Staker: staker, StakeAccount: stakeAcc})

	r := s.result()
	s.Require().Len(r.Transactions, 2)
	times := reads.all()
	s.Require().Len(times, 1+5+1)
	// The first read is before the deactivation; then the deactivation itself (no timer); then each
	// read after a wait.
	for i, g := range gaps(times[1:]) {
		s.Equal(time.Hour, g, "wait %d", i+1)
	}
}

// TestDefaultEpochWaitIsSizedFromTheSlotsLeft: the wait for an epoch's end is the slots left, plus
// one, times the default slot time of 400 ms, not a flat cap.
func (s *WorkflowSuite) TestDefaultEpochWaitIsSizedFromTheSlotsLeft() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockHappyChain(c)
	reads := &clock{}
	s.env.OnActivity(a.ReadStakeState, mock.Anything, mock.Anything).Return(deactivating(reads, s.env.Now, 432_000, 100, 2))
	var waiting workflows.Status
	s.env.RegisterDelayedCallback(func() { waiting = s.status() }, 10*time.Second)
	start := s.env.Now()
	s.env.ExecuteWorkflow(UnstakeWorkflow, UnstakeInput{Network: "testnet", Staker: staker, StakeAccount: stakeAcc})

	s.result()
	times := reads.all()
	s.Require().Len(times, 1+2+1)
	want := 101 * 400 * time.Millisecond // 40.4 s
	for i, g := range gaps(times[1:]) {
		s.Equal(want, g, "wait %d", i+1)
	}
	s.Equal(StepWaitingDeactivation, waiting.Step)
	s.True(start.Add(want).Equal(waiting.WaitingUntil), "waiting until %s", waiting.WaitingUntil)
}
