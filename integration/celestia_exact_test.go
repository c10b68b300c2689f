//go:build integration

package integration

import (
	"context"
	"math/big"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/workflows"
)

// delegated is what delegator has delegated to validator in the ledger, in utia.
func delegated(s celestiaState, validator string) *big.Int {
	v, ok := new(big.Int).SetString(s.delegations[validator], 10)
	if !ok {
		return new(big.Int)
	}
	return v
}

// TestCelestiaLaggingIndex: the REST transaction index lags by several polls while the account
// already shows the sequence used. The delegate completes (the block at the broadcast height shows
// its transaction), no conflict; one delegation.
func TestCelestiaLaggingIndex(t *testing.T) {
	v1 := sandbox.CelestiaValidators[0]
	d := st.Celestia.Delegators[7]
	const lag = 6
	st.Celestia.Ledger.SetIndexLag(lag)
	t.Cleanup(func() { st.Celestia.Ledger.SetIndexLag(0) })
	before := celestiaOf(t, d)
	r := celestiaRun(t, "delegate", d, "--validator", v1, "--utia", "300000")
	require.Len(t, r.Transactions, 1)
	after := celestiaOf(t, d)
	assert.Equal(t, append(append([]string{}, before.txs...), r.Transactions[0].TxID), after.txs, "one transaction")
	assert.Equal(t, before.balance-300_000-celestiaFee, after.balance)
	assert.Equal(t, new(big.Int).Add(delegated(before, v1), big.NewInt(300_000)), delegated(after, v1))
	assert.Equal(t, lag, st.Celestia.Ledger.IndexMisses(r.Transactions[0].TxID), "the index was polled through its lag")
}

// TestCelestiaServiceRefusesAfterForwarding: endpoint 3 broadcasts the delegation and answers 400
// (a refusal that names no sequence). The worker sends the same bytes through its own REST
// endpoint, which knows them: the chain decides; the operation completes, one delegation.
func TestCelestiaServiceRefusesAfterForwarding(t *testing.T) {
	v1 := sandbox.CelestiaValidators[0]
	d := st.Celestia.Delegators[8]
	require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{CelestiaSendForwardThenRefuse: sandbox.LostResponse{Next: 1}}))
	t.Cleanup(func() { require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{})) })
	before := celestiaOf(t, d)
	r := celestiaRun(t, "delegate", d, "--validator", v1, "--utia", "400000")
	require.Len(t, r.Transactions, 1)
	after := celestiaOf(t, d)
	assert.Equal(t, append(append([]string{}, before.txs...), r.Transactions[0].TxID), after.txs, "one transaction")
	assert.Equal(t, new(big.Int).Add(delegated(before, v1), big.NewInt(400_000)), delegated(after, v1), "one delegation")
	assert.Equal(t, before.balance-400_000-celestiaFee, after.balance)
}

var timeoutHeight = regexp.MustCompile(`timeout height (\d+)`)

// TestCelestiaCancelAfterBroadcast: the service says it sent the delegation but never did; the
// operation is cancelled while it confirms. It sends nothing more under the sequence and ends
// cancelled only once the chain is past the transaction's timeout height, nothing delegated.
func TestCelestiaCancelAfterBroadcast(t *testing.T) {
	v1 := sandbox.CelestiaValidators[0]
	d := st.Celestia.Delegators[9]
	require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{CelestiaSendDropped: sandbox.LostResponse{Next: 1000}}))
	t.Cleanup(func() { require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{})) })
	before := celestiaOf(t, d)
	id := operationID(t, "celestia-delegate")
	out, err := starterRun(t, "celestia", "delegate", "--network", stack.CelestiaNetwork, "--delegator", d,
		"--validator", v1, "--utia", "500000", "--id", id)
	require.NoError(t, err, out)
	waitStep(t, id, workflows.StepConfirming)
	out, err = starterRun(t, "cancel", "--id", id)
	require.NoError(t, err, out)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = st.Client.GetWorkflow(ctx, id, "").Get(ctx, nil)
	require.Error(t, err)
	require.Contains(t, err.Error(), "canceled")
	ended := st.Celestia.Ledger.Height()

	status := queryStatus(t, id)
	require.Equal(t, workflows.StepCancelled, status.Step)
	require.NotEmpty(t, status.Attempts)
	m := timeoutHeight.FindStringSubmatch(status.Attempts[len(status.Attempts)-1].Expiry)
	require.NotNil(t, m, "the attempt names its timeout height: %q", status.Attempts[len(status.Attempts)-1].Expiry)
	timeout, err := strconv.ParseInt(m[1], 10, 64)
	require.NoError(t, err)
	assert.Greater(t, ended, timeout, "ended only once the chain passed the timeout height")
	after := celestiaOf(t, d)
	assert.Equal(t, before.txs, after.txs, "nothing landed")
	assert.Equal(t, delegated(before, v1), delegated(after, v1))
}
