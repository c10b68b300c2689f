package solana

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/temporal"

	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	"github.com/stakeflow/stakeflow/workflows"
)

// The largest amount accepted is the largest StakeflowAmount (an int64): 2^63-1 lamports.
const largestLamports = uint64(math.MaxInt64)

func inputField(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var ie *workflows.InputError
	require.True(t, errors.As(err, &ie), "want an InputError, got %v", err)
	return ie.Field
}

func TestStakeInputAmountBounds(t *testing.T) {
	in := stakeInput()
	in.Lamports = largestLamports
	assert.Equal(t, "", inputField(t, in.Validate()), "2^63-1 lamports is accepted")
	in.Lamports = largestLamports + 1
	assert.Equal(t, "lamports", inputField(t, in.Validate()))
}

// Each unstake field is checked even when the fields before it are valid.
func TestUnstakeInputChecksEveryField(t *testing.T) {
	valid := UnstakeInput{Network: "testnet", Staker: staker, StakeAccount: stakeAcc}
	tests := []struct {
		name  string
		edit  func(*UnstakeInput)
		field string
	}{
		{"valid", func(*UnstakeInput) {}, ""},
		{"staker not base58", func(in *UnstakeInput) { in.Staker = "not-an-address" }, "staker"},
		{"stake account not base58", func(in *UnstakeInput) { in.StakeAccount = "0OIl" }, "stakeAccount"},
		{"stake account missing", func(in *UnstakeInput) { in.StakeAccount = "" }, "stakeAccount"},
		{"stake account is the staker", func(in *UnstakeInput) { in.StakeAccount = staker }, "stakeAccount"},
		{"largest amount", func(in *UnstakeInput) { in.Lamports = largestLamports }, ""},
		{"amount over the largest", func(in *UnstakeInput) { in.Lamports = largestLamports + 1 }, "lamports"},
		{"options", func(in *UnstakeInput) { in.Options.MaxBuilds = 11 }, "options.maxBuilds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := valid
			tt.edit(&in)
			assert.Equal(t, tt.field, inputField(t, in.Validate()))
		})
	}
}

// amountAttribute is the StakeflowAmount the updates set, if any.
func amountAttribute(updates []temporal.SearchAttributeUpdate) (int64, bool) {
	for _, u := range updates {
		sa := temporal.NewSearchAttributes(u)
		if v, ok := sa.GetInt64(workflows.SAAmount); ok {
			return v, true
		}
	}
	return 0, false
}

// An amount is a search attribute when it is a positive int64; zero (take the balance) is none.
func TestStartAttributesCarryTheAmountWhenItIsOne(t *testing.T) {
	for _, tt := range []struct {
		lamports uint64
		want     int64
		ok       bool
	}{{0, 0, false}, {1, 1, true}, {largestLamports, math.MaxInt64, true}, {largestLamports + 1, 0, false}} {
		v, ok := amountAttribute(StakeAttributes(StakeInput{Network: "testnet", Staker: staker, Lamports: tt.lamports}))
		assert.Equal(t, tt.ok, ok, "stake of %d", tt.lamports)
		assert.Equal(t, tt.want, v, "stake of %d", tt.lamports)
		v, ok = amountAttribute(UnstakeAttributes("unstake", UnstakeInput{Network: "testnet", Staker: staker, StakeAccount: stakeAcc, Lamports: tt.lamports}))
		assert.Equal(t, tt.ok, ok, "unstake of %d", tt.lamports)
		assert.Equal(t, tt.want, v, "unstake of %d", tt.lamports)
	}
	attrs := temporal.NewSearchAttributes(UnstakeAttributes("withdraw", UnstakeInput{Network: "devnet", Staker: staker, StakeAccount: stakeAcc})...)
	op, _ := attrs.GetKeyword(workflows.SAOperation)
	acct, _ := attrs.GetKeyword(workflows.SAStakeAccount)
	assert.Equal(t, "withdraw", op)
	assert.Equal(t, stakeAcc, acct)
}

func TestStakeSummaryNamesTheValidatorOrWhoChoosesIt(t *testing.T) {
	in := StakeInput{Network: "testnet", Staker: staker, Lamports: 1_500_000_000}
	assert.Equal(t, "stake 1.5 SOL from "+staker+" to a validator chosen by the service (testnet)", StakeSummary(in))
	in.VoteAccount = vote
	assert.Equal(t, "stake 1.5 SOL from "+staker+" to vote account "+vote+" (testnet)", StakeSummary(in))
}

// details is the workflow's current details as the Web UI shows them.
func (s *WorkflowSuite) details() string {
	v, err := s.env.QueryWorkflow("__temporal_workflow_metadata")
	s.Require().NoError(err)
	var md sdkpb.WorkflowMetadata
	s.Require().NoError(v.Get(&md))
	return md.GetCurrentDetails()
}

// The Web UI shows a stake's amount in SOL and names Solana's things.
func (s *WorkflowSuite) TestDetailsShowTheAmountInSOL() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockValidator()
	s.mockHappyChain(c)
	s.env.ExecuteWorkflow(StakeWorkflow, stakeInput())
	s.result()
	d := s.details()
	s.Contains(d, "**done**: stake 2 SOL")
	s.Contains(d, "vote account: "+vote)
	s.Contains(d, "stake account: "+stakeAcc)
	s.Contains(d, "stake: sig-1 (slot 42, fee 5000 lamports)")
}

// A clock read at or past its epoch's last slot counts one slot left: the wait is that slot and
// one more, at the slot time the worker reports.
func (s *WorkflowSuite) TestEpochEndReadWaitsTwoSlots() {
	c := &chain{}
	s.mockPolicy(false)
	s.mockHappyChain(c)
	reads := &clock{}
	n := 0
	s.env.OnActivity(a.ReadStakeState, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in actsolana.StakeStateInput) (actsolana.StakeState, error) {
			reads.tick(s.env.Now())
			n++
			st := actsolana.StakeState{StakeAccount: in.StakeAccount, Lamports: lamports, Staker: staker, Withdrawer: staker,
				Voter: vote, Epoch: 700, SlotIndex: 432_000, SlotsInEpoch: 432_000, SlotDuration: 2 * time.Second,
				State: actsolana.StakeDeactivating, Deactivating: true, DeactivationEpoch: 700}
			if n > 2 {
				st.State, st.Epoch = actsolana.StakeInactive, 701
			}
			return st, nil
		})
	s.env.ExecuteWorkflow(WithdrawWorkflow, WithdrawInput{Network: "testnet", Staker: staker, StakeAccount: stakeAcc})
	s.result()
	times := reads.all()
	// Read by the withdraw's start, by the wait's first look, and after the wait.
	s.Require().Len(times, 3)
	s.Equal(4*time.Second, times[2].Sub(times[1]))
}
