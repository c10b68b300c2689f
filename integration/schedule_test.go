//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/workflows"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
)

type scheduleDescription struct {
	Paused bool `json:"paused"`
	Recent []struct {
		OperationID string `json:"operationId"`
	} `json:"recentActions"`
}

func describeSchedule(t *testing.T, id string) scheduleDescription {
	t.Helper()
	out, err := starterRun(t, "schedule", "describe", "--schedule-id", id, "--json")
	require.NoError(t, err, out)
	var d scheduleDescription
	require.NoError(t, json.Unmarshal([]byte(out), &d), out)
	return d
}

// triggerRun runs a schedule once now through the admin tool and returns the run's operation ID,
// which must derive from the schedule's ID and the run's time.
func triggerRun(t *testing.T, id string) string {
	t.Helper()
	out, err := starterRun(t, "schedule", "trigger", "--schedule-id", id)
	require.NoError(t, err, out)
	var opID string
	require.Eventually(t, func() bool {
		d := describeSchedule(t, id)
		if len(d.Recent) == 0 {
			return false
		}
		opID = d.Recent[0].OperationID
		return true
	}, 30*time.Second, 200*time.Millisecond)
	require.Regexp(t, "^"+id+"-", opID, "each run's operation ID is derived from the schedule ID and its time")
	return opID
}

// TestScheduledStake creates a daily stake schedule through the admin tool, triggers it, and
// checks the run is an ordinary stake operation with a derived operation ID that lands exactly
// once; then pauses, lists and deletes the schedule.
func TestScheduledStake(t *testing.T) {
	staker := st.Stakers[8]
	id := "daily-" + time.Now().Format("150405.000000")
	out, err := starterRun(t, "schedule", "create", "--schedule-id", id, "--every", "24h", "--network", "testnet",
		"--staker", staker.String(), "--sol", "2")
	require.NoError(t, err, out)
	t.Cleanup(func() { _, _ = starterRun(t, "schedule", "delete", "--schedule-id", id) })

	opID := triggerRun(t, id)

	waitStep(t, opID, workflows.StepDone)
	out, err = starterRun(t, "status", "--id", opID, "--json")
	require.NoError(t, err, out)
	var v struct {
		Status workflows.Status `json:"status"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	require.Len(t, v.Status.Transactions, 1)
	require.Equal(t, []string{v.Status.Transactions[0].TxID}, landedBy(t, staker))
	require.Equal(t, strconv.FormatUint(2*sol, 10), v.Status.Amount)

	out, err = starterRun(t, "schedule", "pause", "--schedule-id", id, "--note", "treasury freeze")
	require.NoError(t, err, out)
	require.True(t, describeSchedule(t, id).Paused)
	out, err = starterRun(t, "schedule", "list")
	require.NoError(t, err, out)
	require.Contains(t, out, id)
	out, err = starterRun(t, "schedule", "delete", "--schedule-id", id)
	require.NoError(t, err, out)
	_, err = starterRun(t, "schedule", "describe", "--schedule-id", id)
	require.Error(t, err)
}

// TestScheduledPolygonRestake schedules a Polygon restake through the admin tool (the compounding
// an operator runs weekly), triggers it, and checks on the real chain that the run restaked
// exactly the rewards accrued, in one restakePOL transaction, as an ordinary Polygon operation
// with an ID derived from the schedule's.
func TestScheduledPolygonRestake(t *testing.T) {
	ctx := context.Background()
	e := st.EVM
	staker, v := e.Stakers[4], e.Deployment.Validators[1]
	delegateWait(t, staker, v.Share, "40")

	id := "weekly-restake-" + time.Now().Format("150405.000000")
	out, err := starterRun(t, "schedule", "create", "--schedule-id", id, "--cron", "0 9 * * MON", "--chain", "polygon",
		"--operation", "restake", "--network", stack.EVMNetwork, "--staker", staker.Hex(), "--validator-share", v.Share.Hex())
	require.NoError(t, err, out)
	t.Cleanup(func() { _, _ = starterRun(t, "schedule", "delete", "--schedule-id", id) })

	require.NoError(t, e.Deployment.AdvanceEpochs(ctx, 1), "a checkpoint pays rewards")
	staked, _, err := e.Deployment.TotalStake(ctx, v.Share, staker)
	require.NoError(t, err)
	nonce, err := e.Node.Client().NonceAt(ctx, staker, nil)
	require.NoError(t, err)
	opID := triggerRun(t, id)

	var res wfpolygon.Result
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	require.NoError(t, st.Client.GetWorkflow(wctx, opID, "").Get(wctx, &res))
	require.Equal(t, wfpolygon.OpRestake, res.Operation)
	require.Len(t, res.Transactions, 1)
	require.Equal(t, "restake", res.Transactions[0].Kind)
	after, _, err := e.Deployment.TotalStake(ctx, v.Share, staker)
	require.NoError(t, err)
	require.Equal(t, 1, after.Cmp(staked), "the rewards were restaked: %s -> %s", staked, after)
	left, err := e.Deployment.LiquidRewards(ctx, v.Share, staker)
	require.NoError(t, err)
	require.Zero(t, left.Sign(), "no rewards left liquid")
	nonceAfter, err := e.Node.Client().NonceAt(ctx, staker, nil)
	require.NoError(t, err)
	require.Equal(t, nonce+1, nonceAfter, "one transaction, once")
}
