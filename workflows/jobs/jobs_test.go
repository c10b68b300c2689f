package jobs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/stretchr/testify/suite"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actjobs "github.com/stakeflow/stakeflow/activities/jobs"
	"github.com/stakeflow/stakeflow/activities/jobs/jobstest"
	"github.com/stakeflow/stakeflow/apiclient"
)

var origin = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

const address = "0x00000000219ab540356cbb839cbe05303d7705fa"

// service is a fake staking service of periods 0..periods-1, a day each, and a list of set-up
// requests; it counts the records it hands out.
type service struct {
	periods int64
	ssv     []apiclient.SetupRequest
	served  int
	// repeat answers the first page whatever the offset; fail, when set, fails each APY request.
	repeat bool
	fail   func() error
}

func (s *service) first(startAt time.Time, startNumber *int64) int64 {
	n := int64(0)
	if !startAt.IsZero() {
		n = int64(startAt.Sub(origin) / (24 * time.Hour))
	}
	if startNumber != nil {
		n = max(n, *startNumber)
	}
	return n
}

// pageOf is the page of items from offset, at most limit long, and the number served.
func pageOf[T any](s *service, all []T, limit, offset int) []T {
	if offset >= len(all) {
		return []T{}
	}
	out := all[offset:min(offset+limit, len(all))]
	s.served += len(out)
	return out
}

func (s *service) NetworkAPY(_ context.Context, _ string, q apiclient.NetworkAPYQuery) (*apiclient.NetworkAPYPage, error) {
	if s.fail != nil {
		return nil, s.fail()
	}
	var all []apiclient.NetworkAPYRecord
	for n := s.first(q.StartAt, q.StartNumber); n < s.periods; n++ {
		all = append(all, apiclient.NetworkAPYRecord{StakingPeriodNumber: n, StakingPeriodStart: origin.Add(time.Duration(n) * 24 * time.Hour), NetworkAPY: "3.5"})
	}
	if s.repeat {
		q.Offset = 0 // a hostile pager: the same page whatever the offset
	}
	return &apiclient.NetworkAPYPage{Limit: q.Limit, Offset: q.Offset, List: pageOf(s, all, q.Limit, q.Offset)}, nil
}

func (s *service) DelegatorAPR(_ context.Context, _ string, q apiclient.DelegatorAPRQuery) (*apiclient.DelegatorRewardsPage, error) {
	var all []apiclient.DelegatorRewardRecord
	for n := s.first(q.StartAt, q.StartNumber); n < s.periods; n++ {
		all = append(all, apiclient.DelegatorRewardRecord{StakingPeriod: strconv.FormatInt(n, 10), StakingPeriodStart: origin.Add(time.Duration(n) * 24 * time.Hour),
			Rewards: []apiclient.Reward{{Type: apiclient.RewardTypeConsensus, Amount: "1.000000000000000001", NetAmount: "0.9", Fee: "0.100000000000000001"}}})
	}
	return &apiclient.DelegatorRewardsPage{Limit: int32(q.Limit), Offset: int32(q.Offset), List: pageOf(s, all, q.Limit, q.Offset)}, nil
}

func (s *service) SSVRequests(_ context.Context, q apiclient.SSVRequestsQuery) (*apiclient.SetupRequestPage, error) {
	return &apiclient.SetupRequestPage{Limit: q.Limit, Offset: q.Offset, TotalCount: len(s.ssv), List: pageOf(s, s.ssv, q.Limit, q.Offset)}, nil
}

type JobsSuite struct {
	suite.Suite
	testsuite.WorkflowTestSuite
	env   *testsuite.TestWorkflowEnvironment
	svc   *service
	store *jobstest.Store
}

func TestJobs(t *testing.T) { suite.Run(t, new(JobsSuite)) }

func (s *JobsSuite) SetupTest() {
	s.env = s.NewTestWorkflowEnvironment()
	Register(s.env)
	s.svc = &service{periods: 30}
	s.store = jobstest.New()
	acts := actjobs.New(s.svc, s.store)
	acts.Now = func() time.Time { return origin }
	s.env.RegisterActivity(acts)
}

func (s *JobsSuite) result() Progress {
	s.Require().True(s.env.IsWorkflowCompleted())
	s.Require().NoError(s.env.GetWorkflowError())
	var p Progress
	s.Require().NoError(s.env.GetWorkflowResult(&p))
	return p
}

func (s *JobsSuite) TestAPYResumesFromLastStoredPeriod() {
	_, err := s.store.UpsertAPY(context.Background(), []actjobs.APY{{Network: "kusama", Period: 5, NetworkAPY: "1"}})
	s.Require().NoError(err)
	s.env.ExecuteWorkflow(APYJobWorkflowType, APYJobInput{Network: "kusama", Limits: Limits{MaxRecords: 10}})
	p := s.result()
	// 5..14, 14..23, 23..29: each call reads the last stored period again.
	s.Equal(Progress{Calls: 3, Read: 27, Upserted: 27, Last: "29", Runs: 1, Requests: 3}, p)
	rows, err := s.store.APYs(context.Background(), actjobs.Query{Network: "kusama"})
	s.Require().NoError(err)
	s.Len(rows, 25, "periods 5..29, none before the stored one")
	s.Equal(int64(5), rows[0].Period)
	s.Equal("3.5", rows[0].NetworkAPY, "the stored period is read again")
	s.Equal(25+16+7, s.svc.served, "each call fetches one whole page: 5..29, 14..29, 23..29")
}

func (s *JobsSuite) TestRewardsResumesFromLastStoredPeriod() {
	_, err := s.store.UpsertRewards(context.Background(), []actjobs.Reward{{Network: "ethereum", Address: address, Period: "20", Type: "consensus",
		PeriodStart: origin.Add(20 * 24 * time.Hour)}})
	s.Require().NoError(err)
	s.env.ExecuteWorkflow(RewardsJobWorkflowType, RewardsJobInput{Network: "ethereum", Address: address})
	p := s.result()
	s.Equal(Progress{Calls: 1, Read: 10, Upserted: 10, Last: "29", Runs: 1, Requests: 1}, p)
	rows, err := s.store.Rewards(context.Background(), actjobs.Query{Address: address})
	s.Require().NoError(err)
	s.Require().Len(rows, 10)
	s.Equal("20", rows[0].Period)
	s.Equal("1.000000000000000001", rows[0].Amount)
	s.Equal("0.100000000000000001", rows[0].Fee)
}

func (s *JobsSuite) TestContinuesAsNewAfterItsBudget() {
	s.env.ExecuteWorkflow(APYJobWorkflowType, APYJobInput{Network: "sui", Limits: Limits{MaxRecords: 4, MaxActivities: 2}})
	s.Require().True(s.env.IsWorkflowCompleted())
	err := s.env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	s.Require().True(errors.As(err, &can), "want continue-as-new, got %v", err)
	s.Equal(APYJobWorkflowType, can.WorkflowType.Name)
	var next APYJobInput
	s.Require().NoError(converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	s.Equal("sui", next.Network)
	s.Equal(Limits{MaxRecords: 4, MaxActivities: 2}, next.Limits)
	s.Require().NotNil(next.Progress)
	// 0..3 then 3..6: two calls, then the next run.
	s.Equal(Progress{Calls: 2, Read: 8, Upserted: 8, Last: "6", Runs: 1, Requests: 2}, *next.Progress)
	last, ok, err := s.store.LastAPYPeriod(context.Background(), "sui")
	s.Require().NoError(err)
	s.True(ok)
	s.Equal(int64(6), last, "the next run resumes from the store")
}

func (s *JobsSuite) TestContinuedRunCarriesItsProgress() {
	s.svc.periods = 3
	s.env.ExecuteWorkflow(APYJobWorkflowType, APYJobInput{Network: "sui", Progress: &Progress{Calls: 50, Read: 400, Upserted: 400, Last: "2", Runs: 1}})
	s.Equal(Progress{Calls: 51, Read: 403, Upserted: 403, Last: "2", Runs: 2, Requests: 1}, s.result())
}

func (s *JobsSuite) TestSSVJobPagesWithOffsets() {
	for i := range 7 {
		s.svc.ssv = append(s.svc.ssv, apiclient.SetupRequest{ID: fmt.Sprintf("r%d", i), Status: "processing", ValidatorsCount: 1, AmountPerValidator: "32"})
	}
	s.svc.ssv[4].Status = "failed"
	s.env.ExecuteWorkflow(SSVJobWorkflowType, SSVJobInput{Limits: Limits{MaxRecords: 3}})
	s.Equal(Progress{Calls: 3, Read: 7, Upserted: 7, Changes: 7, Failed: []string{"r4"}, Runs: 1, Requests: 3}, s.result())
	s.Len(s.store.Events, 7)
}

func (s *JobsSuite) TestBadInputIsRefusedAtOnce() {
	for name, start := range map[string]func(*testsuite.TestWorkflowEnvironment){
		"unknown network": func(env *testsuite.TestWorkflowEnvironment) {
			env.ExecuteWorkflow(APYJobWorkflowType, APYJobInput{Network: "bitcoin"})
		},
		"rewards of another network": func(env *testsuite.TestWorkflowEnvironment) {
			env.ExecuteWorkflow(RewardsJobWorkflowType, RewardsJobInput{Network: "solana", Address: address})
		},
		"malformed address": func(env *testsuite.TestWorkflowEnvironment) {
			env.ExecuteWorkflow(RewardsJobWorkflowType, RewardsJobInput{Network: "ethereum", Address: "0x00000000219ab540356cbb839cbe05303d7705f"})
		},
		"negative budget": func(env *testsuite.TestWorkflowEnvironment) {
			env.ExecuteWorkflow(SSVJobWorkflowType, SSVJobInput{Limits: Limits{MaxActivities: -1}})
		},
	} {
		s.Run(name, func() {
			s.SetupTest()
			started := 0
			s.env.SetOnActivityStartedListener(func(*activity.Info, context.Context, converter.EncodedValues) { started++ })
			start(s.env)
			s.Require().True(s.env.IsWorkflowCompleted())
			var appErr *temporal.ApplicationError
			s.Require().True(errors.As(s.env.GetWorkflowError(), &appErr), "want an application error, got %v", s.env.GetWorkflowError())
			s.Equal(activities.ErrInvalidInput, appErr.Type())
			s.True(appErr.NonRetryable())
			s.Zero(started, "refused before any activity")
		})
	}
}

func TestSummary(t *testing.T) {
	assert.Equal(t, "collect the network APY of solana", Summary(KindAPY, "solana", ""))
	assert.Equal(t, "collect the delegator rewards of "+address+" on ethereum", Summary(KindRewards, "ethereum", address))
	require.Equal(t, "watch the SSV set-up requests", Summary(KindSSV, "", ""))
}

// TestDetailsShowProgress reads the job's current details as the Web UI does (the metadata query).
func (s *JobsSuite) TestDetailsShowProgress() {
	s.env.ExecuteWorkflow(APYJobWorkflowType, APYJobInput{Network: "celestia", Limits: Limits{MaxRecords: 20}})
	s.result()
	v, err := s.env.QueryWorkflow("__temporal_workflow_metadata")
	s.Require().NoError(err)
	var md sdkpb.WorkflowMetadata
	s.Require().NoError(v.Get(&md))
	s.Equal("**apy job** celestia: caught up\n\n- calls: 2 (run 1)\n- records read: 31\n- rows written: 31\n- requests: 2\n- last staking period: 29\n",
		md.GetCurrentDetails())
}
