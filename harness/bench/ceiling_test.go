package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/suite"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

type ceilingSuite struct {
	suite.Suite
	testsuite.WorkflowTestSuite
}

func TestCeiling(t *testing.T) { suite.Run(t, new(ceilingSuite)) }

// TestShapes checks that each ceiling runs StakeWorkflow's seven activities in order, with the
// local/normal split of its shape, and that only the ceiling proper upserts search attributes, as
// often as StakeWorkflow started through StartOptions does (confirming, done).
func (s *ceilingSuite) TestShapes() {
	for _, tc := range []struct {
		wf      func(workflow.Context, CeilingInput) error
		local   map[string]bool
		upserts int
	}{
		{CeilingWorkflow, map[string]bool{"CheckPolicy": true, "Sign": true}, 2},
		{CeilingPlainWorkflow, map[string]bool{"CheckPolicy": true, "Sign": true}, 0},
		{CeilingLocalWorkflow, map[string]bool{"CheckPolicy": true, "Build": true, "Sign": true, "Broadcast": true}, 0},
		{CeilingNaiveWorkflow, map[string]bool{}, 0},
	} {
		env := s.NewTestWorkflowEnvironment()
		RegisterCeiling(env)
		upserts := 0
		timeouts := map[string][3]time.Duration{}
		env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
			timeouts[strings.TrimPrefix(info.ActivityType.Name, noopPrefix)] = [3]time.Duration{
				info.StartToCloseTimeout, info.ScheduleToCloseTimeout, info.HeartbeatTimeout}
		})
		env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(mock.Arguments) { upserts++ }).Return(nil).Maybe()
		var order []string
		local := map[string]bool{}
		env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
			local[strings.TrimPrefix(info.ActivityType.Name, noopPrefix)] = true
		})
		for _, name := range []string{"CheckPolicy", "CheckValidator", "Build", "Sign", "CheckFresh", "Broadcast", "Confirm"} {
			name := name
			env.OnActivity(noopPrefix+name, mock.Anything, mock.Anything).Run(func(mock.Arguments) {
				order = append(order, name)
			}).Return(NoopResult{}, nil).Once()
		}
		env.ExecuteWorkflow(tc.wf, CeilingInput{Staker: "s", VoteAccount: "v", Lamports: 1})
		s.True(env.IsWorkflowCompleted())
		s.NoError(env.GetWorkflowError())
		s.Equal([]string{"CheckPolicy", "CheckValidator", "Build", "Sign", "CheckFresh", "Broadcast", "Confirm"}, order)
		s.Equal(tc.local, local, "local activities")
		s.Equal(tc.upserts, upserts, "search-attribute upserts")
		if !tc.local["Build"] {
			// StakeWorkflow's timeouts: they cost the server timer tasks.
			s.Equal(30*time.Minute, timeouts["Build"][1], "Build schedule-to-close")
			s.Equal(2*time.Minute, timeouts["Broadcast"][1], "Broadcast schedule-to-close")
			s.Equal(10*time.Minute, timeouts["CheckValidator"][1], "CheckValidator schedule-to-close")
			s.Equal(30*time.Second, timeouts["Confirm"][2], "Confirm heartbeat")
			s.Equal(10*time.Minute, timeouts["Confirm"][0], "Confirm start-to-close")
		}
		env.AssertExpectations(s.T())
	}
}
