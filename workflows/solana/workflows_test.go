package solana

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"github.com/stretchr/testify/suite"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/activities/notify"
	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	"github.com/stakeflow/stakeflow/workflows"
)

const (
	staker   = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
	vote     = "Vote111111111111111111111111111111111111111"
	vote2    = "CertusDeBmqN8ZawdkxK5kFGMwBXdudvWHYwtNgNhvLu"
	stakeAcc = "5Q544fKrFoe6tsEbD7S8EmxGTJYAKtTVhAW5Q5pge4j1"
	lamports = uint64(2_000_000_000)
)

type WorkflowSuite struct {
	suite.Suite
	testsuite.WorkflowTestSuite
	env *testsuite.TestWorkflowEnvironment
	// sa holds the latest value of every search attribute the workflow upserted, by name;
	// upserts counts the upsert calls (each is a history event and a visibility write).
	sa      map[string]any
	upserts int
	// upserted lists, per upsert, the attribute names it carried (sorted); steps the
	// StakeflowStep values sent, in order.
	upserted [][]string
	steps    []string
	// preflights are the balance pre-flights run, in order; preflightErr, when set, answers the
	// n-th (from 1).
	preflights   []actsolana.PreflightInput
	preflightErr func(n int) error
}

func TestWorkflows(t *testing.T) { suite.Run(t, new(WorkflowSuite)) }

func (s *WorkflowSuite) SetupTest() {
	s.env = s.NewTestWorkflowEnvironment()
	s.env.RegisterWorkflow(StakeWorkflow)
	s.env.RegisterWorkflow(UnstakeWorkflow)
	s.env.RegisterWorkflow(WithdrawWorkflow)
	s.env.RegisterActivity(a)
	// A worker without a webhook: NotifyConfig answers off unless a test mocks it (notifying).
	s.env.RegisterActivity(&notify.Notifier{})
	s.env.RegisterWorkflowWithOptions(workflows.NotifyWorkflow, workflow.RegisterOptions{Name: workflows.NotifyWorkflowType})
	s.sa = map[string]any{}
	s.upserts = 0
	s.upserted = nil
	s.steps = nil
	s.preflights = nil
	s.preflightErr = nil
	s.env.OnActivity(a.Preflight, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in actsolana.PreflightInput) (actsolana.PreflightResult, error) {
			s.preflights = append(s.preflights, in)
			if s.preflightErr != nil {
				return actsolana.PreflightResult{}, s.preflightErr(len(s.preflights))
			}
			return actsolana.PreflightResult{}, nil
		}).Maybe()
	s.env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		s.upserts++
		var names []string
		for k, v := range args.Get(0).(temporal.SearchAttributes).GetUntypedValues() {
			s.sa[k.GetName()] = v
			names = append(names, k.GetName())
		}
		slices.Sort(names)
		s.upserted = append(s.upserted, names)
		if v, ok := args.Get(0).(temporal.SearchAttributes).GetKeyword(workflows.SAStep); ok {
			s.steps = append(s.steps, v)
		}
	}).Return(nil).Maybe()
}

func (s *WorkflowSuite) AfterTest(_, _ string) { s.env.AssertExpectations(s.T()) }

func stakeInput() StakeInput {
	return StakeInput{Network: "testnet", Staker: staker, Lamports: lamports, VoteAccount: vote}
}

// chain is a fake of the signing and confirmation side: each build gets a fresh signature and
// blockhash, and it records every call the workflow makes.
type chain struct {
	mu         sync.Mutex
	builds     int
	broadcasts []actsolana.BroadcastInput
	signs      []actsolana.SignInput
	fresh      []actsolana.FreshInput
}

func (c *chain) checkFresh(_ context.Context, in actsolana.FreshInput) (actsolana.FreshResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fresh = append(c.fresh, in)
	return actsolana.FreshResult{}, nil
}

func (c *chain) build(_ context.Context, _ actsolana.Intent) (actsolana.BuildResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.builds++
	return actsolana.BuildResult{UnsignedTransaction: fmt.Sprintf("unsigned-%d", c.builds), VoteAccount: vote}, nil
}

func (c *chain) sign(_ context.Context, in actsolana.SignInput) (actsolana.SignResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.signs = append(c.signs, in)
	n := len(c.signs)
	return actsolana.SignResult{
		Signature: fmt.Sprintf("sig-%d", n), SignedTransaction: fmt.Sprintf("signed-%d", n),
		RecentBlockhash: fmt.Sprintf("hash-%d", n), StakeAccount: stakeAcc, VoteAccount: in.Intent.VoteAccount,
	}, nil
}

func (c *chain) broadcast(_ context.Context, in actsolana.BroadcastInput) (actsolana.BroadcastResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.broadcasts = append(c.broadcasts, in)
	return actsolana.BroadcastResult{Signature: in.Signature, Slot: 10}, nil
}

func (s *WorkflowSuite) mockPolicy(approval bool) {
	s.env.OnActivity(a.CheckPolicy, mock.Anything, mock.Anything).
		Return(activities.PolicyDecision{ApprovalRequired: approval, ApprovalThreshold: 1_000_000_000}, nil)
}

func (s *WorkflowSuite) mockValidator() {
	s.env.OnActivity(a.CheckValidator, mock.Anything, actsolana.ValidatorCheckInput{Network: "testnet", VoteAccount: vote}).
		Return(actsolana.ValidatorCheckResult{Status: "active"}, nil).Once()
}

// mockThroughSign answers the validator check and has c build and sign.
func (s *WorkflowSuite) mockThroughSign(c *chain) {
	s.env.OnActivity(a.CheckValidator, mock.Anything, mock.Anything).Return(actsolana.ValidatorCheckResult{}, nil)
	s.env.OnActivity(a.Build, mock.Anything, mock.Anything).Return(c.build)
	s.env.OnActivity(a.Sign, mock.Anything, mock.Anything).Return(c.sign)
	s.env.OnActivity(a.CheckFresh, mock.Anything, mock.Anything).Return(c.checkFresh)
}

func (s *WorkflowSuite) mockHappyChain(c *chain) {
	s.env.OnActivity(a.Build, mock.Anything, mock.Anything).Return(c.build)
	s.env.OnActivity(a.Sign, mock.Anything, mock.Anything).Return(c.sign)
	s.env.OnActivity(a.CheckFresh, mock.Anything, mock.Anything).Return(c.checkFresh)
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(c.broadcast)
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).
		Return(actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 42, Fee: 5000}, nil)
}

// mockUnexpected mocks activities a test expects never to run, so that a call would be recorded
// (and answered) and AssertNotCalled can fail; without a mock, a call would end in an unrelated
// error instead.
func (s *WorkflowSuite) mockUnexpected(names ...string) {
	for _, n := range names {
		switch n {
		case "Build":
			s.env.OnActivity(a.Build, mock.Anything, mock.Anything).Return(actsolana.BuildResult{UnsignedTransaction: "u", VoteAccount: vote}, nil).Maybe()
		case "Broadcast":
			s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(actsolana.BroadcastResult{}, nil).Maybe()
		case "Confirm":
			s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized}, nil).Maybe()
		default:
			s.FailNow("mockUnexpected: no mock for " + n)
		}
	}
}

func (s *WorkflowSuite) result() Result {
	s.Require().True(s.env.IsWorkflowCompleted())
	s.Require().NoError(s.env.GetWorkflowError())
	var r Result
	s.Require().NoError(s.env.GetWorkflowResult(&r))
	return r
}

func (s *WorkflowSuite) workflowErrorType() string {
	s.Require().True(s.env.IsWorkflowCompleted())
	err := s.env.GetWorkflowError()
	s.Require().Error(err)
	var appErr *temporal.ApplicationError
	s.Require().True(errors.As(err, &appErr), "want an application error, got %v", err)
	return appErr.Type()
}

func (s *WorkflowSuite) status() workflows.Status {
	v, err := s.env.QueryWorkflow(workflows.QueryStatus)
	s.Require().NoError(err)
	var st workflows.Status
	s.Require().NoError(v.Get(&st))
	return st
}

func (s *WorkflowSuite) TestStakeHappyPath() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockValidator()
	s.mockHappyChain(c)
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	r := s.result()
	s.Equal([]workflows.TxRecord{{Kind: string(actsolana.OpStake), TxID: "sig-1", Block: 42, Builds: 1, Fee: "5000", FinalizedAt: r.Transactions[0].FinalizedAt}}, r.Transactions)
	s.Equal(uint64(5000), r.FeeLamports, "the fee the chain reports is the operation's fee")
	s.Equal([]actsolana.FreshInput{{Network: "testnet", Signature: "sig-1", NewStakeAccount: stakeAcc}}, c.fresh,
		"the chain is asked whether the signed transaction and its stake account are new before the broadcast")
	s.Equal(stakeAcc, r.StakeAccount)
	s.Equal(vote, r.VoteAccount)
	s.Equal(1, c.builds)
	s.Require().Len(c.signs, 1)
	s.Equal(actsolana.Intent{Operation: actsolana.OpStake, Chain: Chain, Network: "testnet", Staker: staker, Lamports: lamports, VoteAccount: vote}, c.signs[0].Intent)
	st := s.status()
	s.Equal(workflows.StepDone, st.Step)
	s.Equal(stakeAcc, st.Account)
	s.Require().Len(st.Attempts, 1)
	s.Equal(activities.OutcomeFinalized, st.Attempts[0].Outcome)

	s.Equal(workflows.StepDone, s.sa[workflows.SAStep.GetName()])
	s.Equal(int64(lamports), s.sa[workflows.SAAmount.GetName()])
	s.Equal([]string{"sig-1"}, s.sa[workflows.SASignatures.GetName()])
	s.Equal(stakeAcc, s.sa[workflows.SAStakeAccount.GetName()])
	s.Equal(staker, s.sa[workflows.SAStaker.GetName()])
	s.Equal("stake", s.sa[workflows.SAOperation.GetName()])
	// Started without its attributes (not through the starter): the first workflow task sends
	// them; after that only the resting points (confirming, the end) upsert.
	s.Equal([][]string{
		{workflows.SAAmount.GetName(), workflows.SAChain.GetName(), workflows.SANetwork.GetName(), workflows.SAOperation.GetName(), workflows.SAStaker.GetName(), workflows.SAStep.GetName()},
		{workflows.SASignatures.GetName(), workflows.SAStakeAccount.GetName(), workflows.SAStep.GetName()},
		{workflows.SAStep.GetName()},
	}, s.upserted)
}

// TestStakeStartedWithAttributesUpsertsOnlyWhereItRests holds the cost the workflow adds to the
// Temporal server: each upsert is a history event and a visibility write. Started through
// the starter, a stake upserts twice: when it starts confirming (step, signature, stake account)
// and when it ends.
func (s *WorkflowSuite) TestStakeStartedWithAttributesUpsertsOnlyWhereItRests() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockValidator()
	s.mockHappyChain(c)
	in := stakeInput()
	// As the starter starts it: the attributes known at start, StakeflowStep at validating.
	s.Require().NoError(s.env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(append(StakeAttributes(in), workflows.SAStep.ValueSet(workflows.StepValidating))...)))
	s.env.ExecuteWorkflow(StakeWorkflow, in)

	s.result()
	s.Equal([][]string{
		{workflows.SASignatures.GetName(), workflows.SAStakeAccount.GetName(), workflows.SAStep.GetName()},
		{workflows.SAStep.GetName()},
	}, s.upserted)
	s.Equal(workflows.StepDone, s.sa[workflows.SAStep.GetName()])
	s.Equal(workflows.StepDone, s.status().Step)
}

func (s *WorkflowSuite) TestStakeServiceChosenValidatorIsCheckedAndPinned() {
	c := &chain{}
	s.mockPolicy(false)
	s.env.OnActivity(a.CheckValidator, mock.Anything, actsolana.ValidatorCheckInput{Network: "testnet", VoteAccount: vote}).
		Return(actsolana.ValidatorCheckResult{Status: "active"}, nil).Once()
	s.env.OnActivity(a.Build, mock.Anything, mock.Anything).Return(c.build)
	s.env.OnActivity(a.Sign, mock.Anything, mock.Anything).Return(c.sign)
	s.env.OnActivity(a.CheckFresh, mock.Anything, mock.Anything).Return(c.checkFresh)
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(c.broadcast)
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized}, nil)
	in := stakeInput()
	in.VoteAccount = ""
	s.env.ExecuteWorkflow(StakeWorkflow, in)

	s.result()
	s.Require().Len(c.signs, 1)
	s.Equal(vote, c.signs[0].Intent.VoteAccount, "the signer must be held to the validator that was checked")
}

func (s *WorkflowSuite) TestDelinquentValidatorRefusedBeforeBuild() {
	s.mockUnexpected("Build")
	s.mockPolicy(false)
	s.env.OnActivity(a.CheckValidator, mock.Anything, mock.Anything).Return(actsolana.ValidatorCheckResult{},
		temporal.NewNonRetryableApplicationError("vote account is delinquent", activities.ErrValidatorNotHealthy, nil))
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())
	s.Equal(activities.ErrValidatorNotHealthy, s.workflowErrorType())
	s.env.AssertNotCalled(s.T(), "Build", mock.Anything, mock.Anything)
	s.Equal(workflows.StepFailed, s.status().Step)
}

func (s *WorkflowSuite) TestVerificationFailureSignsAndSendsNothing() {
	s.mockUnexpected("Broadcast")
	c := &chain{}
	s.mockPolicy(false)
	s.env.OnActivity(a.CheckValidator, mock.Anything, mock.Anything).Return(actsolana.ValidatorCheckResult{}, nil)
	s.env.OnActivity(a.Build, mock.Anything, mock.Anything).Return(c.build)
	s.env.OnActivity(a.Sign, mock.Anything, mock.Anything).Return(actsolana.SignResult{},
		temporal.NewNonRetryableApplicationError("fee payer: want staker, got stranger", activities.ErrVerificationFailed, nil)).Once()
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.Equal(activities.ErrVerificationFailed, s.workflowErrorType())
	s.Equal(1, c.builds, "a verification failure must not trigger a rebuild")
	s.env.AssertNotCalled(s.T(), "Broadcast", mock.Anything, mock.Anything)
	s.Contains(s.status().Error, "fee payer")
}

func (s *WorkflowSuite) TestBlockhashExpiredBeforeBroadcastRebuildsOnlyAfterProof() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockThroughSign(c)
	// First broadcast: the service says the blockhash is gone. Second: accepted.
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(actsolana.BroadcastResult{},
		temporal.NewNonRetryableApplicationError("BlockhashNotFound", activities.ErrBlockhashExpired, nil)).Once()
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(c.broadcast).Once()
	// The chain proves the first cannot land before anything is rebuilt.
	s.env.OnActivity(a.Confirm, mock.Anything, mock.MatchedBy(func(in actsolana.ConfirmInput) bool { return in.Signature == "sig-1" })).
		Return(actsolana.ConfirmResult{Outcome: activities.OutcomeCannotLand}, nil).Once()
	s.env.OnActivity(a.Confirm, mock.Anything, mock.MatchedBy(func(in actsolana.ConfirmInput) bool { return in.Signature == "sig-2" })).
		Return(actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 99}, nil).Once()
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	r := s.result()
	s.Equal(2, c.builds)
	s.Equal("sig-2", r.Transactions[0].TxID)
	s.Equal(2, r.Transactions[0].Builds)
	st := s.status()
	s.Require().Len(st.Attempts, 2)
	s.Equal(activities.OutcomeCannotLand, st.Attempts[0].Outcome)
	s.Equal(activities.OutcomeFinalized, st.Attempts[1].Outcome)
	s.Equal([]string{"sig-1", "sig-2"}, s.sa[workflows.SASignatures.GetName()])
}

func (s *WorkflowSuite) TestBlockhashExpiredAfterBroadcastRebuilds() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockThroughSign(c)
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(c.broadcast)
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeCannotLand}, nil).Once()
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized}, nil).Once()
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.result()
	s.Equal(2, c.builds)
	s.Require().Len(c.broadcasts, 2)
	s.NotEqual(c.broadcasts[0].SignedTransaction, c.broadcasts[1].SignedTransaction)
	// Leaving confirming for a new build is recorded: the list never shows a step left behind.
	s.Equal([]string{workflows.StepValidating, workflows.StepConfirming, workflows.StepBuilding, workflows.StepConfirming, workflows.StepDone}, s.steps)
}

func (s *WorkflowSuite) TestLostBroadcastResponseResendsSameBytesAndNeverRebuilds() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockThroughSign(c)
	var mu sync.Mutex
	var sent []string
	// Every answer is lost (the transaction may well have landed): retries until the broadcast window closes.
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(func(_ context.Context, in actsolana.BroadcastInput) (actsolana.BroadcastResult, error) {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, in.SignedTransaction)
		return actsolana.BroadcastResult{}, temporal.NewApplicationError("connection reset", activities.ErrServiceUnavailable)
	})
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 7}, nil).Once()
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	r := s.result()
	s.Equal(1, c.builds, "a lost answer must never lead to a second transaction")
	s.Greater(len(sent), 1, "broadcast is retried")
	for _, b := range sent {
		s.Equal("signed-1", b, "every retry re-sends the same signed bytes")
	}
	s.Equal("sig-1", r.Transactions[0].TxID)
}

func (s *WorkflowSuite) TestRateLimitedBuildWaitsForRetryAfter() {
	c := &chain{}
	s.mockPolicy(false)
	s.env.OnActivity(a.CheckValidator, mock.Anything, mock.Anything).Return(actsolana.ValidatorCheckResult{}, nil)
	var mu sync.Mutex
	var calls []time.Time
	s.env.OnActivity(a.Build, mock.Anything, mock.Anything).Return(func(ctx context.Context, in actsolana.Intent) (actsolana.BuildResult, error) {
		mu.Lock()
		calls = append(calls, s.env.Now())
		n := len(calls)
		mu.Unlock()
		if n <= 3 {
			return actsolana.BuildResult{}, temporal.NewApplicationErrorWithOptions("429 ThrottlerException", activities.ErrRateLimited,
				temporal.ApplicationErrorOptions{NextRetryDelay: 17 * time.Second})
		}
		return c.build(ctx, in)
	})
	s.env.OnActivity(a.Sign, mock.Anything, mock.Anything).Return(c.sign)
	s.env.OnActivity(a.CheckFresh, mock.Anything, mock.Anything).Return(c.checkFresh)
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(c.broadcast)
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized}, nil)
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.result()
	s.Require().Len(calls, 4)
	for i := 1; i < len(calls); i++ {
		s.GreaterOrEqual(calls[i].Sub(calls[i-1]), 17*time.Second, "retry %d came before Retry-After", i)
	}
	s.Equal(1, c.builds)
}

func (s *WorkflowSuite) TestTooManyExpiredBuildsFailWithReason() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockThroughSign(c)
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(c.broadcast)
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeCannotLand}, nil)
	in := stakeInput()
	in.Options.MaxBuilds = 2
	s.env.ExecuteWorkflow(StakeWorkflow, in)

	s.Equal(workflows.ErrTooManyBuilds, s.workflowErrorType())
	s.Equal(2, c.builds)
	s.Contains(s.env.GetWorkflowError().Error(), "none landed")
}

func (s *WorkflowSuite) TestTransactionFailedOnChainIsNotRetried() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockThroughSign(c)
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(c.broadcast)
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeFailed, Error: "InsufficientFunds"}, nil)
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())
	s.Equal(workflows.ErrTransactionFailed, s.workflowErrorType())
	s.Equal(1, c.builds)
	s.Contains(s.env.GetWorkflowError().Error(), "InsufficientFunds")
}

func (s *WorkflowSuite) TestBroadcastRejectedFailsWithoutRebuild() {
	s.mockUnexpected("Confirm")
	c := &chain{}
	s.mockPolicy(false)
	s.mockThroughSign(c)
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(actsolana.BroadcastResult{},
		temporal.NewNonRetryableApplicationError("InstructionError: insufficient lamports", activities.ErrTransactionRejected, nil))
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())
	s.Equal(activities.ErrTransactionRejected, s.workflowErrorType())
	s.Equal(1, c.builds)
	s.env.AssertNotCalled(s.T(), "Confirm", mock.Anything, mock.Anything)
}

func (s *WorkflowSuite) TestApprovalApproved() {
	c := &chain{}
	s.mockPolicy(true)
	s.mockValidator()
	s.mockHappyChain(c)
	s.env.RegisterDelayedCallback(func() {
		s.Equal(workflows.StepAwaitingApproval, s.status().Step)
		s.Equal(0, c.builds, "nothing is built before approval")
		s.env.UpdateWorkflow(workflows.UpdateApprove, "u1", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { s.Fail("approve rejected", err.Error()) },
		}, workflows.ApprovalInput{Approver: "alice"})
	}, time.Hour)
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.result()
	st := s.status()
	s.Equal("approved", st.Approval.Decision)
	s.Equal("alice", st.Approval.Approver)
	s.Equal(1, c.builds)
	s.Equal([]string{workflows.StepValidating, workflows.StepAwaitingApproval, workflows.StepCheckingValidator, workflows.StepConfirming, workflows.StepDone}, s.steps)
}

func (s *WorkflowSuite) TestApprovalWithoutApproverIsRefused() {
	c := &chain{}
	s.mockPolicy(true)
	s.mockValidator()
	s.mockHappyChain(c)
	var rejected error
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(workflows.UpdateApprove, "u0", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { rejected = err },
		}, workflows.ApprovalInput{})
	}, time.Minute)
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(workflows.UpdateApprove, "u1", &testsuite.TestUpdateCallback{}, workflows.ApprovalInput{Approver: "bob"})
	}, time.Hour)
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())
	s.result()
	s.Require().Error(rejected)
	s.Contains(rejected.Error(), "approver is required")
}

func (s *WorkflowSuite) TestApprovalRejected() {
	s.mockUnexpected("Build")
	s.mockPolicy(true)
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(workflows.UpdateReject, "u1", &testsuite.TestUpdateCallback{}, workflows.ApprovalInput{Approver: "bob", Reason: "wrong validator"})
	}, time.Hour)
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.Equal(workflows.ErrRejected, s.workflowErrorType())
	s.Contains(s.env.GetWorkflowError().Error(), "wrong validator")
	s.env.AssertNotCalled(s.T(), "Build", mock.Anything, mock.Anything)
	st := s.status()
	s.Equal("rejected", st.Approval.Decision)
	s.Equal(workflows.StepFailed, st.Step)
}

func (s *WorkflowSuite) TestEarlyRejectionStopsOperationBelowThreshold() {
	s.mockUnexpected("Build")
	// The policy would not ask for approval, but an approver rejected while it was being checked.
	s.env.OnActivity(a.CheckPolicy, mock.Anything, mock.Anything).After(time.Minute).
		Return(activities.PolicyDecision{ApprovalRequired: false}, nil)
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(workflows.UpdateReject, "u1", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { s.Fail("reject refused", err.Error()) },
		}, workflows.ApprovalInput{Approver: "carol", Reason: "hold all staking"})
	}, time.Second)
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())
	s.Equal(workflows.ErrRejected, s.workflowErrorType())
	s.env.AssertNotCalled(s.T(), "Build", mock.Anything, mock.Anything)
}

func (s *WorkflowSuite) TestApprovalTimeout() {
	s.mockUnexpected("Build")
	s.mockPolicy(true)
	in := stakeInput()
	in.Options.ApprovalTimeout = 48 * time.Hour
	start := s.env.Now()
	s.env.ExecuteWorkflow(StakeWorkflow, in)

	s.Equal(workflows.ErrApprovalTimeout, s.workflowErrorType())
	s.GreaterOrEqual(s.env.Now().Sub(start), 48*time.Hour)
	s.env.AssertNotCalled(s.T(), "Build", mock.Anything, mock.Anything)
	s.Equal("timed-out", s.status().Approval.Decision)
}

func (s *WorkflowSuite) TestCancelWhileAwaitingApproval() {
	s.mockUnexpected("Build")
	s.mockPolicy(true)
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, time.Hour)
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())
	s.Require().True(s.env.IsWorkflowCompleted())
	s.True(temporal.IsCanceledError(s.env.GetWorkflowError()), "got %v", s.env.GetWorkflowError())
	s.env.AssertNotCalled(s.T(), "Build", mock.Anything, mock.Anything)
	s.Equal(workflows.StepCancelled, s.status().Step)
}

func (s *WorkflowSuite) TestCancelDuringBuildSendsNothing() {
	s.mockUnexpected("Broadcast")
	s.mockPolicy(false)
	s.env.OnActivity(a.CheckValidator, mock.Anything, mock.Anything).Return(actsolana.ValidatorCheckResult{}, nil)
	s.env.OnActivity(a.Build, mock.Anything, mock.Anything).After(time.Minute).Return(actsolana.BuildResult{UnsignedTransaction: "u"}, nil)
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, 10*time.Second)
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())
	s.True(temporal.IsCanceledError(s.env.GetWorkflowError()), "got %v", s.env.GetWorkflowError())
	s.env.AssertNotCalled(s.T(), "Broadcast", mock.Anything, mock.Anything)
}

func (s *WorkflowSuite) TestCancelAfterBroadcastStillConfirms() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockThroughSign(c)
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(c.broadcast)
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).After(time.Minute).
		Return(actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 5}, nil)
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, 10*time.Second)
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	r := s.result()
	s.True(r.CancelRequested)
	s.Equal("sig-1", r.Transactions[0].TxID)
}

func (s *WorkflowSuite) TestInvalidInputRefusedBeforeAnyActivity() {
	for name, in := range map[string]StakeInput{
		"network":     {Network: "devnet", Staker: staker, Lamports: 1},
		"staker":      {Network: "testnet", Staker: "not-base58-0OIl", Lamports: 1},
		"lamports":    {Network: "testnet", Staker: staker},
		"voteAccount": {Network: "testnet", Staker: staker, Lamports: 1, VoteAccount: "abc"},
	} {
		s.Run(name, func() {
			env := s.NewTestWorkflowEnvironment()
			env.RegisterActivity(a)
			env.ExecuteWorkflow(StakeWorkflow, in)
			err := env.GetWorkflowError()
			var appErr *temporal.ApplicationError
			s.Require().True(errors.As(err, &appErr))
			s.Equal(activities.ErrInvalidInput, appErr.Type())
			s.Contains(err.Error(), name)
		})
	}
}

// stakeStateRead is the n-th read (from 1) of a stake account that is first, then deactivating
// for deactivatingReads reads, then inactive.
func stakeStateRead(n int, first, account string, deactivatingReads int) actsolana.StakeState {
	st := actsolana.StakeState{StakeAccount: account, Lamports: lamports, Staker: staker, Withdrawer: staker,
		Voter: vote, Epoch: 700, SlotIndex: 1000, SlotsInEpoch: 432000}
	switch {
	case n == 1:
		st.State = first
		st.Deactivating = first == actsolana.StakeDeactivating
	case n <= 1+deactivatingReads:
		st.State, st.Deactivating, st.DeactivationEpoch = actsolana.StakeDeactivating, true, 700
	default:
		st.State, st.Deactivating, st.DeactivationEpoch, st.Epoch = actsolana.StakeInactive, true, 700, 701
	}
	return st
}

// stakeStates returns the successive reads of a stake account (see stakeStateRead).
func stakeStates(first string, deactivatingReads int) func(context.Context, actsolana.StakeStateInput) (actsolana.StakeState, error) {
	var mu sync.Mutex
	n := 0
	return func(_ context.Context, in actsolana.StakeStateInput) (actsolana.StakeState, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		return stakeStateRead(n, first, in.StakeAccount, deactivatingReads), nil
	}
}

func (s *WorkflowSuite) TestUnstakeWaitsDaysForDeactivationThenWithdraws() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockHappyChain(c)
	// Mainnet-like: ~2 days per epoch; the wait is capped at MaxEpochWait per timer.
	s.env.OnActivity(a.ReadStakeState, mock.Anything, mock.Anything).Return(stakeStates(actsolana.StakeActive, 48))
	start := s.env.Now()
	s.env.ExecuteWorkflow(UnstakeWorkflow, UnstakeInput{Network: "mainnet-beta", Staker: staker, StakeAccount: stakeAcc})

	r := s.result()
	s.Require().Len(r.Transactions, 2)
	s.Equal(string(actsolana.OpUnstake), r.Transactions[0].Kind)
	s.Equal(string(actsolana.OpWithdraw), r.Transactions[1].Kind)
	s.Equal(lamports, r.Lamports)
	s.GreaterOrEqual(s.env.Now().Sub(start), 47*time.Hour, "the wait is durable timers, not a busy loop")
	s.Require().Len(c.signs, 2)
	s.Equal(actsolana.OpUnstake, c.signs[0].Intent.Operation)
	s.Equal(actsolana.OpWithdraw, c.signs[1].Intent.Operation)
	s.Equal(lamports, c.signs[1].Intent.Lamports)
	s.Equal(stakeAcc, c.signs[1].Intent.StakeAccount)
	s.env.AssertNumberOfCalls(s.T(), "ReadStakeState", 1+48+1)
	// 48 timers, one waiting-deactivation upsert.
	s.Equal([]string{workflows.StepValidating, workflows.StepConfirming, StepWaitingDeactivation, workflows.StepBuilding, workflows.StepConfirming, workflows.StepDone}, s.steps)
}

func (s *WorkflowSuite) TestUnstakeOfDeactivatingAccountDoesNotDeactivateAgain() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockHappyChain(c)
	s.env.OnActivity(a.ReadStakeState, mock.Anything, mock.Anything).Return(stakeStates(actsolana.StakeDeactivating, 1))
	s.env.ExecuteWorkflow(UnstakeWorkflow, UnstakeInput{Network: "testnet", Staker: staker, StakeAccount: stakeAcc})

	r := s.result()
	s.Require().Len(r.Transactions, 1)
	s.Equal(string(actsolana.OpWithdraw), r.Transactions[0].Kind)
}

func (s *WorkflowSuite) TestWithdrawOfDelegatedAccountRefused() {
	s.mockUnexpected("Build")
	s.env.OnActivity(a.ReadStakeState, mock.Anything, mock.Anything).Return(stakeStates(actsolana.StakeActive, 0))
	s.env.ExecuteWorkflow(WithdrawWorkflow, WithdrawInput{Network: "testnet", Staker: staker, StakeAccount: stakeAcc})
	s.Equal(activities.ErrStakeAccountState, s.workflowErrorType())
	s.Contains(s.env.GetWorkflowError().Error(), "unstake it before withdrawing")
	s.env.AssertNotCalled(s.T(), "Build", mock.Anything, mock.Anything)
}

func (s *WorkflowSuite) TestUnstakeForeignStakeAccountRefused() {
	s.env.OnActivity(a.ReadStakeState, mock.Anything, mock.Anything).Return(actsolana.StakeState{
		StakeAccount: stakeAcc, Lamports: lamports, Staker: vote2, Withdrawer: vote2, State: actsolana.StakeActive}, nil)
	s.env.ExecuteWorkflow(UnstakeWorkflow, UnstakeInput{Network: "testnet", Staker: staker, StakeAccount: stakeAcc})
	s.Equal(activities.ErrStakeAccountState, s.workflowErrorType())
	s.Contains(s.env.GetWorkflowError().Error(), "not controlled by")
}

func (s *WorkflowSuite) TestUnstakeOfLockedUpAccountRefusedBeforeSigning() {
	c := &chain{}
	// Mocked so that a call would be recorded; none may come.
	s.env.OnActivity(a.CheckPolicy, mock.Anything, mock.Anything).Return(activities.PolicyDecision{}, nil).Maybe()
	s.env.OnActivity(a.Build, mock.Anything, mock.Anything).Return(c.build).Maybe()
	s.env.OnActivity(a.Sign, mock.Anything, mock.Anything).Return(c.sign).Maybe()
	s.env.OnActivity(a.ReadStakeState, mock.Anything, mock.Anything).Return(actsolana.StakeState{
		StakeAccount: stakeAcc, Lamports: lamports, Staker: staker, Withdrawer: staker, State: actsolana.StakeActive,
		Lockup: &actsolana.Lockup{UnixTimestamp: 4_102_444_800, Epoch: 1_000_000, Custodian: staker, InForce: true, ClusterTime: 1_800_000_000}}, nil)
	s.env.ExecuteWorkflow(UnstakeWorkflow, UnstakeInput{Network: "testnet", Staker: staker, StakeAccount: stakeAcc})
	s.Equal(activities.ErrStakeAccountState, s.workflowErrorType())
	s.Contains(s.env.GetWorkflowError().Error(), "locked up until unix time 4102444800 (2100-01-01T00:00:00Z)")
	s.Empty(c.signs, "nothing is signed for an account whose lamports could not be withdrawn")
	s.Zero(c.builds, "nothing is built")
}

func (s *WorkflowSuite) TestUnstakeAfterLockupEndedProceeds() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockHappyChain(c)
	reads := stakeStates(actsolana.StakeActive, 0)
	s.env.OnActivity(a.ReadStakeState, mock.Anything, mock.Anything).Return(func(ctx context.Context, in actsolana.StakeStateInput) (actsolana.StakeState, error) {
		st, err := reads(ctx, in)
		st.Lockup = &actsolana.Lockup{UnixTimestamp: 1_700_000_000, InForce: false, ClusterTime: 1_800_000_000}
		return st, err
	})
	s.env.ExecuteWorkflow(UnstakeWorkflow, UnstakeInput{Network: "testnet", Staker: staker, StakeAccount: stakeAcc})
	s.Len(s.result().Transactions, 2)
}

func (s *WorkflowSuite) TestUnstakeAmountMustMatchBalance() {
	s.env.OnActivity(a.ReadStakeState, mock.Anything, mock.Anything).Return(stakeStates(actsolana.StakeActive, 0))
	s.env.ExecuteWorkflow(UnstakeWorkflow, UnstakeInput{Network: "testnet", Staker: staker, StakeAccount: stakeAcc, Lamports: 5})
	s.Equal(activities.ErrInvalidInput, s.workflowErrorType())
	s.Contains(s.env.GetWorkflowError().Error(), "partial unstake")
}

func (s *WorkflowSuite) TestCancelDuringDeactivationWaitSendsNoWithdraw() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockHappyChain(c)
	s.env.OnActivity(a.ReadStakeState, mock.Anything, mock.Anything).Return(stakeStates(actsolana.StakeActive, 1000))
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, 5*time.Hour)
	s.env.ExecuteWorkflow(UnstakeWorkflow, UnstakeInput{Network: "testnet", Staker: staker, StakeAccount: stakeAcc})
	s.True(temporal.IsCanceledError(s.env.GetWorkflowError()), "got %v", s.env.GetWorkflowError())
	s.Require().Len(c.signs, 1, "only the deactivation was signed")
	s.Equal(actsolana.OpUnstake, c.signs[0].Intent.Operation)
}

func (s *WorkflowSuite) TestTransactionNotNewIsRefusedBeforeBroadcast() {
	c := &chain{}
	s.mockPolicy(false)
	s.env.OnActivity(a.CheckValidator, mock.Anything, mock.Anything).Return(actsolana.ValidatorCheckResult{}, nil)
	s.env.OnActivity(a.Build, mock.Anything, mock.Anything).Return(c.build)
	s.env.OnActivity(a.Sign, mock.Anything, mock.Anything).Return(c.sign)
	s.env.OnActivity(a.CheckFresh, mock.Anything, mock.Anything).Return(actsolana.FreshResult{},
		temporal.NewNonRetryableApplicationError("signature sig-1 already on chain at slot 9", activities.ErrStaleTransaction, nil)).Once()
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(c.broadcast).Maybe()
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.Equal(activities.ErrStaleTransaction, s.workflowErrorType())
	s.Empty(c.broadcasts, "a transaction the chain already knows is never broadcast")
	s.Equal(1, c.builds, "no rebuild: the service served a transaction that is not new")
	st := s.status()
	s.Equal(workflows.StepFailed, st.Step)
	s.Require().Len(st.Attempts, 1)
	s.Equal("not-sent", st.Attempts[0].Outcome)
	s.Empty(st.Transactions)
}

func (s *WorkflowSuite) TestRefusalAfterAnEarlierSendIsConfirmedNotFailed() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockThroughSign(c)
	// The first send landed but its answer was lost; the re-send of the same bytes was refused.
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(actsolana.BroadcastResult{},
		temporal.NewNonRetryableApplicationError("refused after an earlier send", activities.ErrBroadcastUncertain, nil)).Once()
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 8, Fee: 5000}, nil).Once()
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	r := s.result()
	s.Equal("sig-1", r.Transactions[0].TxID)
	s.Equal(1, c.builds)
	s.Equal(workflows.StepDone, s.status().Step)
}

// TestConfirmRefusedByRPCStallsVisiblyThenCompletes: an RPC that refuses the worker for good does
// not fail a sent transaction; the step shows as stalled (status, search attribute, details) and is
// tried again until it gets through.
func (s *WorkflowSuite) TestConfirmRefusedByRPCStallsVisiblyThenCompletes() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockValidator()
	s.env.OnActivity(a.Build, mock.Anything, mock.Anything).Return(c.build)
	s.env.OnActivity(a.Sign, mock.Anything, mock.Anything).Return(c.sign)
	s.env.OnActivity(a.CheckFresh, mock.Anything, mock.Anything).Return(c.checkFresh)
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(c.broadcast)
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{},
		temporal.NewNonRetryableApplicationError("solana rpc getSignatureStatuses: 403 Forbidden", activities.ErrChainRejected, nil)).Times(3)
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 9}, nil).Once()
	var during workflows.Status
	s.env.RegisterDelayedCallback(func() { during = s.status() }, 45*time.Second)
	start := s.env.Now()
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	r := s.result()
	s.Equal("sig-1", r.Transactions[0].TxID)
	s.Equal(workflows.StepStalled, during.Step)
	s.Require().NotNil(during.Stall)
	s.Equal(workflows.StepConfirming, during.Stall.Step)
	s.Contains(during.Stall.LastError, "403 Forbidden")
	s.Contains(s.steps, workflows.StepStalled, "a stalled step is searchable")
	// 30 s, 60 s, 120 s between tries.
	s.GreaterOrEqual(s.env.Now().Sub(start), 210*time.Second)
	s.Nil(s.status().Stall, "the stall is cleared once the step gets through")
	s.Equal(1, c.builds, "a stalled confirmation never rebuilds")
}

// TestHalfDoneUnstakeStallsWhileServiceRefusesThenWithdraws: once the deactivation landed, a
// service that keeps refusing the worker's token does not fail the operation half done.
func (s *WorkflowSuite) TestHalfDoneUnstakeStallsWhileServiceRefusesThenWithdraws() {
	c := &chain{}
	s.mockPolicy(false)
	s.env.OnActivity(a.ReadStakeState, mock.Anything, mock.Anything).Return(stakeStates(actsolana.StakeActive, 0))
	start := s.env.Now()
	s.env.OnActivity(a.Build, mock.Anything, mock.Anything).Return(func(ctx context.Context, in actsolana.Intent) (actsolana.BuildResult, error) {
		if in.Operation == actsolana.OpWithdraw && s.env.Now().Sub(start) < 2*time.Hour {
			return actsolana.BuildResult{}, temporal.NewApplicationError("401 WrongTokenException", activities.ErrServiceUnauthorized)
		}
		return c.build(ctx, in)
	})
	s.env.OnActivity(a.Sign, mock.Anything, mock.Anything).Return(c.sign)
	s.env.OnActivity(a.CheckFresh, mock.Anything, mock.Anything).Return(c.checkFresh)
	s.env.OnActivity(a.Broadcast, mock.Anything, mock.Anything).Return(c.broadcast)
	s.env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized}, nil)
	var during workflows.Status
	s.env.RegisterDelayedCallback(func() { during = s.status() }, 90*time.Minute)
	s.env.ExecuteWorkflow(UnstakeWorkflow, UnstakeInput{Network: "testnet", Staker: staker, StakeAccount: stakeAcc})

	r := s.result()
	s.Require().Len(r.Transactions, 2)
	s.Equal(string(actsolana.OpWithdraw), r.Transactions[1].Kind)
	s.Equal(workflows.StepStalled, during.Step)
	s.Require().NotNil(during.Stall)
	s.Equal(workflows.StepBuilding, during.Stall.Step)
	s.Contains(during.Stall.LastError, "WrongTokenException")
}

// TestServiceRefusingTokenBeforeAnythingLandedFails: with nothing sent, a build that never gets
// through fails the operation cleanly after BuildTimeout.
func (s *WorkflowSuite) TestServiceRefusingTokenBeforeAnythingLandedFails() {
	s.mockPolicy(false)
	s.mockValidator()
	s.env.OnActivity(a.Build, mock.Anything, mock.Anything).Return(actsolana.BuildResult{},
		temporal.NewApplicationError("401 WrongTokenException", activities.ErrServiceUnauthorized))
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())
	s.Require().True(s.env.IsWorkflowCompleted())
	s.Require().Error(s.env.GetWorkflowError())
	s.Contains(s.env.GetWorkflowError().Error(), "WrongTokenException")
	s.Equal(workflows.StepFailed, s.status().Step)
}

// approve sends an approve update; the returned error is set, once the workflow has run, when the
// update was refused.
func (s *WorkflowSuite) approve(id, approver string) *error {
	var rejected error
	s.env.UpdateWorkflow(workflows.UpdateApprove, id, &testsuite.TestUpdateCallback{
		OnReject: func(err error) { rejected = err },
	}, workflows.ApprovalInput{Approver: approver})
	return &rejected
}

func (s *WorkflowSuite) TestRequesterCannotApproveOwnOperation() {
	c := &chain{}
	s.mockPolicy(true)
	s.mockValidator()
	s.mockHappyChain(c)
	var self, other *error
	s.env.RegisterDelayedCallback(func() { self = s.approve("u1", "Alice ") }, time.Minute)
	s.env.RegisterDelayedCallback(func() {
		s.Equal(workflows.StepAwaitingApproval, s.status().Step, "the requester's approval does not open the gate")
		other = s.approve("u2", "bob")
	}, time.Hour)
	in := stakeInput()
	in.RequestedBy = "alice"
	s.env.ExecuteWorkflow(StakeWorkflow, in)

	s.result()
	s.Require().Error(*self)
	s.Contains((*self).Error(), "started this operation")
	s.Require().NoError(*other)
	st := s.status()
	s.Equal("alice", st.RequestedBy)
	s.Require().Len(st.Approval.Decisions, 1)
	s.Equal("bob", st.Approval.Decisions[0].Approver)
}

func (s *WorkflowSuite) TestTwoDistinctApproversAboveDualThreshold() {
	c := &chain{}
	s.env.OnActivity(a.CheckPolicy, mock.Anything, mock.Anything).
		Return(activities.PolicyDecision{ApprovalRequired: true, ApprovalsRequired: 2, ApprovalThreshold: 1, DualApprovalThreshold: 2}, nil)
	s.mockValidator()
	s.mockHappyChain(c)
	var first, twice, second *error
	buildsAfterFirst := -1
	s.env.RegisterDelayedCallback(func() { first = s.approve("u1", "bob") }, time.Hour)
	s.env.RegisterDelayedCallback(func() {
		twice = s.approve("u2", "BOB")
	}, 2*time.Hour)
	s.env.RegisterDelayedCallback(func() {
		buildsAfterFirst = c.builds
		s.Equal(workflows.StepAwaitingApproval, s.status().Step, "one approval of two does not open the gate")
		second = s.approve("u3", "carol")
	}, 3*time.Hour)
	start := s.env.Now()
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.result()
	s.Require().NoError(*first)
	s.Require().Error(*twice)
	s.Contains((*twice).Error(), "already approved")
	s.Require().NoError(*second)
	s.Equal(0, buildsAfterFirst, "nothing is built on one approval of two")
	st := s.status()
	s.Equal(workflows.DecisionApproved, st.Approval.Decision)
	s.Equal(2, st.Approval.ApprovalsRequired)
	s.Require().Len(st.Approval.Decisions, 2)
	s.Equal([]string{"bob", "carol"}, []string{st.Approval.Decisions[0].Approver, st.Approval.Decisions[1].Approver})
	s.True(st.Approval.Decisions[0].At.Equal(start.Add(time.Hour)), "first approval at %s", st.Approval.Decisions[0].At)
	s.True(st.Approval.Decisions[1].At.Equal(start.Add(3*time.Hour)), "second approval at %s", st.Approval.Decisions[1].At)
}

func (s *WorkflowSuite) TestOptionsOutOfBoundsRefusedBeforeAnyActivity() {
	for name, opts := range map[string]workflows.Options{
		"options.maxBuilds":           {MaxBuilds: workflows.MaxMaxBuilds + 1},
		"options.confirmPollInterval": {ConfirmPollInterval: workflows.ConfirmHeartbeatTimeout},
		"options.buildTimeout":        {BuildTimeout: -time.Second},
		"options.broadcastTimeout":    {BroadcastTimeout: time.Second},
		"options.slotDuration":        {SlotDuration: 2 * time.Minute},
	} {
		s.Run(name, func() {
			env := s.NewTestWorkflowEnvironment()
			env.RegisterActivity(a)
			in := stakeInput()
			in.Options = opts
			env.ExecuteWorkflow(StakeWorkflow, in)
			err := env.GetWorkflowError()
			var appErr *temporal.ApplicationError
			s.Require().True(errors.As(err, &appErr), "got %v", err)
			s.Equal(activities.ErrInvalidInput, appErr.Type())
			s.Contains(err.Error(), name)
		})
	}
	s.NoError(workflows.Options{}.Validate(), "the defaults are valid")
	s.NoError(workflows.Options{MaxBuilds: workflows.MaxMaxBuilds, ConfirmPollInterval: workflows.ConfirmHeartbeatTimeout / 3}.Validate(), "the bounds are valid")
}

func TestFormatSOL(t *testing.T) {
	for in, want := range map[uint64]string{0: "0 SOL", 1: "0.000000001 SOL", 2_000_000_000: "2 SOL", 1_500_000_000: "1.5 SOL"} {
		require.Equal(t, want, FormatSOL(in))
	}
}

const insufficient = "insufficient funds: staker X holds 1 SOL, the stake needs 2 SOL plus fees; nothing was signed"

func insufficientFunds(int) error {
	return temporal.NewNonRetryableApplicationError(insufficient, activities.ErrInsufficientFunds, nil)
}

// TestStakeBeyondBalanceRefusedBeforeApprovalAndSigning: the balance pre-flight runs first, with
// what the stake moves; a stake the staker cannot pay for asks no approval, builds and signs
// nothing, and fails with the pre-flight's line as its reason.
func (s *WorkflowSuite) TestStakeBeyondBalanceRefusedBeforeApprovalAndSigning() {
	s.preflightErr = insufficientFunds
	s.env.OnActivity(a.CheckPolicy, mock.Anything, mock.Anything).Return(activities.PolicyDecision{}, nil).Maybe()
	s.mockUnexpected("Build")
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.Equal(activities.ErrInsufficientFunds, s.workflowErrorType())
	s.Equal(insufficient, s.status().Reason)
	s.Equal([]actsolana.PreflightInput{{Network: "testnet", Operation: actsolana.OpStake, Staker: staker, Lamports: lamports}}, s.preflights)
	s.env.AssertNotCalled(s.T(), "CheckPolicy", mock.Anything, mock.Anything)
	s.env.AssertNotCalled(s.T(), "Build", mock.Anything, mock.Anything)
}

// TestStakeBalanceReadAgainBeforeSigning: the balance is read again after the build, before the
// signature: an approval may have waited while it was spent.
func (s *WorkflowSuite) TestStakeBalanceReadAgainBeforeSigning() {
	s.preflightErr = func(n int) error {
		if n == 1 {
			return nil
		}
		return insufficientFunds(n)
	}
	c := &chain{}
	s.mockPolicy(false)
	s.mockValidator()
	s.env.OnActivity(a.Build, mock.Anything, mock.Anything).Return(c.build)
	s.env.OnActivity(a.Sign, mock.Anything, mock.Anything).Return(c.sign).Maybe()
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.Equal(activities.ErrInsufficientFunds, s.workflowErrorType())
	s.Len(s.preflights, 2)
	s.Equal(1, c.builds)
	s.Empty(c.signs, "nothing signed")
}

// TestHalfDoneWithdrawStallsWhileFeeCannotBePaid: once the deactivation landed, a staker that
// cannot pay the withdraw's fee stalls the operation, visibly, until the balance is topped up;
// it does not fail part done.
func (s *WorkflowSuite) TestHalfDoneWithdrawStallsWhileFeeCannotBePaid() {
	// Pre-flights: before the policy (1), before the deactivation's signature (2), then the
	// withdraw's: refused twice, then paid for.
	s.preflightErr = func(n int) error {
		if n == 3 || n == 4 {
			return insufficientFunds(n)
		}
		return nil
	}
	c := &chain{}
	s.mockPolicy(false)
	s.mockHappyChain(c)
	s.env.OnActivity(a.ReadStakeState, mock.Anything, mock.Anything).Return(stakeStates(actsolana.StakeActive, 0))
	// Mocked activities take no time: the deactivation lands at once and the withdraw's first
	// stall waits 30 s.
	var during workflows.Status
	s.env.RegisterDelayedCallback(func() { during = s.status() }, 15*time.Second)
	s.env.ExecuteWorkflow(UnstakeWorkflow, UnstakeInput{Network: "testnet", Staker: staker, StakeAccount: stakeAcc})

	r := s.result()
	s.Require().Len(r.Transactions, 2)
	s.Equal(string(actsolana.OpWithdraw), r.Transactions[1].Kind)
	s.Len(s.preflights, 5)
	s.Equal(actsolana.OpWithdraw, s.preflights[4].Operation)
	s.Equal(workflows.StepStalled, during.Step)
	s.Require().NotNil(during.Stall)
	s.Contains(during.Stall.LastError, "insufficient funds")
	s.Nil(s.status().Stall)
}

// notifying makes the worker post events and records each event's delivery workflow as it starts.
func (s *WorkflowSuite) notifying() *[]notify.Event {
	var events []notify.Event
	s.env.OnActivity("NotifyConfig", mock.Anything).Return(notify.Config{Enabled: true}, nil)
	s.env.OnWorkflow(workflows.NotifyWorkflowType, mock.Anything, mock.Anything).Return(
		func(ctx workflow.Context, ev notify.Event) error {
			s.Equal(ev.ID, workflow.GetInfo(ctx).WorkflowExecution.ID, "the delivery's workflow ID is the event's")
			events = append(events, ev)
			return nil
		})
	return &events
}

// TestEventsPostedAtApprovalAndCompletion: a worker with a webhook posts, through one abandoned
// child workflow each, that the operation awaits approval (before any decision), then that it
// completed; their IDs are stable (operation ID and type).
func (s *WorkflowSuite) TestEventsPostedAtApprovalAndCompletion() {
	events := s.notifying()
	c := &chain{}
	s.mockPolicy(true)
	s.mockValidator()
	s.mockHappyChain(c)
	s.env.RegisterDelayedCallback(func() {
		s.Require().Len(*events, 1, "awaiting approval told before the decision")
		s.env.UpdateWorkflow(workflows.UpdateApprove, "u1", &testsuite.TestUpdateCallback{}, workflows.ApprovalInput{Approver: "alice"})
	}, time.Hour)
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())

	s.result()
	s.Require().Len(*events, 2)
	id := "default-test-workflow-id"
	awaiting, done := (*events)[0], (*events)[1]
	s.Equal(id+"/awaiting-approval", awaiting.ID)
	s.Equal(notify.EventAwaitingApproval, awaiting.Type)
	s.Equal(workflows.StepAwaitingApproval, awaiting.Step)
	s.Equal(strconv.FormatUint(lamports, 10), awaiting.Amount)
	s.Contains(awaiting.Text, "awaits approval")
	s.Equal(id+"/completed", done.ID)
	s.Equal(notify.EventCompleted, done.Type)
	s.Equal([]string{"sig-1"}, done.TxIDs)
}

// TestFailedEventSaysWhy: the failure's one-line reason is posted.
func (s *WorkflowSuite) TestFailedEventSaysWhy() {
	events := s.notifying()
	s.preflightErr = insufficientFunds
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())
	s.Equal(activities.ErrInsufficientFunds, s.workflowErrorType())
	s.Require().Len(*events, 1)
	s.Equal(notify.EventFailed, (*events)[0].Type)
	s.Equal(insufficient, (*events)[0].Reason)
	s.Contains((*events)[0].Text, "failed: "+insufficient)
}

// TestNoEventsWithoutAWebhook: a worker without a webhook starts no delivery.
func (s *WorkflowSuite) TestNoEventsWithoutAWebhook() {
	started := 0
	s.env.OnWorkflow(workflows.NotifyWorkflowType, mock.Anything, mock.Anything).Return(
		func(workflow.Context, notify.Event) error { started++; return nil }).Maybe()
	s.preflightErr = insufficientFunds
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())
	s.Equal(activities.ErrInsufficientFunds, s.workflowErrorType())
	s.Zero(started)
}
