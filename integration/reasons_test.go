//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"

	"github.com/stakeflow/stakeflow/codec"
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

// failureReasonOf is the message of a workflow's failure, read from its close event and opened
// with the suite's keyset (the worker seals a failure's message in its encoded attributes).
func failureReasonOf(ctx context.Context, t *testing.T, id string) string {
	t.Helper()
	it := st.Client.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		if a := ev.GetWorkflowExecutionFailedEventAttributes(); a != nil {
			f := a.GetFailure()
			require.NotNil(t, f.GetEncodedAttributes(), "the failure's message is sealed")
			converter.DecodeCommonFailureAttributes(codec.DataConverter(codec.New(keyset)), f)
			return f.GetMessage()
		}
	}
	t.Fatalf("%s has no failure event", id)
	return ""
}

// TestTooLargeStakeRefusedBeforeSigning stakes all the staker holds: the stake account's rent and
// the fee cannot be paid, so the balance pre-flight, read from the worker's RPC, refuses it before
// an approval is asked or anything is built or signed, in one line that names what is held and what
// is needed; the runtime's ledger shows nothing from the staker.
func TestTooLargeStakeRefusedBeforeSigning(t *testing.T) {
	staker := st.Stakers[24]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	balance, err := chain.Balance(ctx, staker.String())
	require.NoError(t, err)
	rent, err := st.Sandbox.Runtime().RPC().GetMinimumBalanceForRentExemption(ctx, 200, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	id := operationID(t, "stake")
	out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(),
		"--lamports", strconv.FormatUint(balance, 10), "--id", id, "--requested-by", "alice", "--wait")
	require.Error(t, err, out)
	want := fmt.Sprintf("insufficient funds: staker %s holds %s, the stake needs %s plus %s rent for the stake account plus %s in fees; nothing was signed",
		staker, sols(balance), sols(balance), sols(rent), sols(fee))
	refusedBeforeAnything(ctx, t, id, staker, balance, out+err.Error(), want)
}

// refusedBeforeAnything checks a stake operation id refused before an approval was asked or
// anything built: the starter printed want (in printed), the Web UI's failure and the status
// query's reason are want, nothing was built, asked or sent, and the staker still holds balance.
func refusedBeforeAnything(ctx context.Context, t *testing.T, id string, staker solana.PublicKey, balance uint64, printed, want string) {
	t.Helper()
	require.Contains(t, printed, want, "the starter says why in one line")
	require.Equal(t, want, failureReasonOf(ctx, t, id), "the failure the Web UI shows")

	status, err := starterRun(t, "status", "--id", id, "--json")
	require.NoError(t, err, status)
	var v struct {
		Status workflows.Status `json:"status"`
	}
	require.NoError(t, json.Unmarshal([]byte(status), &v), status)
	require.Equal(t, want, v.Status.Reason)
	require.Empty(t, v.Status.Attempts, "nothing built")
	require.Empty(t, v.Status.Approval.Decisions, "no approval asked")
	require.Empty(t, landedBy(t, staker), "nothing sent")
	after, err := chain.Balance(ctx, staker.String())
	require.NoError(t, err)
	require.Equal(t, balance, after)
}

// sols writes lamports as SOL the way people read them, independently of the product's formatter.
func sols(lamports uint64) string {
	s := new(big.Rat).SetFrac(new(big.Int).SetUint64(lamports), big.NewInt(1_000_000_000)).FloatString(9)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + " SOL"
}
