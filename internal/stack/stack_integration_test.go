//go:build integration

package stack

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/internal/worker"
	"github.com/stakeflow/stakeflow/sandbox/solanart"
)

// TestStackStartsWhatTheTestsAndTheDemoUse starts the real stack and checks what every test and
// the demo rely on: the namespace holds the search attributes, the worker becomes ready (its RPC
// proven to be the runtime's network), its configuration trusts the runtime's genesis and the
// runtime's validators, stakers are funded with keys only their owner can read, and Close stops
// the worker.
func TestStackStartsWhatTheTestsAndTheDemoUse(t *testing.T) {
	cliPath := os.Getenv("TEMPORAL_CLI")
	require.NotEmpty(t, cliPath, "TEMPORAL_CLI is not set: run through make")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st, err := Start(ctx, Options{
		TemporalCLI: cliPath, Dir: t.TempDir(),
		Runtime: solanart.Options{SlotDuration: 100 * time.Millisecond},
		Stakers: 2, StakerLamports: 5_000_000_000,
	})
	require.NoError(t, err)
	closed := false
	defer func() {
		if !closed {
			st.Close()
		}
	}()

	require.NoError(t, worker.CheckNamespace(ctx, st.Client, "default"), "every search attribute is registered")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		resp, err := http.Get(st.HealthURL() + "/readyz")
		if !assert.NoError(c, err) {
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		assert.Equal(c, http.StatusOK, resp.StatusCode, "%s", body)
	}, time.Minute, 100*time.Millisecond)

	cfg := st.WorkerConfig()
	require.NoError(t, cfg.Validate())
	genesis := st.Sandbox.Runtime().GenesisHash().String()
	require.Equal(t, genesis, cfg.SolanaGenesis["testnet"])
	require.Equal(t, genesis, cfg.SolanaGenesis["mainnet-beta"])
	var votes []string
	for _, v := range st.Sandbox.Runtime().VoteAccounts() {
		votes = append(votes, v.String())
	}
	require.ElementsMatch(t, votes, []string(cfg.AllowedVoteAccounts))

	require.Len(t, st.Stakers, 2)
	for _, pk := range st.Stakers {
		fi, err := os.Stat(filepath.Join(st.KeyDir, pk.String()+".json"))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the worker refuses key files others can read")
		bal, err := st.Sandbox.Runtime().RPC().GetBalance(ctx, pk, "confirmed")
		require.NoError(t, err)
		require.Equal(t, uint64(5_000_000_000), bal.Value)
	}
	fi, err := os.Stat(st.TokenFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	st.Close()
	closed = true
	_, err = http.Get(st.HealthURL() + "/readyz")
	require.Error(t, err, "the worker's health endpoint is gone after Close")
}
