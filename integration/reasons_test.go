//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"

	"github.com/stakeflow/stakeflow/workflows"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// TestFailureReadsInOneLine rejects an operation waiting for approval: the Web UI's failure
// message (the workflow's failure), `starter status` and `starter list` all say why in one line,
// cause first, while --json keeps the whole chain; nothing was sent.
func TestFailureReadsInOneLine(t *testing.T) {
	staker := st.Stakers[24]
	id := operationID(t, "stake")
	out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--lamports", "60000000000",
		"--id", id, "--requested-by", "alice")
	require.NoError(t, err, out)
	waitStep(t, id, workflows.StepAwaitingApproval)
	out, err = starterRun(t, "reject", "--id", id, "--approver", "bob", "--reason", "not this quarter")
	require.NoError(t, err, out)
	const want = "rejected by bob: not this quarter; nothing was built or signed"

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var res wfsolana.Result
	err = st.Client.GetWorkflow(ctx, id, "").Get(ctx, &res)
	require.Error(t, err)
	require.Equal(t, want, failureReasonOf(ctx, t, id), "the failure the Web UI shows")
	require.Empty(t, landedBy(t, staker), "nothing sent")

	out, err = starterRun(t, "status", "--id", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "\n  failed: "+want)
	out, err = starterRun(t, "status", "--id", id, "--json")
	require.NoError(t, err, out)
	var v struct {
		Status workflows.Status `json:"status"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	require.Equal(t, want, v.Status.Reason)
	require.Contains(t, v.Status.Error, want)

	out, err = starterRun(t, "list", "--json", "--limit", "1000")
	require.NoError(t, err, out)
	var rows []struct {
		OperationID string `json:"operationId"`
		Reason      string `json:"reason"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rows), out)
	found := false
	for _, r := range rows {
		if r.OperationID == id {
			found = true
			require.Equal(t, want, r.Reason)
		}
	}
	require.True(t, found, "%s listed", id)
}

// failureReasonOf is the message of a workflow's failure, read from its close event.
func failureReasonOf(ctx context.Context, t *testing.T, id string) string {
	t.Helper()
	it := st.Client.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		if a := ev.GetWorkflowExecutionFailedEventAttributes(); a != nil {
			return a.GetFailure().GetMessage()
		}
	}
	t.Fatalf("%s has no failure event", id)
	return ""
}

// TestStakeBeyondBalanceReadsDecoded stakes more SOL than the staker holds: the real runtime
// refuses the broadcast with the System program's custom error 1, and the operation's reason
// names it, cause first, in the failure the Web UI shows and in `starter status`; --json keeps
// the service's raw answer. Nothing lands.
func TestStakeBeyondBalanceReadsDecoded(t *testing.T) {
	staker := st.Stakers[25] // 100 SOL, used by no other test
	id := operationID(t, "stake")
	out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--lamports", "150000000000",
		"--id", id, "--requested-by", "alice")
	require.NoError(t, err, out)
	waitStep(t, id, workflows.StepAwaitingApproval)
	out, err = starterRun(t, "approve", "--id", id, "--approver", "bob")
	require.NoError(t, err, out)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var res wfsolana.Result
	require.Error(t, st.Client.GetWorkflow(ctx, id, "").Get(ctx, &res))
	const want = "insufficient funds: the staker's balance does not cover the amount plus fees (System program error 1, ResultWithNegativeLamports); broadcast "
	require.True(t, strings.HasPrefix(failureReasonOf(ctx, t, id), want), failureReasonOf(ctx, t, id))
	require.Empty(t, landedBy(t, staker), "nothing landed")

	out, err = starterRun(t, "status", "--id", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "\n  failed: "+want)
	out, err = starterRun(t, "status", "--id", id, "--json")
	require.NoError(t, err, out)
	var v struct {
		Status workflows.Status `json:"status"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	require.True(t, strings.HasPrefix(v.Status.Reason, want), v.Status.Reason)
	require.Contains(t, v.Status.Error, "custom program error: 0x1", "the raw answer stays in the chain")
}
