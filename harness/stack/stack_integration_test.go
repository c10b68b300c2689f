//go:build integration

package stack

import (
	"context"
	"github.com/stakeflow/stakeflow/internal/module"
	solanamod "github.com/stakeflow/stakeflow/modules/solana"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/internal/worker"
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
	// The worker's default store is a file among the stack's, not in the working directory.
	wcfg := st.WorkerConfig()
	require.Equal(t, "sqlite:"+filepath.Join(st.opts.Dir, "data", "stakeflow.db"), wcfg.StoreDSN())
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		resp, err := http.Get(st.HealthURL() + "/readyz")
		if !assert.NoError(c, err) {
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		assert.Equal(c, http.StatusOK, resp.StatusCode, "%s", body)
	}, time.Minute, 100*time.Millisecond)
	// The worker opens its store before it reports ready (it starts in the background).
	require.FileExists(t, filepath.Join(st.opts.Dir, "data", "stakeflow.db"), "the worker opened it")

	// The worker restarted serves on the same health address: the stack holds the socket.
	healthURL := st.HealthURL()
	require.NoError(t, st.StopWorker())
	require.NoError(t, st.StartWorker(ctx))
	require.Equal(t, healthURL, st.HealthURL())
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		resp, err := http.Get(healthURL + "/readyz")
		if !assert.NoError(c, err) {
			return
		}
		defer resp.Body.Close()
		assert.Equal(c, http.StatusOK, resp.StatusCode)
	}, time.Minute, 100*time.Millisecond)

	cfg := st.WorkerConfig()
	require.NoError(t, cfg.Validate())
	genesis := st.Sandbox.Runtime().GenesisHash().String()
	sol, ok := module.Find[*solanamod.Module](cfg.Modules)
	require.True(t, ok)
	require.Equal(t, genesis, sol.Genesis["testnet"])
	require.Equal(t, genesis, sol.Genesis["mainnet-beta"])
	var votes []string
	for _, v := range st.Sandbox.Runtime().VoteAccounts() {
		votes = append(votes, v.String())
	}
	require.ElementsMatch(t, votes, []string(sol.AllowedVoteAccounts))

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

// TestTemporalStartPicksAgainWhenAPortIsTaken: a port the stack picked for the dev server and that
// another process took before the server bound it is picked again, and the server runs on the
// new one; a port the caller fixed that is taken fails the start at once, naming the refusal.
func TestTemporalStartPicksAgainWhenAPortIsTaken(t *testing.T) {
	cliPath := os.Getenv("TEMPORAL_CLI")
	require.NotEmpty(t, cliPath, "TEMPORAL_CLI is not set: run through make")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port

	picks := 0
	s := &Stack{opts: Options{TemporalCLI: cliPath, Dir: t.TempDir(), Logger: zap.NewNop()}, pick: func() (int, error) {
		picks++
		if picks == 1 {
			return takenPort, nil // taken between the pick and the server's bind
		}
		return pickPort()
	}}
	require.NoError(t, s.startTemporal(ctx))
	defer s.Close()
	require.Equal(t, 2, picks)
	require.NotEqual(t, "127.0.0.1:"+strconv.Itoa(takenPort), s.TemporalAddress())
	_, err = s.Client.CheckHealth(ctx, &client.CheckHealthRequest{})
	require.NoError(t, err)

	fixed := &Stack{opts: Options{TemporalCLI: cliPath, Dir: t.TempDir(), Logger: zap.NewNop(), TemporalPort: takenPort}, pick: pickPort}
	began := time.Now()
	err = fixed.startTemporal(ctx)
	require.ErrorIs(t, err, ErrPortInUse)
	require.ErrorContains(t, err, "can't set frontend port "+strconv.Itoa(takenPort))
	require.Less(t, time.Since(began), 30*time.Second, "the refusal ends the wait for the server")
}
