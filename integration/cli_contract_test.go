//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/internal/contract"
	"github.com/stakeflow/stakeflow/workflows"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// cliStaker and cliEVMStaker are the indexes of the Solana and EVM stakers only the CLI contract
// tests use.
const (
	cliStaker    = 25
	cliEVMStaker = 3
)

// TestCLIStartApproveQuery runs an operation the way an admin tool in another language does,
// through docs/workflows.md only: the Temporal CLI starts a Solana stake above the approval
// threshold with a JSON input, polls the status query until it awaits approval, sees the
// requester's own approval refused, approves it as someone else with the approve update and reads
// the result; then unstakes it the same way. The query's, the update's and the results' JSON
// validate against the committed schemas, and the chain shows the stake, then the lamports back.
func TestCLIStartApproveQuery(t *testing.T) {
	staker := st.Stakers[cliStaker]
	id := operationID(t, "stake")
	lamports := approvalThreshold + 10*sol
	input := fmt.Sprintf(`{"network":"testnet","staker":%q,"lamports":%d,"requestedBy":"alice"}`, staker, lamports)
	out, err := temporalCLI(t, "workflow", "start", "--type", "StakeWorkflow", "--task-queue", queueOf(t, "StakeWorkflow"),
		"--workflow-id", id, "--id-reuse-policy", "RejectDuplicate", "--input", input,
		"--search-attribute", `StakeflowChain="solana"`, "--search-attribute", `StakeflowNetwork="testnet"`,
		"--search-attribute", `StakeflowOperation="stake"`, "--search-attribute", fmt.Sprintf("StakeflowStaker=%q", staker),
		"--search-attribute", fmt.Sprintf("StakeflowAmount=%d", lamports), "--search-attribute", `StakeflowStep="validating"`)
	require.NoError(t, err, out)
	runID := startedRun(t, out)

	statusSchema := committedSchema(t, reflect.TypeFor[workflows.Status]())
	status := cliWaitStep(t, id, workflows.StepAwaitingApproval, statusSchema)
	require.Equal(t, "alice", status["requestedBy"])
	require.Equal(t, true, status["approval"].(map[string]any)["required"])
	require.Empty(t, landedBy(t, staker), "nothing is sent before approval")

	out, err = temporalCLI(t, "workflow", "update", "execute", "--workflow-id", id, "--name", workflows.UpdateApprove,
		"--input", `{"approver":"alice"}`)
	require.Error(t, err, "the requester cannot approve: %s", out)
	require.Contains(t, out, "alice started this operation")

	out, err = temporalCLI(t, "workflow", "update", "execute", "--workflow-id", id, "--name", workflows.UpdateApprove,
		"--input", `{"approver":"bob","reason":"treasury plan"}`)
	require.NoError(t, err, out)
	var upd struct {
		Name   string          `json:"name"`
		Result json.RawMessage `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &upd), out)
	require.Equal(t, workflows.UpdateApprove, upd.Name)
	requireValid(t, statusSchema, upd.Result)
	var after workflows.Status
	require.NoError(t, json.Unmarshal(upd.Result, &after))
	require.Equal(t, workflows.DecisionApproved, after.Approval.Decision)
	require.Equal(t, "bob", after.Approval.Approver)

	resultSchema := committedSchema(t, reflect.TypeFor[wfsolana.Result]())
	var res wfsolana.Result
	cliResult(t, id, resultSchema, &res)

	require.Equal(t, lamports, res.Lamports)
	require.Len(t, res.Transactions, 1)
	require.Equal(t, string(actsolana.OpStake), res.Transactions[0].Kind)
	require.Equal(t, []string{res.Transactions[0].TxID}, landedBy(t, staker), "exactly one transaction from the staker, the one reported")
	ctx := context.Background()
	sig, err := chain.SignatureStatus(ctx, res.Transactions[0].TxID)
	require.NoError(t, err)
	require.True(t, sig.Finalized())
	acct, err := chain.StakeAccount(ctx, res.StakeAccount)
	require.NoError(t, err)
	require.Equal(t, lamports, acct.Lamports)
	require.Equal(t, staker.String(), acct.Meta.Staker)
	require.Equal(t, staker.String(), acct.Meta.Withdrawer)
	require.NotNil(t, acct.Stake)
	require.Equal(t, res.VoteAccount, acct.Stake.Delegation.Voter)

	// The operation ID is spent: starting it again starts nothing. Without --fail-existing the CLI
	// prints the earlier run; with it, it fails.
	again := []string{"workflow", "start", "--type", "StakeWorkflow", "--task-queue", queueOf(t, "StakeWorkflow"),
		"--workflow-id", id, "--id-reuse-policy", "RejectDuplicate", "--input", input}
	out, err = temporalCLI(t, again...)
	require.NoError(t, err, out)
	require.Equal(t, runID, startedRun(t, out), "the earlier run, not a new one")
	out, err = temporalCLI(t, append(again, "--fail-existing")...)
	require.Error(t, err, out)
	require.Contains(t, strings.ToLower(out), "already")
	require.Equal(t, []string{res.Transactions[0].TxID}, landedBy(t, staker), "the refused starts sent nothing")

	// The stake, active after an epoch, unstaked the same way: once approved it is deactivated, waits
	// for the end of the epoch (the test warps it) and its lamports come back to the staker.
	require.NoError(t, st.Sandbox.Runtime().WarpEpochs(ctx, 1))
	before, err := chain.Balance(ctx, staker.String())
	require.NoError(t, err)
	uid := operationID(t, "unstake")
	out, err = temporalCLI(t, "workflow", "start", "--type", "UnstakeWorkflow", "--task-queue", queueOf(t, "UnstakeWorkflow"),
		"--workflow-id", uid, "--id-reuse-policy", "RejectDuplicate", "--fail-existing",
		"--input", fmt.Sprintf(`{"network":"testnet","staker":%q,"stakeAccount":%q,"requestedBy":"alice"}`, staker, res.StakeAccount))
	require.NoError(t, err, out)
	cliWaitStep(t, uid, workflows.StepAwaitingApproval, statusSchema)
	out, err = temporalCLI(t, "workflow", "update", "execute", "--workflow-id", uid, "--name", workflows.UpdateApprove,
		"--input", `{"approver":"bob"}`)
	require.NoError(t, err, out)
	cliWaitStep(t, uid, wfsolana.StepWaitingDeactivation, statusSchema)
	require.NoError(t, st.Sandbox.Runtime().WarpEpochs(ctx, 1))
	var unstaked wfsolana.Result
	cliResult(t, uid, resultSchema, &unstaked)
	require.Equal(t, lamports, unstaked.Lamports)
	require.Len(t, unstaked.Transactions, 2)
	require.Equal(t, string(actsolana.OpUnstake), unstaked.Transactions[0].Kind)
	require.Equal(t, string(actsolana.OpWithdraw), unstaked.Transactions[1].Kind)
	back, err := chain.Balance(ctx, staker.String())
	require.NoError(t, err)
	require.Equal(t, before+lamports-2*fee, back, "the stake back, less the two fees")
	_, err = chain.StakeAccount(ctx, res.StakeAccount)
	require.ErrorIs(t, err, solchain.ErrAccountNotFound, "the stake account is closed")
}

// cliWaitStep polls the status query with the CLI until the operation reports step, validating
// each answer against schema, and returns the last status.
func cliWaitStep(t *testing.T, id, step string, schema *jsonschema.Schema) map[string]any {
	t.Helper()
	var status map[string]any
	waitCLI(t, func() (bool, string) {
		out, err := temporalCLI(t, "workflow", "query", "--workflow-id", id, "--name", workflows.QueryStatus)
		if err != nil {
			return false, out
		}
		var q struct {
			QueryResult []json.RawMessage `json:"queryResult"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &q), out)
		require.Len(t, q.QueryResult, 1, out)
		requireValid(t, schema, q.QueryResult[0])
		status = nil
		require.NoError(t, json.Unmarshal(q.QueryResult[0], &status))
		require.NotEqual(t, workflows.StepFailed, status["step"], out)
		return status["step"] == step, out
	})
	return status
}

// cliResult waits with the CLI for the operation's result, validates it against schema and
// decodes it into v.
func cliResult(t *testing.T, id string, schema *jsonschema.Schema, v any) {
	t.Helper()
	out, err := temporalCLI(t, "workflow", "result", "--workflow-id", id)
	require.NoError(t, err, out)
	var done struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &done), out)
	require.Equal(t, "COMPLETED", done.Status, out)
	requireValid(t, schema, done.Result)
	require.NoError(t, json.Unmarshal(done.Result, v))
}

// startedRun is the run ID `temporal workflow start --output json` printed.
func startedRun(t *testing.T, out string) string {
	t.Helper()
	var started struct {
		RunID string `json:"runId"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &started), out)
	require.NotEmpty(t, started.RunID, out)
	return started.RunID
}

// TestCLIPolygonDelegate delegates POL with the Temporal CLI only, as docs/workflows.md shows:
// the result validates against the committed schema, and the chain holds the stake.
func TestCLIPolygonDelegate(t *testing.T) {
	e := st.EVM
	staker, v := e.Stakers[cliEVMStaker], e.Deployment.Validators[0]
	id := operationID(t, "polygon-delegate")
	amount := pol(3)
	input := fmt.Sprintf(`{"network":%q,"staker":%q,"validatorShare":%q,"amount":%q,"requestedBy":"alice"}`,
		stack.EVMNetwork, staker.Hex(), v.Share.Hex(), amount.String())
	out, err := temporalCLI(t, "workflow", "start", "--type", wfpolygon.DelegateWorkflowType, "--task-queue", queueOf(t, wfpolygon.DelegateWorkflowType),
		"--workflow-id", id, "--id-reuse-policy", "RejectDuplicate", "--fail-existing", "--input", input)
	require.NoError(t, err, out)

	var res wfpolygon.Result
	cliResult(t, id, committedSchema(t, reflect.TypeFor[wfpolygon.Result]()), &res)
	require.Equal(t, amount.String(), res.Amount)
	require.Len(t, res.Transactions, 2)
	require.Equal(t, "approve", res.Transactions[0].Kind)
	require.Equal(t, "delegate", res.Transactions[1].Kind)
	for _, tx := range res.Transactions {
		require.Equal(t, paidFee(t, tx.TxID).String(), tx.Fee, "%s landed and paid what the result says", tx.Kind)
	}
	staked, _, err := e.Deployment.TotalStake(context.Background(), v.Share, staker)
	require.NoError(t, err)
	require.Equal(t, amount, staked, "the POL is staked with the validator")

	out, err = temporalCLI(t, "workflow", "query", "--workflow-id", id, "--name", workflows.QueryStatus)
	require.NoError(t, err, out)
	var q struct {
		QueryResult []json.RawMessage `json:"queryResult"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &q), out)
	require.Len(t, q.QueryResult, 1, out)
	requireValid(t, committedSchema(t, reflect.TypeFor[workflows.Status]()), q.QueryResult[0])
}

// temporalCLI runs the Temporal CLI against the stack's server with JSON output and returns what
// it printed (stdout, then stderr). It reads and writes payloads through a codec endpoint over
// the suite's keyset (--codec-endpoint), as an operator's CLI does.
func temporalCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	codecServer := httptest.NewServer(converter.NewPayloadCodecHTTPHandler(codec.New(keyset)))
	defer codecServer.Close()
	args = append(args, "--address", st.TemporalAddress(), "--namespace", "default", "--output", "json",
		"--codec-endpoint", codecServer.URL, "--disable-config-file", "--disable-config-env")
	cmd := exec.CommandContext(ctx, os.Getenv("TEMPORAL_CLI"), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return strings.TrimSpace(stdout.String() + stderr.String()), err
}

// waitCLI polls cond until it holds; it fails the test with cond's last output after 90 seconds.
func waitCLI(t *testing.T, cond func() (bool, string)) {
	t.Helper()
	deadline := time.NewTimer(90 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, last := cond()
		if ok {
			return
		}
		select {
		case <-deadline.C:
			t.Fatalf("condition never held; last output:\n%s", last)
		case <-tick.C:
		}
	}
}

// committedSchema compiles the committed schema of Go type typ with an independent validator.
func committedSchema(t *testing.T, typ reflect.Type) *jsonschema.Schema {
	t.Helper()
	dir, err := contract.SchemaPath()
	require.NoError(t, err)
	f, err := os.Open(filepath.Join(dir, contract.SchemaFile(typ)))
	require.NoError(t, err)
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	url := contract.SchemaBaseID + contract.SchemaFile(typ)
	require.NoError(t, c.AddResource(url, doc))
	sch, err := c.Compile(url)
	require.NoError(t, err)
	return sch
}

func requireValid(t *testing.T, sch *jsonschema.Schema, data []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err, "%s", data)
	require.NoError(t, sch.Validate(inst), "%s", data)
}
