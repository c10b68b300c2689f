//go:build integration

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/stack"
)

// lockedBuffer is a bytes.Buffer safe for the command and the test to use at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// stackArgs are the flags of demo and up for a stack on ports free now in its own directory. devstack
// takes fixed ports, as a developer gives them, and the Temporal CLI cannot bind port 0: another
// process may take a picked port before the stack binds it (portTaken), and the caller then starts
// again on new ports.
func stackArgs(t *testing.T, dir string) (args []string, temporalPort, uiPort int) {
	t.Helper()
	if os.Getenv("TEMPORAL_CLI") == "" {
		t.Fatal("TEMPORAL_CLI is not set; run with TEMPORAL_CLI=$(scripts/tools.sh temporal)")
	}
	temporalPort, uiPort = pickPort(t), pickPort(t)
	return []string{"--stack-dir", dir, "--temporal-port", strconv.Itoa(temporalPort), "--ui-port", strconv.Itoa(uiPort),
		"--stakers", "2"}, temporalPort, uiPort
}

// portTaken reports whether err is devstack refusing a port stackArgs picked, or the Temporal
// dev server refusing it, because another process took it after it was picked.
func portTaken(err error) bool {
	var inUse *portInUseError
	return errors.As(err, &inUse) || errors.Is(err, stack.ErrPortInUse)
}

// startAttempts bounds the starts on new ports after a picked port was taken.
const startAttempts = 5

func TestUpRunsUntilCancelledAndRefusesABusyPort(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		args                 []string
		temporalPort, uiPort int
		out                  *lockedBuffer
		done                 chan error
	)
	for attempt := 1; ; attempt++ {
		args, temporalPort, uiPort = stackArgs(t, dir)
		out, done = &lockedBuffer{}, make(chan error, 1)
		go func() { done <- run(ctx, append([]string{"up"}, args...), out, io.Discard) }()
		require.Eventually(t, func() bool {
			select {
			case err := <-done:
				done <- err
				return true
			default:
			}
			return bytes.Contains([]byte(out.String()), []byte("Running; Ctrl-C stops everything."))
		}, 10*time.Minute, 100*time.Millisecond)
		select {
		case err := <-done:
			if portTaken(err) && attempt < startAttempts {
				t.Logf("a picked port was taken; starting again on new ports: %v", err)
				continue
			}
			t.Fatalf("up ended early: %v\n%s", err, out.String())
		default:
		}
		break
	}
	text := out.String()
	ui := "http://127.0.0.1:" + strconv.Itoa(uiPort)
	assert.Contains(t, text, "Temporal:   127.0.0.1:"+strconv.Itoa(temporalPort))
	assert.Contains(t, text, "Web UI:     "+ui)
	assert.Contains(t, text, "STAKEFLOW_TEMPORAL_ADDRESS=127.0.0.1:"+strconv.Itoa(temporalPort)+" go run ./cmd/starter stake --network testnet --staker ")
	assert.Contains(t, text, "go run ./harness/cmd/devstack warp --epochs 1 --rpc http://127.0.0.1:")

	resp, err := http.Get(ui + "/namespaces/default/workflows")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// A second stack on the same ports is refused with the port named.
	err = run(ctx, append([]string{"demo"}, append(args, "--stack-dir", t.TempDir())...), io.Discard, io.Discard)
	var inUse *portInUseError
	require.ErrorAs(t, err, &inUse)
	require.Equal(t, "temporal-port", inUse.Flag)
	require.ErrorContains(t, err, "127.0.0.1:"+strconv.Itoa(temporalPort))

	// warp finds the running stack's runtime through the stack directory.
	var warpOut bytes.Buffer
	require.NoError(t, run(ctx, []string{"warp", "--stack-dir", dir}, &warpOut, io.Discard))
	require.Contains(t, warpOut.String(), "to epoch")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("up did not stop within a minute of the cancel")
	}
	require.Contains(t, out.String(), "stopped")
	require.NoFileExists(t, filepath.Join(dir, rpcURLFile))
	for _, port := range []int{temporalPort, uiPort} {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		require.NoError(t, err, "port %d still held after stop", port)
		_ = l.Close()
	}
}

func TestDemoStakesUnstakesAndWithdraws(t *testing.T) {
	dir := t.TempDir()
	// Twice on one directory: the second run reopens the persisted Temporal database.
	for i := 0; i < 2; i++ {
		var out *lockedBuffer
		var err error
		for attempt := 1; ; attempt++ {
			args, _, _ := stackArgs(t, dir)
			out = &lockedBuffer{}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			err = run(ctx, append([]string{"demo"}, args...), out, io.Discard)
			cancel()
			if !portTaken(err) || attempt == startAttempts {
				break
			}
			t.Logf("a picked port was taken; starting again on new ports: %v", err)
		}
		text := out.String()
		require.NoError(t, err, text)
		for _, want := range []string{
			"chain clock: slot 100ms, 256 slots per epoch",
			"done: stake 2 SOL",
			"waiting-deactivation",
			"(devstack) warped the chain from epoch",
			"withdraw tx",
			"demo finished: 2 SOL staked, unstaked and withdrawn",
			"/namespaces/default/workflows/demo-unstake-",
			"waiting-withdrawal-delay",
			"(devstack) advanced the StakeManager",
			"demo finished: 100 POL delegated, 40 POL unstaked and claimed back to",
			"/namespaces/default/workflows/demo-polygon-unstake-",
			"done: celestia delegate 5 TIA",
			"the ledger holds 5000000 utia delegated by",
			"stopped",
		} {
			assert.Contains(t, text, want, "run %d", i+1)
		}
	}
	require.FileExists(t, filepath.Join(dir, "temporal.db"))
}
