package jobs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"github.com/stretchr/testify/suite"
	"github.com/uber-go/tally/v4"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/activity"
	sdktally "go.temporal.io/sdk/contrib/tally"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actjobs "github.com/stakeflow/stakeflow/activities/jobs"
	"github.com/stakeflow/stakeflow/activities/jobs/jobstest"
	"github.com/stakeflow/stakeflow/activities/notify"
	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/workflows"
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
		all = append(all, apiclient.NetworkAPYRecord{StakingPeriodNumber: n, StakingPeriodStart: apiclient.DateTime{Time: origin.Add(time.Duration(n) * 24 * time.Hour)}, NetworkAPY: "3.5"})
	}
	from := q.Offset
	if s.repeat {
		from = 0 // a hostile pager: the same page whatever the offset, said to be at the offset asked
	}
	return &apiclient.NetworkAPYPage{Limit: q.Limit, Offset: q.Offset, List: pageOf(s, all, q.Limit, from)}, nil
}

func (s *service) DelegatorAPR(_ context.Context, _ string, q apiclient.DelegatorAPRQuery) (*apiclient.DelegatorRewardsPage, error) {
	var all []apiclient.DelegatorRewardRecord
	for n := s.first(q.StartAt, q.StartNumber); n < s.periods; n++ {
		all = append(all, apiclient.DelegatorRewardRecord{StakingPeriod: strconv.FormatInt(n, 10), StakingPeriodStart: apiclient.DateTime{Time: origin.Add(time.Duration(n) * 24 * time.Hour)},
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
	env     *testsuite.TestWorkflowEnvironment
	svc     *service
	store   *jobstest.Store
	metrics tally.TestScope
}

func TestJobs(t *testing.T) { suite.Run(t, new(JobsSuite)) }

func (s *JobsSuite) SetupTest() {
	s.metrics = tally.NewTestScope("", nil)
	s.SetMetricsHandler(sdktally.NewMetricsHandler(s.metrics))
	s.env = s.NewTestWorkflowEnvironment()
	Register(s.env)
	// A worker without a webhook: NotifyConfig answers off unless a test mocks it (notifying).
	s.env.RegisterActivity(&notify.Notifier{})
	s.env.RegisterWorkflowWithOptions(workflows.NotifyWorkflow, workflow.RegisterOptions{Name: workflows.NotifyWorkflowType})
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

// notifying makes the worker post events and records each event's delivery workflow as it starts.
func (s *JobsSuite) notifying() *[]notify.Event {
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

func (s *JobsSuite) status() Status {
	v, err := s.env.QueryWorkflow(workflows.QueryStatus)
	s.Require().NoError(err)
	var st Status
	s.Require().NoError(v.Get(&st))
	return st
}

func (s *JobsSuite) counter(name string, tags map[string]string) int64 {
	for _, c := range s.metrics.Snapshot().Counters() {
		if c.Name() != name {
			continue
		}
		match := true
		for k, v := range tags {
			match = match && c.Tags()[k] == v
		}
		if match {
			return c.Value()
		}
	}
	return 0
}

func (s *JobsSuite) requireFailed(errType string, contains string) {
	s.Require().True(s.env.IsWorkflowCompleted())
	var appErr *temporal.ApplicationError
	s.Require().True(errors.As(s.env.GetWorkflowError(), &appErr), "want an application error, got %v", s.env.GetWorkflowError())
	s.Equal(errType, appErr.Type())
	s.True(appErr.NonRetryable())
	s.Contains(appErr.Error(), contains)
}

// The finding: a pager that answers the same page whatever the offset kept the APY job reading
// and restarting itself. Now the run ends on the second page with an error naming it, is counted
// and notified, and its status says failed.
func (s *JobsSuite) TestAPagerThatRepeatsEndsTheRun() {
	events := s.notifying()
	s.svc.periods, s.svc.repeat = 5000, true
	s.env.ExecuteWorkflow(APYJobWorkflowType, APYJobInput{Network: "polkadot"})
	s.requireFailed(actjobs.ErrPageNotAdvancing, "the page at offset 1000 holds only rows already read")
	s.Equal(2000, s.svc.served, "two pages, not thousands")
	st := s.status()
	s.Equal(StateFailed, st.State)
	s.Contains(st.Reason, "the service's pages do not advance")
	s.Equal(int64(1), s.counter(MetricJobFailures, map[string]string{LabelJob: "apy", activities.LabelFailureType: actjobs.ErrPageNotAdvancing}))
	s.Require().Len(*events, 1)
	s.Equal(notify.EventFailed, (*events)[0].Type)
	s.Equal("job-apy", (*events)[0].Operation)
	s.Contains((*events)[0].Reason, "do not advance")
}

// A run that reaches its cap of requests with pages left ends naming the cap, across the calls
// of the run; what it read is stored, for the next run to resume from.
func (s *JobsSuite) TestRequestsOfARunAreCapped() {
	s.svc.periods = 10_000
	s.env.ExecuteWorkflow(APYJobWorkflowType, APYJobInput{Network: "sui", Limits: Limits{MaxRecords: 1000, MaxRequests: 3}})
	s.requireFailed(ErrRequestCap, "3 requests sent in this run, its cap (maxRequests 3), and the service still has pages to read")
	last, ok, err := s.store.LastAPYPeriod(context.Background(), "sui")
	s.Require().NoError(err)
	s.True(ok)
	s.Equal(int64(2997), last, "three calls of a page each: 0..999, 999..1998, 1998..2997")
	s.Equal(3, s.status().Progress.Requests)
}

// A call that keeps failing (the service down) stalls the job visibly: the status query says
// stalled with the last error and the next try, the stall is counted once and notified once, the
// tries back off; when the service heals the job catches up.
func (s *JobsSuite) TestAJobThatKeepsFailingStallsVisibly() {
	// Under -race on a loaded machine the first workflow task has taken over the default second.
	s.env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 30 * time.Second})
	events := s.notifying()
	s.svc.periods = 3
	failures := 0
	s.svc.fail = func() error {
		failures++
		return errors.New("connection refused")
	}
	var stalled []Status
	starts := 0
	s.env.SetOnActivityStartedListener(func(*activity.Info, context.Context, converter.EncodedValues) { starts++ })
	// Five attempts fail within 75 s (5 s, doubling), then the job waits 1, 2, 4, 8 minutes: it
	// waits from about 3m30 to 5m30 and from 12m to 20m. Look at it in those waits, then let the
	// service heal before the try at 20m.
	for _, at := range []time.Duration{4 * time.Minute, 13 * time.Minute} {
		s.env.RegisterDelayedCallback(func() { stalled = append(stalled, s.status()) }, at)
	}
	s.env.RegisterDelayedCallback(func() { s.svc.fail = nil }, 18*time.Minute)
	s.env.ExecuteWorkflow(APYJobWorkflowType, APYJobInput{Network: "kusama"})
	p := s.result()
	s.Equal("2", p.Last)
	s.Nil(p.Stall, "healed")

	s.Require().Len(stalled, 2)
	for _, st := range stalled {
		s.Equal(StateStalled, st.State)
		s.Require().NotNil(st.Stall)
		s.Contains(st.Stall.LastError, "connection refused")
		s.True(st.Stall.NextTryAt.After(st.Stall.Since))
	}
	s.Greater(stalled[1].Stall.Tries, stalled[0].Stall.Tries)
	s.Equal(stalled[0].Stall.Since, stalled[1].Stall.Since, "one stall, tried again")
	s.Equal(int64(1), s.counter(MetricJobStalls, map[string]string{LabelJob: "apy"}), "counted once per stall")
	s.Require().Len(*events, 1, "notified once per stall")
	s.Equal(notify.EventStalled, (*events)[0].Type)
	s.Contains((*events)[0].Reason, "connection refused")
	// Five attempts a call, four calls in twenty minutes: twenty failed requests, not thousands.
	s.Equal(20, failures)
	s.Equal(21, starts, "twenty failed attempts and the one that caught up")
	s.Equal(StateCaughtUp, s.status().State)
}

// Records that contradict themselves are counted in the job's progress and its details.
func (s *JobsSuite) TestFlaggedRowsAreCounted() {
	for i := range 2 {
		s.svc.ssv = append(s.svc.ssv, apiclient.SetupRequest{ID: fmt.Sprintf("r%d", i), Status: "processing", ValidatorsCount: i, AmountPerValidator: "32"})
	}
	s.env.ExecuteWorkflow(SSVJobWorkflowType, SSVJobInput{})
	s.Equal(1, s.result().Flagged)
	rows, err := s.store.SSVRequests(context.Background(), actjobs.Query{})
	s.Require().NoError(err)
	s.Equal("validatorsCount 0 is below 1", rows[0].Flag)
}
