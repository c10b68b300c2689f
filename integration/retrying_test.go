//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/sandbox"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// TestRetryingActivityReadsInStatus: while the service answers 500 to every build, `starter status`
// says which activity is retried, its attempt, its last failure in one line and when the next
// attempt comes, as --json does; once the service heals, the same operation completes.
func TestRetryingActivityReadsInStatus(t *testing.T) {
	staker := st.Stakers[16]
	require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{
		Endpoints: map[string]sandbox.EndpointFaults{sandbox.EndpointStake: {Next500: 1000}}}))
	healed := false
	t.Cleanup(func() {
		if !healed {
			require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{}))
		}
	})
	id := operationID(t, "stake")
	out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", "2", "--id", id)
	require.NoError(t, err, out)

	type retry struct {
		Activity    string     `json:"activity"`
		Attempt     int        `json:"attempt"`
		LastFailure string     `json:"lastFailure"`
		NextAttempt *time.Time `json:"nextAttempt"`
		Running     bool       `json:"running"`
	}
	var seen retry
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		out, err := starterRun(t, "status", "--id", id, "--json")
		require.NoError(c, err, out)
		var v struct {
			Retrying []retry `json:"retrying"`
		}
		require.NoError(c, json.Unmarshal([]byte(out), &v), out)
		require.Len(c, v.Retrying, 1, out)
		seen = v.Retrying[0]
		assert.Equal(c, "Build", seen.Activity)
		assert.GreaterOrEqual(c, seen.Attempt, 3)
		assert.Contains(c, seen.LastFailure, "500")
		assert.NotContains(c, seen.LastFailure, "\n")
		assert.True(c, seen.Running || seen.NextAttempt != nil, "says when the next attempt comes")
	}, 2*time.Minute, 200*time.Millisecond)

	out, err = starterRun(t, "status", "--id", id)
	require.NoError(t, err, out)
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "retrying:") {
			line = l
		}
	}
	require.NotEmpty(t, line, out)
	assert.Contains(t, line, "Build attempt ")
	assert.Contains(t, line, "; last failure: ")
	assert.Contains(t, line, "500")

	require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{}))
	healed = true
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var res wfsolana.Result
	require.NoError(t, st.Client.GetWorkflow(ctx, id, "").Get(ctx, &res))
	require.Len(t, res.Transactions, 1)
	out, err = starterRun(t, "status", "--id", id)
	require.NoError(t, err, out)
	assert.NotContains(t, out, "retrying:", "nothing retried once it completed")
}
