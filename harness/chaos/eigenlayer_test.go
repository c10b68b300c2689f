package chaos

import (
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/stakeflow/stakeflow/workflows"
	wfeigenlayer "github.com/stakeflow/stakeflow/workflows/eigenlayer"
)

// TestCheckCheckpoints: a checkpoint that completed once, crediting one reward per validator and
// using the owner's nonce for exactly its transactions, passes; each departure is a violation.
func TestCheckCheckpoints(t *testing.T) {
	good := func() CheckpointOutcome {
		return CheckpointOutcome{ID: "c1", Owner: "0xo", Pod: "0xp", Validators: 2, State: StateCompleted,
			Result:  &wfeigenlayer.Result{CheckpointTimestamp: 100, Transactions: make([]workflows.TxRecord, 2)},
			Started: 1, Last: 100, SharesBefore: big.NewInt(5), SharesAfter: big.NewInt(5 + 2*7*1_000_000_000),
			NonceBefore: 3, NonceAfter: 5}
	}
	assert.Empty(t, CheckCheckpoints([]CheckpointOutcome{good()}, 7))
	for name, c := range map[string]struct {
		mutate func(*CheckpointOutcome)
		want   string
	}{
		"not completed":     {func(o *CheckpointOutcome) { o.State, o.Result = StateFailed, nil }, "did not complete"},
		"started twice":     {func(o *CheckpointOutcome) { o.Started = 2 }, "2 checkpoints started"},
		"still active":      {func(o *CheckpointOutcome) { o.Active = 100 }, "active"},
		"credited twice":    {func(o *CheckpointOutcome) { o.SharesAfter = big.NewInt(5 + 4*7*1_000_000_000) }, "credited once"},
		"stray transaction": {func(o *CheckpointOutcome) { o.NonceAfter = 6 }, "sent 3 transactions"},
	} {
		o := good()
		c.mutate(&o)
		vs := CheckCheckpoints([]CheckpointOutcome{o}, 7)
		if assert.Len(t, vs, 1, name) {
			assert.True(t, strings.Contains(vs[0].What, c.want), "%s: %s", name, vs[0].What)
		}
	}
}
