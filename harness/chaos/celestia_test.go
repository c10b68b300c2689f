package chaos

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/stakeflow/stakeflow/harness/sandbox/celestiachain"
	"github.com/stakeflow/stakeflow/workflows"
	wfcelestia "github.com/stakeflow/stakeflow/workflows/celestia"
)

func TestCheckCelestia(t *testing.T) {
	done := func(id, del, val, tx string, amount int64) CelestiaOutcome {
		return CelestiaOutcome{ID: id, Delegator: del, Validator: val, Amount: amount, State: StateCompleted,
			Result: &wfcelestia.Result{Transactions: []workflows.TxRecord{{TxID: tx}}}}
	}
	outcomes := []CelestiaOutcome{done("a", "d1", "v1", "T1", 10), done("b", "d1", "v1", "T2", 5), done("c", "d2", "v2", "T3", 7)}
	snap := celestiachain.Snapshot{Delegations: []celestiachain.Delegation{{Delegator: "d1", Validator: "v1", Amount: "15"}, {Delegator: "d2", Validator: "v2", Amount: "7"}}}
	signers := map[string]string{"T1": "d1", "T2": "d1", "T3": "d2"}
	assert.Empty(t, CheckCelestia(outcomes, snap, signers))

	// A delegate landed twice: one more transaction and twice the amount.
	twice := celestiachain.Snapshot{Delegations: []celestiachain.Delegation{{Delegator: "d1", Validator: "v1", Amount: "25"}, {Delegator: "d2", Validator: "v2", Amount: "7"}}}
	extra := map[string]string{"T1": "d1", "T2": "d1", "T3": "d2", "T1b": "d1"}
	assert.Len(t, CheckCelestia(outcomes, twice, extra), 2)

	// A delegate that did not complete, and one whose transaction is not on the ledger.
	failed := append([]CelestiaOutcome{}, outcomes...)
	failed[2] = CelestiaOutcome{ID: "c", State: StateFailed, FailedType: "X"}
	vs := CheckCelestia(failed, snap, map[string]string{"T1": "d1", "T2": "d1"})
	assert.NotEmpty(t, vs)
	assert.Equal(t, "c", vs[0].Op)
}
