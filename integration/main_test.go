//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/internal/worker"
	"github.com/stakeflow/stakeflow/modules/all"
	"github.com/stakeflow/stakeflow/store"
	"github.com/stakeflow/stakeflow/store/storetest"
	"github.com/stakeflow/stakeflow/workflows"
	"github.com/stakeflow/stakeflow/workflows/replaytest"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

var recordHistories = flag.String("record-histories", "", "write the histories of the workflows run here under this directory (the workflows/ folder: each chain's into <chain>/testdata/histories)")

// historyDir is where the history of a workflow type (or a file name starting with it) is
// recorded: the folder of its chain's workflows; the nonce lease's, beside the workflows folder
// (package lease).
func historyDir(root, name string) string {
	chain := "solana"
	switch {
	case strings.HasPrefix(name, "NonceLease"):
		return filepath.Join(root, "..", "lease", "testdata", "histories")
	case strings.HasPrefix(name, "Polygon"):
		chain = "polygon"
	case strings.HasPrefix(name, "Celestia"):
		chain = "celestia"
	case strings.HasPrefix(name, "TON"):
		chain = "ton"
	case strings.HasPrefix(name, "Hyperliquid"):
		chain = "hyperliquid"
	case strings.HasPrefix(name, "EigenLayer"):
		chain = "eigenlayer"
	case strings.HasPrefix(name, "APYJob"), strings.HasPrefix(name, "RewardsJob"), strings.HasPrefix(name, "SSVJob"):
		chain = "jobs"
	}
	return filepath.Join(root, chain, "testdata", "histories")
}

const (
	sol               = uint64(1_000_000_000)
	fee               = uint64(5000) // lamports per signature on the runtime
	approvalThreshold = 50 * sol
)

var (
	// jobsStore is the data jobs' store: a database on a real PostgreSQL server, which the
	// worker writes (--store) and the admin tool reads (STAKEFLOW_STORE).
	jobsStore *store.DB
	// payloadKeyset is the keyset file of the payload codec every client and worker of the suite
	// encrypts with (a fresh key per run, in the stack's directory); keyset is that keyset parsed.
	payloadKeyset string
	keyset        *codec.Keyset
	st            *stack.Stack
	chain         *solchain.Client
	logs          = &syncBuffer{}
	// finished collects the operation IDs whose histories are recorded.
	finished   []string
	finishedMu sync.Mutex
	// named maps the operation IDs of chosen scenarios to the file name their history is recorded
	// under (<WorkflowType>-<scenario>), whatever way they ended; snapshots holds histories taken
	// while an operation was still running, by file name.
	named     = map[string]string{}
	snapshots = map[string][]byte{}
)

// recordAs records the history of operation id, as it ends, under name when the run records
// histories (see -record-histories): the replay tests then cover that scenario.
func recordAs(id, name string) {
	finishedMu.Lock()
	defer finishedMu.Unlock()
	named[id] = name
}

// snapshotAs records the history of operation id as it stands now (an operation still waiting, as
// many are while a new worker is deployed) under name.
func snapshotAs(t *testing.T, id, name string) {
	t.Helper()
	if *recordHistories == "" {
		return
	}
	raw, err := exportHistory(context.Background(), id)
	require.NoError(t, err)
	finishedMu.Lock()
	defer finishedMu.Unlock()
	snapshots[name] = raw
}

// syncBuffer collects every log line of the worker and the stack.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Sync() error { return nil }

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	cliPath := os.Getenv("TEMPORAL_CLI")
	if cliPath == "" {
		fmt.Fprintln(os.Stderr, "TEMPORAL_CLI is not set: run through `make test-integration` (scripts/tools.sh temporal installs it)")
		return 1
	}
	dir, err := os.MkdirTemp("", "stakeflow-it-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), logs, zapcore.DebugLevel)
	logger := zap.New(core)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	hooks, err = newWebhook(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the webhook receiver:", err)
		return 1
	}
	defer hooks.close()
	pgDSN, stopPG, err := storetest.StartServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting PostgreSQL for the data jobs' store:", err)
		return 1
	}
	defer stopPG()
	if jobsStore, err = store.Open(ctx, pgDSN); err != nil {
		fmt.Fprintln(os.Stderr, "opening the data jobs' store:", err)
		return 1
	}
	defer func() { _ = jobsStore.Close() }()
	if err := os.Setenv("STAKEFLOW_STORE", pgDSN); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Every payload of the run is encrypted: the stack's client and worker through
	// Options.PayloadKeyset, the admin tool and the worker processes through the flag's
	// environment twin (and their own flag, processWorkerArgs).
	// Its search key is replaytest's, so the histories the suite records (-record-histories)
	// replay with the tags they were written with.
	payloadKeyset = filepath.Join(dir, "payload-keyset.json")
	kf, err := codec.NewKeyFile("it-" + strconv.FormatInt(time.Now().Unix(), 36))
	if err == nil {
		kf.SearchKey = replaytest.SearchKey
		err = stack.WriteKeyset(payloadKeyset, kf)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "writing the payload keyset:", err)
		return 1
	}
	if keyset, err = codec.LoadKeyset(payloadKeyset); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.Setenv(cli.EnvName("payload-keyset"), payloadKeyset); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	st, err = stack.Start(ctx, stack.Options{
		TemporalCLI:   cliPath,
		Dir:           dir,
		PayloadKeyset: payloadKeyset,
		// Epochs last hours: they turn only when a test warps them, so every wait is deterministic.
		Runtime:      solanart.Options{SlotDuration: 100 * time.Millisecond, SlotsPerEpoch: 100_000, Logger: logger.Named("runtime")},
		EpochRecheck: time.Second,
		Stakers:      28, StakerLamports: 100 * sol,
		// EVM keys 6-8 are the EigenLayer pod owners, 9-11 Hyperliquid's delegators (hyperliquidDelegator),
		// 12 the staker of TestPolygonReplacementRefusedThenCancelledEndsOnTheChainsWord, 13 the
		// pod owner of the checkpoint run in many runs (eigenlayer_runs_test.go).
		EVM:               &stack.EVMOptions{Stakers: 14},
		Celestia:          &stack.CelestiaOptions{Delegators: 11, UnbondingTime: celestiaUnbonding, ReplaceAfter: 2 * time.Second},
		ApprovalThreshold: approvalThreshold,
		ConfigureWorker: func(cfg *worker.Config) {
			hooks.configure(cfg)
			cfg.Store = pgDSN
		},
		Logger: logger, WorkerLogger: logger.Named("worker"),
		// Every chain's keys also in a SoftHSM2 token, for a second worker (hsm_test.go).
		HSM: &stack.HSMOptions{PIN: hsmPIN, SecondWorker: true, Solana: 2, EVM: 2},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the local stack:", err)
		return 1
	}
	defer st.Close()
	chain = solchain.New(st.Sandbox.Runtime().URL())
	code := m.Run()
	stopHSMWorker()
	if code == 0 && *recordHistories != "" {
		if err := writeHistories(context.Background(), *recordHistories); err != nil {
			fmt.Fprintln(os.Stderr, "recording histories:", err)
			return 1
		}
	}
	return code
}

// encrypted sets the suite's payload codec in opts (cli.Temporal.Encrypt): a client of a test's
// own writes and reads payloads as the stack's worker does.
func encrypted(t *testing.T, opts client.Options) client.Options {
	t.Helper()
	require.NoError(t, (&cli.Temporal{PayloadKeyset: payloadKeyset}).Encrypt(&opts))
	return opts
}

// starterRun runs the admin tool against the stack's Temporal and returns what it printed; it
// encrypts with the suite's keyset (STAKEFLOW_PAYLOAD_KEYSET, set by TestMain).
func starterRun(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := starter.Run(ctx, append(args, "--temporal-address", st.TemporalAddress()), &out, nil, all.StarterGroups()...)
	return out.String(), err
}

func decodeResult(t *testing.T, out string) wfsolana.Result {
	t.Helper()
	var res wfsolana.Result
	require.NoError(t, json.Unmarshal([]byte(out), &res), "starter output: %s", out)
	return res
}

func operationID(t *testing.T, prefix string) string {
	id := fmt.Sprintf("%s-%s-%d", prefix, t.Name(), time.Now().UnixNano())
	finishedMu.Lock()
	finished = append(finished, id)
	finishedMu.Unlock()
	return id
}

// landedBy lists the signatures of the non-airdrop transactions paid for by payer.
func landedBy(t *testing.T, payer solana.PublicKey) []string {
	t.Helper()
	ledger, err := st.Sandbox.Runtime().Ledger(context.Background())
	require.NoError(t, err)
	var out []string
	for _, e := range ledger {
		if !e.Airdrop && e.FeePayer.Equals(payer) {
			out = append(out, e.Signature.String())
		}
	}
	return out
}

func queryStep(id string) (string, error) {
	v, err := st.Client.QueryWorkflow(context.Background(), id, "", workflows.QueryStatus)
	if err != nil {
		return "", err
	}
	var s workflows.Status
	if err := v.Get(&s); err != nil {
		return "", err
	}
	return s.Step, nil
}

func writeHistories(ctx context.Context, root string) error {
	write := func(name string, raw []byte) error {
		dir := historyDir(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".json"), raw, 0o644)
	}
	finishedMu.Lock()
	ids := append([]string(nil), finished...)
	chosen := map[string]string{}
	for id, name := range named {
		chosen[id] = name
	}
	for name, raw := range snapshots {
		if err := write(name, raw); err != nil {
			finishedMu.Unlock()
			return err
		}
	}
	finishedMu.Unlock()
	for id, name := range chosen {
		raw, err := exportHistory(ctx, id)
		if err != nil {
			return fmt.Errorf("history of %s (%s): %w", id, name, err)
		}
		if err := write(name, raw); err != nil {
			return err
		}
	}
	byType := map[string]string{}
	for _, id := range ids {
		desc, err := st.Client.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			continue
		}
		if desc.GetWorkflowExecutionInfo().GetStatus().String() != "Completed" {
			continue
		}
		typ := desc.GetWorkflowExecutionInfo().GetType().GetName()
		if _, done := byType[typ]; done {
			continue
		}
		byType[typ] = id
		raw, err := exportHistory(ctx, id)
		if err != nil {
			return err
		}
		if err := write(typ, raw); err != nil {
			return err
		}
	}
	return nil
}

// stakeActive stakes lamports through the admin tool and warps one epoch, so that the stake is
// active (a stake deactivated in its activation epoch becomes inactive at once, with no wait).
func stakeActive(t *testing.T, staker solana.PublicKey, solAmount string) wfsolana.Result {
	t.Helper()
	out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", solAmount,
		"--id", operationID(t, "stake"), "--wait", "--json")
	require.NoError(t, err, out)
	res := decodeResult(t, out)
	require.NoError(t, st.Sandbox.Runtime().WarpEpochs(context.Background(), 1))
	return res
}

// waitStep waits until the operation reports step; an operation that fails first ends the test
// with its status.
func waitStep(t *testing.T, id, step string) {
	t.Helper()
	deadline := time.NewTimer(90 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		got, err := queryStep(id)
		if err == nil && got == step {
			return
		}
		if got == workflows.StepFailed {
			out, _ := starterRun(t, "status", "--id", id)
			t.Fatalf("operation %s failed while waiting for step %s:\n%s", id, step, out)
		}
		select {
		case <-deadline.C:
			t.Fatalf("operation %s never reached step %s (last: %q, %v)", id, step, got, err)
		case <-tick.C:
		}
	}
}
