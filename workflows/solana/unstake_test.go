package solana

import (
	"github.com/stretchr/testify/mock"

	"github.com/stakeflow/stakeflow/activities"
	actsolana "github.com/stakeflow/stakeflow/activities/solana"
)

// A stake still activating is delegated: withdrawing it is refused like an active one, and
// unstaking it deactivates it first.

func (s *WorkflowSuite) TestWithdrawOfActivatingAccountRefused() {
	s.mockUnexpected("Build")
	s.env.OnActivity(a.ReadStakeState, mock.Anything, mock.Anything).Return(stakeStates(actsolana.StakeActivating, 0))
	s.env.ExecuteWorkflow(WithdrawWorkflow, WithdrawInput{Network: "testnet", Staker: staker, StakeAccount: stakeAcc})
	s.Equal(activities.ErrStakeAccountState, s.workflowErrorType())
	s.Contains(s.env.GetWorkflowError().Error(), "unstake it before withdrawing")
	s.env.AssertNotCalled(s.T(), "Build", mock.Anything, mock.Anything)
}

func (s *WorkflowSuite) TestUnstakeOfActivatingAccountDeactivatesThenWithdraws() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockHappyChain(c)
	s.env.OnActivity(a.ReadStakeState, mock.Anything, mock.Anything).Return(stakeStates(actsolana.StakeActivating, 1))
	s.env.ExecuteWorkflow(UnstakeWorkflow, UnstakeInput{Network: "testnet", Staker: staker, StakeAccount: stakeAcc})
	r := s.result()
	s.Require().Len(r.Transactions, 2)
	s.Equal(string(actsolana.OpUnstake), r.Transactions[0].Kind)
	s.Equal(string(actsolana.OpWithdraw), r.Transactions[1].Kind)
}
