//go:build integration

package integration

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	actjobs "github.com/stakeflow/stakeflow/activities/jobs"
	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/workflows"
	wfjobs "github.com/stakeflow/stakeflow/workflows/jobs"
)

// triggerJob runs a job's schedule once now and returns the run's workflow ID, once the schedule
// lists it as its n-th action, and the run's result once it ended.
func triggerJob(t *testing.T, id string, n int) (string, wfjobs.Progress) {
	t.Helper()
	out, err := starterRun(t, "schedule", "trigger", "--schedule-id", id)
	require.NoError(t, err, out)
	var runID string
	require.Eventually(t, func() bool {
		d := describeSchedule(t, id)
		if len(d.Recent) < n {
			return false
		}
		runID = d.Recent[len(d.Recent)-1].OperationID
		return runID != ""
	}, 30*time.Second, 200*time.Millisecond)
	require.Regexp(t, "^"+id+"-", runID)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var p wfjobs.Progress
	require.NoError(t, st.Client.GetWorkflow(ctx, runID, "").Get(ctx, &p))
	return runID, p
}

func createJob(t *testing.T, args ...string) string {
	t.Helper()
	out, err := starterRun(t, append([]string{"schedule", "create", "--every", "24h", "--json"}, args...)...)
	require.NoError(t, err, out)
	var v struct {
		ScheduleID string `json:"scheduleId"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	t.Cleanup(func() { _, _ = starterRun(t, "schedule", "delete", "--schedule-id", v.ScheduleID) })
	return v.ScheduleID
}

// serviceClient reads the sandbox as the worker does, to compare the store with.
func serviceClient(t *testing.T) *apiclient.Client {
	t.Helper()
	cl, err := apiclient.New(st.Sandbox.URL(), apiclient.WithTokenFile(st.TokenFile))
	require.NoError(t, err)
	return cl
}

// TestDataJobs schedules the three data jobs through the admin tool, runs each, and checks the
// store against the service, the second runs' resumption, the SSV events against statuses the
// sandbox moved, and the admin tool's export and listing.
func TestDataJobs(t *testing.T) {
	ctx := context.Background()
	svc := serviceClient(t)
	since := time.Now().UTC().AddDate(0, 0, -10).Truncate(24 * time.Hour)

	t.Run("apy", func(t *testing.T) {
		id := createJob(t, "--job", "apy", "--network", "polkadot", "--since", since.Format(time.RFC3339))
		require.Equal(t, "job-apy-polkadot", id)
		runID, p := triggerJob(t, id, 1)
		recordAs(runID, wfjobs.APYJobWorkflowType+"-caught-up")
		var want []apiclient.NetworkAPYRecord
		for rec, err := range svc.NetworkAPYAll(ctx, "polkadot", apiclient.NetworkAPYQuery{StartAt: since, Limit: 1000}) {
			require.NoError(t, err)
			want = append(want, rec)
		}
		require.NotEmpty(t, want)
		assert.Equal(t, len(want), p.Read)
		rows, err := jobsStore.APYs(ctx, actjobs.Query{Network: "polkadot"})
		require.NoError(t, err)
		require.Len(t, rows, len(want))
		for i, r := range rows {
			assert.Equal(t, want[i].StakingPeriodNumber, r.Period)
			assert.Equal(t, want[i].NetworkAPY.String(), r.NetworkAPY)
		}

		_, p = triggerJob(t, id, 2)
		assert.Equal(t, 1, p.Read, "the second run reads only the last stored period again")
		again, err := jobsStore.APYs(ctx, actjobs.Query{Network: "polkadot"})
		require.NoError(t, err)
		assert.Equal(t, rows, again, "a second run adds nothing")

		// A burst of 429s is waited out (Retry-After), and the rows stay the same.
		require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{Endpoints: map[string]sandbox.EndpointFaults{
			sandbox.EndpointNetworkAPY: {Next429: 3, RetryAfterSeconds: 1}}}))
		t.Cleanup(func() { require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{})) })
		_, p = triggerJob(t, id, 3)
		assert.Equal(t, 1, p.Read)
		assert.Zero(t, st.Sandbox.Faults().Endpoints[sandbox.EndpointNetworkAPY].Next429, "the run met all three 429s")
		again, err = jobsStore.APYs(ctx, actjobs.Query{Network: "polkadot"})
		require.NoError(t, err)
		assert.Equal(t, rows, again, "a run through 429s adds nothing either")

		out, err := starterRun(t, "data", "export", "--kind", "apy", "--network", "polkadot")
		require.NoError(t, err, out)
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		require.NoError(t, err)
		require.Len(t, recs, len(want)+1, "a header and a row per period")
		assert.Equal(t, "networkApy", recs[0][5])
		last := want[len(want)-1]
		assert.Equal(t, []string{"polkadot", strconv.FormatInt(last.StakingPeriodNumber, 10)}, recs[len(recs)-1][:2])
		assert.Equal(t, last.NetworkAPY.String(), recs[len(recs)-1][5])
	})

	t.Run("rewards", func(t *testing.T) {
		addr := "0x00000000219ab540356cbb839cbe05303d7705fa"
		id := createJob(t, "--job", "rewards", "--network", "ethereum", "--address", addr, "--since", since.Format(time.RFC3339))
		runID, p := triggerJob(t, id, 1)
		recordAs(runID, wfjobs.RewardsJobWorkflowType+"-caught-up")
		n := 0
		// The service's rewards by staking period and type: amount, net amount, fee as it sent them.
		want := map[string][3]string{}
		for rec, err := range svc.DelegatorAPRAll(ctx, "ethereum", apiclient.DelegatorAPRQuery{Address: addr, StartAt: since, Limit: 1000}) {
			require.NoError(t, err)
			n += len(rec.Rewards)
			for _, r := range rec.Rewards {
				want[rec.StakingPeriod+"/"+string(r.Type)] = [3]string{r.Amount.String(), r.NetAmount.String(), r.Fee.String()}
			}
		}
		require.Positive(t, n)
		assert.Equal(t, n, p.Upserted)
		rows, err := jobsStore.Rewards(ctx, actjobs.Query{Address: addr})
		require.NoError(t, err)
		require.Len(t, rows, n)
		for _, r := range rows {
			assert.Equal(t, want[r.Period+"/"+r.Type], [3]string{r.Amount, r.NetAmount, r.Fee}, "period %s, %s", r.Period, r.Type)
		}
	})

	t.Run("continues as new", func(t *testing.T) {
		in := wfjobs.APYJobInput{Network: "kusama", Since: since, Limits: wfjobs.Limits{MaxRecords: 5, MaxActivities: 2}}
		run, err := st.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "job-apy-kusama-can-" + time.Now().Format("150405.000000"),
			TaskQueue: workflows.TaskQueueOf(workflows.DefaultTaskQueuePrefix, wfjobs.Module)}, wfjobs.APYJobWorkflowType, in)
		require.NoError(t, err)
		firstRun := run.GetRunID() // Get follows the chain to its last run
		var p wfjobs.Progress
		require.NoError(t, run.Get(ctx, &p))
		assert.Greater(t, p.Runs, 1, "a 10-day kusama history (40 periods) takes more than one run of 2 calls of 5")
		first, err := exportRunHistory(ctx, run.GetID(), firstRun)
		require.NoError(t, err)
		assert.Contains(t, string(first), "EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW")
		snapshotRaw(wfjobs.APYJobWorkflowType+"-continued-as-new", first)
	})

	t.Run("ssv", func(t *testing.T) {
		id := createJob(t, "--job", "ssv")
		require.Equal(t, "job-ssv", id)
		_, p := triggerJob(t, id, 1)
		assert.Equal(t, 3, p.Read)
		reqs, err := jobsStore.SSVRequests(ctx, actjobs.Query{})
		require.NoError(t, err)
		require.Len(t, reqs, 3)
		for _, r := range reqs {
			require.Equal(t, sandbox.SSVStatusProcessing, r.Status)
		}
		require.NoError(t, st.Sandbox.SetSSVStatus(reqs[0].ID, sandbox.SSVStatusFailed))
		require.NoError(t, st.Sandbox.SetSSVStatus(reqs[1].ID, sandbox.SSVStatusCompleted))
		runID, p := triggerJob(t, id, 2)
		recordAs(runID, wfjobs.SSVJobWorkflowType+"-failed-request")
		assert.Equal(t, 2, p.Changes)
		assert.Equal(t, []string{reqs[0].ID}, p.Failed)

		out, err := starterRun(t, "ssv", "list", "--status", "failed", "--json")
		require.NoError(t, err, out)
		var failed []map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &failed), out)
		require.Len(t, failed, 1)
		assert.Equal(t, reqs[0].ID, failed[0]["id"])
		assert.Contains(t, logs.String(), `"level":"error"`)
		assert.Regexp(t, `"level":"error"[^\n]*SSV set-up request failed[^\n]*`+reqs[0].ID, logs.String())
	})
}

// snapshotRaw records a history already exported under name (see snapshotAs).
func snapshotRaw(name string, raw []byte) {
	if *recordHistories == "" {
		return
	}
	finishedMu.Lock()
	defer finishedMu.Unlock()
	snapshots[name] = raw
}

// TestDataJobHostilePager: a service whose pager answers the same page whatever the offset (the
// sandbox's repeat-pages mode) made the APY job read and restart itself forever. Through the
// admin tool's schedule, the run now ends on the second page with an error naming it, after two
// requests; its status query says failed and why; what it read once is stored once.
func TestDataJobHostilePager(t *testing.T) {
	ctx := context.Background()
	st.Sandbox.SetRepeatPages(true)
	t.Cleanup(func() { st.Sandbox.SetRepeatPages(false) })
	// Celestia's daily periods since 2023: more than a page of 1,000.
	id := createJob(t, "--job", "apy", "--network", "celestia", "--since", "2023-01-01")
	out, err := starterRun(t, "schedule", "trigger", "--schedule-id", id)
	require.NoError(t, err, out)
	var runID string
	require.Eventually(t, func() bool {
		d := describeSchedule(t, id)
		if len(d.Recent) < 1 {
			return false
		}
		runID = d.Recent[0].OperationID
		return runID != ""
	}, 30*time.Second, 200*time.Millisecond)
	recordAs(runID, wfjobs.APYJobWorkflowType+"-page-not-advancing")
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	err = st.Client.GetWorkflow(wctx, runID, "").Get(wctx, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the page at offset 1000 holds only rows already read")

	v, err := st.Client.QueryWorkflow(wctx, runID, "", workflows.QueryStatus)
	require.NoError(t, err)
	var status wfjobs.Status
	require.NoError(t, v.Get(&status))
	assert.Equal(t, wfjobs.StateFailed, status.State)
	assert.Contains(t, status.Reason, "the service's pages do not advance")
	assert.Equal(t, 1, status.Progress.Runs, "it did not restart itself")
	rows, err := jobsStore.APYs(ctx, actjobs.Query{Network: "celestia"})
	require.NoError(t, err)
	assert.Len(t, rows, 1000, "the one page read, stored once")
	for _, r := range rows {
		assert.Empty(t, r.Flag, "the sandbox's APYs are what a chain pays")
	}
}
