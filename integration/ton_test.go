//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	actton "github.com/stakeflow/stakeflow/activities/ton"
	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/workflows"
	wfton "github.com/stakeflow/stakeflow/workflows/ton"
)

// TestTONWatch follows TON transactions through the admin tool against the sandbox's endpoint 9.
func TestTONWatch(t *testing.T) {
	for name, run := range map[string]func(*testing.T){
		"FindsTransactionAppearingLater": testTONWatchFindsLater,
		"NeverAppearsFailsNamingHash":    testTONWatchNeverAppears,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			run(t)
		})
	}
}

// testTONWatchFindsLater: a watch started by the base64 hash of a transaction the service does
// not know yet; once the watch is confirming, the sandbox records the transaction, shown two
// seconds later: the watch reports it as recorded, under its hex hash.
func testTONWatchFindsLater(t *testing.T) {
	raw := bytes.Repeat([]byte{0xfb, 0xff}, 16)
	id := operationID(t, "ton-watch")
	out, err := starterRun(t, "ton", "watch", "--network", "testnet", "--hash", base64.URLEncoding.EncodeToString(raw), "--id", id)
	require.NoError(t, err, out)
	waitStep(t, id, workflows.StepConfirming)
	rec, err := st.Sandbox.AddTONTransaction(sandbox.TONTransaction{Network: "testnet", Hash: hex.EncodeToString(raw),
		LT: "48000000000007", OutMessagesCount: 1, Delay: sandbox.Duration(2 * time.Second)})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var res wfton.WatchResult
	require.NoError(t, st.Client.GetWorkflow(ctx, id, "").Get(ctx, &res))
	tx := res.Transaction
	assert.Equal(t, hex.EncodeToString(raw), tx.Hash)
	assert.Equal(t, rec.Address, tx.Account)
	assert.Equal(t, "48000000000007", tx.Lt)
	assert.Equal(t, rec.PrevTransactionLT, tx.PrevTransactionLt)
	assert.Equal(t, 1, tx.OutMessagesCount)
	assert.Equal(t, "active", tx.OldStatus)
	assert.Equal(t, "active", tx.EndStatus)
	assert.Equal(t, actton.OutcomeFinal, tx.Outcome)
	assert.Greater(t, tx.Polls, 1, "the first reads found nothing: it appeared after the delay")
	visible, err := time.Parse(time.RFC3339Nano, rec.VisibleAt)
	require.NoError(t, err)
	assert.False(t, time.Now().Before(visible))
	status := queryStatus(t, id)
	assert.Equal(t, workflows.StepDone, status.Step)
	assert.Equal(t, rec.Address, status.Account)
}

// testTONWatchNeverAppears: a hash the service never finds fails the watch at its deadline,
// naming the hash, with TransactionNotFound.
func testTONWatchNeverAppears(t *testing.T) {
	hash := hex.EncodeToString(bytes.Repeat([]byte{0x7e}, 32))
	id := operationID(t, "ton-watch")
	recordAs(id, wfton.WatchWorkflowType+"-not-found")
	start := time.Now()
	out, err := starterRun(t, "ton", "watch", "--network", "mainnet", "--hash", hash, "--deadline", "4s", "--id", id, "--wait", "--json")
	require.Error(t, err, out)
	assert.Contains(t, err.Error(), hash)
	assert.GreaterOrEqual(t, time.Since(start), 2*time.Second, "it looked until the deadline (a read no later than 1s before it)")
	status := queryStatus(t, id)
	assert.Equal(t, workflows.StepFailed, status.Step)
	assert.Contains(t, status.Reason, hash)
	assert.Contains(t, status.Error, actton.ErrTransactionNotFound)
}
