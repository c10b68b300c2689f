//go:build integration

package sandbox

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	actjobs "github.com/stakeflow/stakeflow/activities/jobs"
	"github.com/stakeflow/stakeflow/activities/jobs/jobstest"
	"github.com/stakeflow/stakeflow/apiclient"
)

// ssvStatuses lists the statuses endpoint 8 answers subject, by request ID.
func ssvStatusesOf(t *testing.T, cl *apiclient.Client) (ids []string, byID map[string]string) {
	t.Helper()
	page, err := cl.SSVRequests(testCtx(t), apiclient.SSVRequestsQuery{})
	require.NoError(t, err)
	byID = map[string]string{}
	for _, r := range page.List {
		ids = append(ids, r.ID)
		byID[r.ID] = r.Status
	}
	return ids, byID
}

// TestSSVStatusControl moves a set-up request through statuses with the control API and the Go
// method: endpoint 8 answers each new status, for that request only.
func TestSSVStatusControl(t *testing.T) {
	cl := client(t, shared.URL(), "ssv-control")
	other := client(t, shared.URL(), "ssv-control-other")
	ids, before := ssvStatusesOf(t, cl)
	require.Len(t, ids, ssvRequestsPerSubject)
	for _, id := range ids {
		require.Equal(t, SSVStatusProcessing, before[id])
	}
	_, otherBefore := ssvStatusesOf(t, other)

	r := do(t, http.MethodPost, shared.URL()+"/sandbox/ssv/status", "", map[string]string{"id": ids[1], "status": SSVStatusFailed})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	_, after := ssvStatusesOf(t, cl)
	assert.Equal(t, map[string]string{ids[0]: SSVStatusProcessing, ids[1]: SSVStatusFailed, ids[2]: SSVStatusProcessing}, after)
	_, otherAfter := ssvStatusesOf(t, other)
	assert.Equal(t, otherBefore, otherAfter, "another subject's requests are untouched")

	require.NoError(t, shared.SetSSVStatus(ids[2], SSVStatusCompleted))
	_, after = ssvStatusesOf(t, cl)
	assert.Equal(t, SSVStatusCompleted, after[ids[2]])

	r = do(t, http.MethodGet, shared.URL()+"/sandbox/ssv/status", "", nil)
	require.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, SSVStatusFailed, r.Body["result"].(map[string]any)[ids[1]])

	for _, bad := range []map[string]string{
		{"id": "not-a-uuid", "status": SSVStatusFailed},
		{"id": ids[0], "status": "Failed!"},
		{"id": ids[0]},
	} {
		r := do(t, http.MethodPost, shared.URL()+"/sandbox/ssv/status", "", bad)
		requireErrorEnvelope(t, r, http.StatusBadRequest, nameValidation, codeValidation, typeClient)
	}
	require.Error(t, shared.SetSSVStatus(ids[0], ""))
	_, after = ssvStatusesOf(t, cl)
	assert.Equal(t, SSVStatusProcessing, after[ids[0]], "a refused move changes nothing")
}

// TestSSVWatcherSeesRealChanges runs the SSV job's activity against the sandbox: it records each
// request once, then exactly the status changes the control made, and names the failed request.
func TestSSVWatcherSeesRealChanges(t *testing.T) {
	cl := client(t, shared.URL(), "ssv-watcher")
	ids, _ := ssvStatusesOf(t, cl)
	store := jobstest.New()
	acts := actjobs.New(cl, store)
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestActivityEnvironment()
	env.RegisterActivity(acts)
	watch := func() actjobs.SSVResult {
		v, err := env.ExecuteActivity(acts.WatchSSV, actjobs.SSVInput{})
		require.NoError(t, err)
		var res actjobs.SSVResult
		require.NoError(t, v.Get(&res))
		return res
	}

	res := watch()
	assert.Equal(t, actjobs.SSVResult{Read: 3, Changes: 3, Next: 3, Requests: 1}, res, "each request is new")
	assert.Equal(t, actjobs.SSVResult{Read: 3, Next: 3, Requests: 1}, watch(), "nothing moved")

	require.NoError(t, shared.SetSSVStatus(ids[0], "validators-registered"))
	require.NoError(t, shared.SetSSVStatus(ids[2], SSVStatusFailed))
	res = watch()
	assert.Equal(t, actjobs.SSVResult{Read: 3, Changes: 2, Failed: []string{ids[2]}, Next: 3, Requests: 1}, res)
	events := store.Events[3:]
	require.Len(t, events, 2)
	assert.Equal(t, [2]string{ids[0], SSVStatusProcessing + ">validators-registered"}, [2]string{events[0].RequestID, events[0].From + ">" + events[0].To})
	assert.Equal(t, [2]string{ids[2], SSVStatusProcessing + ">" + SSVStatusFailed}, [2]string{events[1].RequestID, events[1].From + ">" + events[1].To})

	failed, err := store.SSVRequests(context.Background(), actjobs.Query{Status: SSVStatusFailed})
	require.NoError(t, err)
	require.Len(t, failed, 1)
	assert.Equal(t, ids[2], failed[0].ID)
}
