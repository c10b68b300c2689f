//go:build integration

package stack

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/workflows"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// TestEncryptedOperationIsFoundByItsTagsAlone runs a stake on a stack whose worker and starter
// encrypt payloads: the starter finds it by staker, stake account and transaction ID, while the
// search attributes the server holds (read raw, by a client without the keyset) name neither the
// staker, the stake account, the transaction nor the amount, only their tags, computed here with
// crypto/hmac under the keyset's search key. A refused stake's failure is sealed on the server and
// shown as raised by `starter list` with the keyset.
func TestEncryptedOperationIsFoundByItsTagsAlone(t *testing.T) {
	cliPath := os.Getenv("TEMPORAL_CLI")
	require.NotEmpty(t, cliPath, "TEMPORAL_CLI is not set: run through make")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	searchKey := bytes.Repeat([]byte{0x6b}, codec.SearchKeySize)
	tagOf := func(v string) string {
		m := hmac.New(sha256.New, searchKey)
		m.Write([]byte(v))
		return "h:" + hex.EncodeToString(m.Sum(nil))[:32]
	}
	dir := t.TempDir()
	ks, err := codec.NewKeyFile("k1")
	require.NoError(t, err)
	ks.SearchKey = base64.StdEncoding.EncodeToString(searchKey)
	raw, err := json.Marshal(ks)
	require.NoError(t, err)
	keyset := filepath.Join(dir, "keyset.json")
	require.NoError(t, os.WriteFile(keyset, raw, 0o600))

	st, err := Start(ctx, Options{
		TemporalCLI: cliPath, Dir: filepath.Join(dir, "stack"),
		Runtime: solanart.Options{SlotDuration: 100 * time.Millisecond},
		Stakers: 1, StakerLamports: 5_000_000_000,
		PayloadKeyset: keyset,
	})
	require.NoError(t, err)
	defer st.Close()

	run := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		err := starter.Run(ctx, append(args, "--temporal-address", st.TemporalAddress(), "--payload-keyset", keyset, "--json"), &out, nil)
		require.NoError(t, err, out.String())
		return out.String()
	}
	staker := st.Stakers[0].String()
	id := "stake-encrypted-visibility"
	var res wfsolana.Result
	require.NoError(t, json.Unmarshal([]byte(run("stake", "--network", "testnet", "--staker", staker, "--lamports", "1500000000", "--id", id, "--wait")), &res))
	require.NotEmpty(t, res.StakeAccount)
	require.NotEmpty(t, res.Transactions)
	sig := res.Transactions[len(res.Transactions)-1].TxID

	// The starter finds it by staker, by stake account and by transaction, through the tags.
	ids := func(out string) []string {
		var listed []struct {
			OperationID string `json:"operationId"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &listed), out)
		var got []string
		for _, l := range listed {
			got = append(got, l.OperationID)
		}
		return got
	}
	// Visibility is eventually consistent: the last upsert shows after the workflow's end.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var out bytes.Buffer
		err := starter.Run(ctx, []string{"list", "--tx", sig, "--temporal-address", st.TemporalAddress(), "--payload-keyset", keyset, "--json"}, &out, nil)
		if assert.NoError(c, err) {
			assert.Contains(c, out.String(), id)
		}
	}, 30*time.Second, 200*time.Millisecond)
	require.Equal(t, []string{id}, ids(run("list", "--staker", staker)))
	require.Equal(t, []string{id}, ids(run("list", "--account", res.StakeAccount)))
	require.Equal(t, []string{id}, ids(run("list", "--tx", sig)))

	// What the server holds, read by a client without the keyset.
	plain, err := client.Dial(client.Options{HostPort: st.TemporalAddress()})
	require.NoError(t, err)
	defer plain.Close()
	resp, err := plain.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowId = '" + id + "'"})
	require.NoError(t, err)
	require.Len(t, resp.GetExecutions(), 1)
	fields := resp.GetExecutions()[0].GetSearchAttributes().GetIndexedFields()
	attr := func(name string) any {
		p, ok := fields[name]
		require.True(t, ok, "%s is set", name)
		var v any
		require.NoError(t, json.Unmarshal(p.GetData(), &v))
		return v
	}
	assert.Equal(t, tagOf(staker), attr(workflows.SAStaker.GetName()))
	assert.Equal(t, tagOf(res.StakeAccount), attr(workflows.SAStakeAccount.GetName()))
	var tags []any
	for _, tx := range res.Transactions {
		tags = append(tags, tagOf(tx.TxID))
	}
	assert.Equal(t, tags, attr(workflows.SASignatures.GetName()))
	assert.Equal(t, "stake", attr(workflows.SAOperation.GetName()))
	assert.Equal(t, workflows.StepDone, attr(workflows.SAStep.GetName()))
	assert.NotContains(t, fields, workflows.SAAmount.GetName(), "no amount")
	for name, p := range fields {
		for _, clear := range []string{staker, res.StakeAccount, sig, "1500000000"} {
			assert.NotContains(t, string(p.GetData()), clear, "%s holds %s in clear", name, clear)
		}
	}

	// A refused stake: its failure names the staker, so the server holds it sealed, and the
	// starter, with the keyset, shows it as raised.
	refused := "stake-encrypted-refused"
	err = starter.Run(ctx, []string{"stake", "--network", "testnet", "--staker", staker, "--sol", "100", "--id", refused, "--wait",
		"--temporal-address", st.TemporalAddress(), "--payload-keyset", keyset}, io.Discard, nil)
	require.Error(t, err, "a stake of more than the staker holds is refused")
	it := plain.GetWorkflowHistory(ctx, refused, "", false, enums.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	require.True(t, it.HasNext())
	closeEvent, err := it.Next()
	require.NoError(t, err)
	failure := closeEvent.GetWorkflowExecutionFailedEventAttributes().GetFailure()
	require.NotNil(t, failure, "the refused stake failed")
	for f := failure; f != nil; f = f.GetCause() {
		assert.Equal(t, "Encoded failure", f.GetMessage())
		assert.NotContains(t, f.String(), staker)
	}
	var listed []struct {
		OperationID string `json:"operationId"`
		Reason      string `json:"reason"`
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var out bytes.Buffer
		err := starter.Run(ctx, []string{"list", "--staker", staker, "--temporal-address", st.TemporalAddress(), "--payload-keyset", keyset, "--json"}, &out, nil)
		if assert.NoError(c, err) && assert.NoError(c, json.Unmarshal(out.Bytes(), &listed)) {
			assert.Len(c, listed, 2)
		}
	}, 30*time.Second, 200*time.Millisecond)
	require.Equal(t, refused, listed[0].OperationID, "newest first")
	assert.Contains(t, listed[0].Reason, "insufficient funds")

	// Without the keyset the address finds nothing: it is nowhere in the server's visibility.
	var out bytes.Buffer
	require.NoError(t, starter.Run(ctx, []string{"list", "--staker", staker, "--temporal-address", st.TemporalAddress(), "--json"}, &out, nil))
	assert.Equal(t, "[]", strings.TrimSpace(out.String()))
}
