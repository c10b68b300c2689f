//go:build integration

package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/modules/all"
	hyperliquidmod "github.com/stakeflow/stakeflow/modules/hyperliquid"
	solanamod "github.com/stakeflow/stakeflow/modules/solana"
	"github.com/stakeflow/stakeflow/workflows"
	wfhyperliquid "github.com/stakeflow/stakeflow/workflows/hyperliquid"
)

// TestHyperliquidWithdrawSurvivesTemporalRestartAndWorkerKill runs a mainnet withdrawal (a 7-day
// queue) on a Temporal dev server of its own, kept in a database file, and a cmd/worker process:
// while the operation rests in the queue the worker is killed (SIGKILL) and Temporal is stopped;
// the queue passes (warped) while both are down; Temporal starts again on its database and a new
// worker process starts. The withdrawal completes as if nothing happened: spot rises by exactly
// the amount, one request was asked, one action submitted, and the result names the withdrawal
// the history showed before the restart. It runs alone (no t.Parallel): it warps mainnet's queue.
func TestHyperliquidWithdrawSurvivesTemporalRestartAndWorkerKill(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "worker")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/stakeflow/stakeflow/cmd/worker").CombinedOutput()
	require.NoError(t, err, "building cmd/worker: %s", out)

	tmp := &devServer{cli: os.Getenv("TEMPORAL_CLI"), port: freePort(t), db: filepath.Join(dir, "temporal.db"), log: filepath.Join(dir, "temporal.log")}
	tmp.start(t)
	t.Cleanup(tmp.stop)
	c, err := client.Dial(encrypted(t, client.Options{HostPort: tmp.address(), Logger: cli.TemporalLogger(zap.NewNop())}))
	require.NoError(t, err)
	defer c.Close()
	w := &workerProcess{bin: bin, args: processWorkerArgs(tmp.address(), dir), log: filepath.Join(dir, "worker.log")}
	w.start(t)
	t.Cleanup(w.kill)

	// The hostile-request test's delegator, on another network: it asserts that delegator's
	// testnet account only, and this test reads differences only.
	delegator := hyperliquidDelegator(2)
	st.Sandbox.HyperliquidFund("mainnet", delegator, 10*hype)
	before := st.Sandbox.HyperliquidAccount("mainnet", delegator)
	requests := st.Sandbox.HyperliquidRequests(delegator)
	id := operationID(t, "hyperliquid-withdraw")
	var sout strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NoError(t, starter.Run(ctx, []string{"hyperliquid", "withdraw", "--network", "mainnet", "--delegator", delegator.Hex(),
		"--amount", "2.5", "--id", id, "--temporal-address", tmp.address()}, &sout, nil, all.StarterGroups()...), sout.String())
	waitStepOn(t, c, id, wfhyperliquid.StepWaitingWithdrawal)
	pending := st.Sandbox.HyperliquidAccount("mainnet", delegator).Pending
	require.Len(t, pending, len(before.Pending)+1)
	ours := pending[len(pending)-1]

	w.kill()
	tmp.stop()
	st.Sandbox.HyperliquidWarp("mainnet", sandbox.HyperliquidQueue("mainnet"))
	tmp.start(t)
	w.start(t)

	var res wfhyperliquid.WithdrawResult
	require.NoError(t, c.GetWorkflow(ctx, id, "").Get(ctx, &res), "worker log: %s", w.tail())
	assert.Equal(t, "250000000", res.ReachedSpot)
	assert.Equal(t, strconv.FormatUint(before.Spot, 10), res.SpotBefore)
	assert.Equal(t, strconv.FormatUint(before.Spot+25*hype/10, 10), res.SpotAfter, "spot rose by exactly the amount")
	assert.Equal(t, ours.Hash, res.Hash, "the withdrawal the history showed before the restart")
	assert.Equal(t, ours.Nonce, res.Nonce)
	assert.Equal(t, 1, res.Requests)
	after := st.Sandbox.HyperliquidAccount("mainnet", delegator)
	assert.Equal(t, before.Spot+25*hype/10, after.Spot, "the exchange's spot balance agrees")
	assert.Equal(t, before.Submitted+1, after.Submitted, "one action, submitted once")
	assert.Equal(t, requests+1, st.Sandbox.HyperliquidRequests(delegator), "one request asked of the service")
}

// processWorkerArgs are the flags of a cmd/worker process that runs what the stack's worker runs
// (st.WorkerConfig) against the Temporal at address, its store a SQLite file in dir.
func processWorkerArgs(address, dir string) []string {
	cfg := st.WorkerConfig()
	sol, _ := module.Find[*solanamod.Module](cfg.Modules)
	hl, _ := module.Find[*hyperliquidmod.Module](cfg.Modules)
	pairs := func(m cli.StringMap) string {
		var out []string
		for k, v := range m {
			out = append(out, k+"="+v)
		}
		return strings.Join(out, ",")
	}
	args := []string{
		"--temporal-address", address, "--namespace", "default",
		"--service-url", cfg.ServiceURL, "--service-token-file", cfg.ServiceTokenFile,
		"--solana-keys", strings.Join(sol.Keys, ","), "--solana-rpc", pairs(sol.RPC), "--solana-genesis", pairs(sol.Genesis),
		"--allowed-vote-accounts", strings.Join(sol.AllowedVoteAccounts, ","), "--epoch-recheck", cfg.EpochRecheck.String(),
		"--hyperliquid-api", pairs(hl.API), "--hyperliquid-recheck", hl.Recheck.String(),
		"--hyperliquid-keys", hl.Keys, "--hyperliquid-passphrase-file", hl.PassphraseFile,
		"--health-addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"), "--store", "sqlite:" + filepath.Join(dir, "data", "stakeflow.db"),
		"--log-format", "json", "--stop-timeout", "5s", "--payload-keyset", cfg.Temporal.PayloadKeyset,
	}
	return append(args, st.EVM.WorkerArgs()...)
}

// devServer is a Temporal dev server run as a child process on a fixed port with a database file:
// stopped and started again, it keeps its state.
type devServer struct {
	cli, db, log string
	port         int
	cmd          *exec.Cmd
	done         chan struct{}
}

func (d *devServer) address() string { return "127.0.0.1:" + strconv.Itoa(d.port) }

func (d *devServer) start(t *testing.T) {
	t.Helper()
	args := []string{"server", "start-dev", "--ip", "127.0.0.1", "--port", strconv.Itoa(d.port), "--headless",
		"--db-filename", d.db, "--log-level", "error"}
	for _, kv := range stack.BaseServerDynamicConfig {
		args = append(args, "--dynamic-config-value", kv)
	}
	for _, p := range stack.SQLitePragmas {
		args = append(args, "--sqlite-pragma", p)
	}
	for _, kv := range workflows.SearchAttributeTypes() {
		args = append(args, "--search-attribute", kv[0]+"="+kv[1])
	}
	d.cmd, d.done = startLogged(t, d.cli, args, d.log)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.Eventually(t, func() bool {
		select {
		case <-d.done:
			return true
		default:
		}
		c, err := client.Dial(encrypted(t, client.Options{HostPort: d.address(), Logger: cli.TemporalLogger(zap.NewNop())}))
		if err != nil {
			return false
		}
		defer c.Close()
		_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
		return err == nil
	}, time.Minute, 200*time.Millisecond, "the Temporal dev server at %s", d.address())
	select {
	case <-d.done:
		t.Fatalf("the Temporal dev server exited: %s", readTail(d.log))
	default:
	}
}

// stop ends the server with SIGTERM (SIGKILL after a grace) and waits for it.
func (d *devServer) stop() {
	if d.cmd == nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(20 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
	d.cmd = nil
}

// workerProcess is a cmd/worker child process.
type workerProcess struct {
	bin, log string
	args     []string
	cmd      *exec.Cmd
	done     chan struct{}
}

func (w *workerProcess) start(t *testing.T) {
	t.Helper()
	w.cmd, w.done = startLogged(t, w.bin, w.args, w.log)
}

// kill ends the worker with SIGKILL and waits for it.
func (w *workerProcess) kill() {
	if w.cmd == nil {
		return
	}
	_ = w.cmd.Process.Kill()
	<-w.done
	w.cmd = nil
}

func (w *workerProcess) tail() string { return readTail(w.log) }

// startLogged starts bin with args, its output appended to logPath; done is closed once it exited.
func startLogged(t *testing.T, bin string, args []string, logPath string) (*exec.Cmd, chan struct{}) {
	t.Helper()
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = f.Close()
		close(done)
	}()
	return cmd, done
}

func readTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// freePort is a port free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitStepOn waits until operation id, on the Temporal of c, reports step.
func waitStepOn(t *testing.T, c client.Client, id, step string) {
	t.Helper()
	var last string
	require.Eventually(t, func() bool {
		v, err := c.QueryWorkflow(context.Background(), id, "", workflows.QueryStatus)
		if err != nil {
			last = err.Error()
			return false
		}
		var s workflows.Status
		if err := v.Get(&s); err != nil {
			last = err.Error()
			return false
		}
		if s.Step == workflows.StepFailed {
			last = fmt.Sprintf("failed: %s", s.Reason)
			return true
		}
		last = s.Step
		return s.Step == step
	}, 90*time.Second, 100*time.Millisecond, "operation %s never reached %s", id, step)
	require.NotEqual(t, "failed", strings.SplitN(last, ":", 2)[0], "operation %s: %s", id, last)
}
