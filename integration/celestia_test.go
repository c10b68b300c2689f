//go:build integration

package integration

import (
	"encoding/json"
	"math/big"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/workflows"
	wfcelestia "github.com/stakeflow/stakeflow/workflows/celestia"
)

// celestiaUnbonding is the unbonding time of the stack's Celestia ledger.
const celestiaUnbonding = 8 * time.Second

// celestiaFee is what each transaction pays: 200,000 gas at 0.004 utia, celestia-app's default
// node minimum gas price (pkg/appconsts/initial_consts.go DefaultMinGasPrice, commit 74614c2e),
// the worker's default and what the stand-in node enforces.
const celestiaFee = 800

func decodeCelestia(t *testing.T, out string) wfcelestia.Result {
	t.Helper()
	var res wfcelestia.Result
	require.NoError(t, json.Unmarshal([]byte(out), &res), "starter output: %s", out)
	return res
}

// celestiaRun runs a Celestia command through the admin tool and waits for its end.
func celestiaRun(t *testing.T, verb, delegator string, args ...string) wfcelestia.Result {
	t.Helper()
	id := operationID(t, "celestia-"+verb)
	out, err := starterRun(t, append([]string{"celestia", verb, "--network", stack.CelestiaNetwork, "--delegator", delegator,
		"--id", id, "--wait", "--json"}, args...)...)
	require.NoError(t, err, out)
	return decodeCelestia(t, out)
}

// celestiaState is what the ledger holds for one delegator.
type celestiaState struct {
	balance     int64
	delegations map[string]string
	unbonding   int
	txs         []string
}

func celestiaOf(t *testing.T, delegator string) celestiaState {
	t.Helper()
	snap := st.Celestia.Ledger.Snapshot()
	b, _ := strconv.ParseInt(snap.Balances[delegator], 10, 64)
	s := celestiaState{balance: b, delegations: map[string]string{}}
	for _, d := range snap.Delegations {
		if d.Delegator == delegator {
			s.delegations[d.Validator] = d.Amount
		}
	}
	for _, u := range snap.Unbonding {
		if u.Delegator == delegator {
			s.unbonding++
		}
	}
	for _, h := range snap.Transactions {
		if r, ok := st.Celestia.Ledger.Tx(h); ok && r.Signer == delegator {
			s.txs = append(s.txs, h)
		}
	}
	return s
}

// TestCelestia runs the Celestia operations through the admin tool against the sandbox's strict
// ledger, each delegator on its own, at once.
func TestCelestia(t *testing.T) {
	v1, v2 := sandbox.CelestiaValidators[0], sandbox.CelestiaValidators[1]
	t.Run("DelegateUndelegateWaitsTheUnbondingPeriod", func(t *testing.T) {
		t.Parallel()
		d := st.Celestia.Delegators[0]
		before := celestiaOf(t, d)
		r := celestiaRun(t, "delegate", d, "--validator", v1, "--tia", "5")
		require.Len(t, r.Transactions, 1)
		after := celestiaOf(t, d)
		assert.Equal(t, before.balance-5_000_000-celestiaFee, after.balance)
		assert.Equal(t, map[string]string{v1: "5000000"}, after.delegations)
		assert.Equal(t, []string{r.Transactions[0].TxID}, after.txs)

		started := time.Now()
		r = celestiaRun(t, "undelegate", d, "--validator", v1, "--utia", "2000000")
		assert.GreaterOrEqual(t, time.Since(started), celestiaUnbonding, "waited the unbonding period")
		assert.NotEmpty(t, r.UnbondedAt)
		after = celestiaOf(t, d)
		assert.Equal(t, before.balance-3_000_000-2*celestiaFee, after.balance, "tokens back")
		assert.Equal(t, map[string]string{v1: "3000000"}, after.delegations)
		assert.Zero(t, after.unbonding)
		assert.Len(t, after.txs, 2)
	})
	t.Run("TwoAtOnceFromOneDelegator", func(t *testing.T) {
		t.Parallel()
		d := st.Celestia.Delegators[6]
		before := celestiaOf(t, d)
		var wg sync.WaitGroup
		for _, v := range []string{v1, v2} {
			wg.Add(1)
			go func() { defer wg.Done(); celestiaRun(t, "delegate", d, "--validator", v, "--utia", "100000") }()
		}
		wg.Wait()
		after := celestiaOf(t, d)
		assert.Equal(t, map[string]string{v1: "100000", v2: "100000"}, after.delegations)
		assert.Len(t, after.txs, 2, "one after the other, on consecutive sequences")
		assert.Equal(t, before.balance-200_000-2*celestiaFee, after.balance)
		a, _ := st.Celestia.Ledger.Account(d)
		assert.Equal(t, uint64(2), a.Sequence)
	})
	t.Run("RedelegateAndWithdrawRewards", func(t *testing.T) {
		t.Parallel()
		d := st.Celestia.Delegators[1]
		before := celestiaOf(t, d)
		celestiaRun(t, "delegate", d, "--validator", v1, "--utia", "4000000")
		require.NoError(t, st.Celestia.Ledger.AddRewards(d, v1, big.NewInt(4321)))
		r := celestiaRun(t, "withdraw-rewards", d, "--validator", v1)
		assert.Equal(t, "4321", r.Amount)
		celestiaRun(t, "redelegate", d, "--validator", v1, "--to-validator", v2, "--utia", "1500000")
		after := celestiaOf(t, d)
		assert.Equal(t, before.balance-4_000_000-3*celestiaFee+4321, after.balance)
		assert.Equal(t, map[string]string{v1: "2500000", v2: "1500000"}, after.delegations)
		assert.Len(t, after.txs, 3)
	})
}

// TestCelestiaLostAnswersAndLies: the service loses the answer of a broadcast that landed, then
// answers success for one it never sent: each step sends the same bytes again and lands once.
func TestCelestiaLostAnswersAndLies(t *testing.T) {
	v1 := sandbox.CelestiaValidators[0]
	for name, faults := range map[string]sandbox.FaultConfig{
		"LostAnswer":       {CelestiaSendLostResponse: sandbox.LostResponse{Next: 1}},
		"NeverBroadcast":   {CelestiaSendDropped: sandbox.LostResponse{Next: 1}},
		"HashOfOtherBytes": {CelestiaSendWrongHash: sandbox.LostResponse{Next: 1}},
	} {
		t.Run(name, func(t *testing.T) {
			d := st.Celestia.Delegators[2]
			if name == "NeverBroadcast" {
				d = st.Celestia.Delegators[3]
			} else if name == "HashOfOtherBytes" {
				d = st.Celestia.Delegators[4]
			}
			require.NoError(t, st.Sandbox.SetFaults(faults))
			t.Cleanup(func() { require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{})) })
			before := celestiaOf(t, d)
			r := celestiaRun(t, "delegate", d, "--validator", v1, "--utia", "1000000")
			after := celestiaOf(t, d)
			assert.Equal(t, map[string]string{v1: "1000000"}, after.delegations, "one delegation")
			assert.Equal(t, []string{r.Transactions[0].TxID}, after.txs, "one transaction")
			assert.Equal(t, before.balance-1_000_000-celestiaFee, after.balance)
		})
	}
}

// TestCelestiaWorkerRestart stops the worker while a delegate waits for its transaction (sent
// through a service that never broadcast it) and starts it again: one delegation.
func TestCelestiaWorkerRestart(t *testing.T) {
	v1 := sandbox.CelestiaValidators[0]
	d := st.Celestia.Delegators[5]
	require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{CelestiaSendDropped: sandbox.LostResponse{Next: 1}}))
	t.Cleanup(func() { require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{})) })
	id := operationID(t, "celestia-delegate")
	recordAs(id, wfcelestia.DelegateWorkflowType+"-rebuilt-across-restart")
	out, err := starterRun(t, "celestia", "delegate", "--network", stack.CelestiaNetwork, "--delegator", d,
		"--validator", v1, "--utia", "700000", "--id", id)
	require.NoError(t, err, out)
	waitStep(t, id, workflows.StepConfirming)
	require.NoError(t, st.StopWorker())
	require.NoError(t, st.StartWorker(t.Context()))
	waitStep(t, id, workflows.StepDone)
	after := celestiaOf(t, d)
	assert.Equal(t, map[string]string{v1: "700000"}, after.delegations, "one delegation")
	assert.Len(t, after.txs, 1)
}
