package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/gagliardetto/solana-go"
	"go.temporal.io/api/workflowservice/v1"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/workflows"
)

// startTimeout bounds start-up; the first run installs the Solana runtime's npm dependencies.
const startTimeout = 10 * time.Minute

// rpcURLFile, in the stack directory, holds the running stack's Solana RPC URL for warp.
const rpcURLFile = "solana-rpc-url"

// localStack is a running stack and what devstack tells about it.
type localStack struct {
	*stack.Stack
	cfg     config
	logPath string
	logger  *zap.Logger
	// keyset is the payload keyset file the stack encrypts with ("" with --no-encrypt).
	keyset string
	// temporalCLI is the Temporal CLI binary, for the commands devstack prints.
	temporalCLI string
}

// portInUseError names a port devstack needs that something else holds.
type portInUseError struct {
	Flag string
	Addr string
	Err  error
}

func (e *portInUseError) Error() string {
	return fmt.Sprintf("port %s (--%s) is in use; is a devstack still running? Stop it or pick another port with --%s (%v)",
		e.Addr, e.Flag, e.Flag, e.Err)
}

func (e *portInUseError) Unwrap() error { return e.Err }

// checkPorts fails with a portInUseError when a fixed port devstack needs is taken. The dev
// server would otherwise hand out a client connected to whatever already listens there.
func checkPorts(cfg config) error {
	addrs := []struct{ flag, addr string }{
		{"temporal-port", net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.TemporalPort))},
		{"ui-port", net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.UIPort))},
		{"sandbox-addr", cfg.SandboxAddr},
		{"rpc-addr", cfg.RPCAddr},
	}
	for _, a := range addrs {
		_, port, err := net.SplitHostPort(a.addr)
		if err != nil {
			return &usageError{msg: fmt.Sprintf("--%s %q: want host:port: %v", a.flag, a.addr, err)}
		}
		if port == "0" || port == "" {
			continue
		}
		l, err := net.Listen("tcp", a.addr)
		if err != nil {
			return &portInUseError{Flag: a.flag, Addr: a.addr, Err: err}
		}
		_ = l.Close()
	}
	return nil
}

// newFileLogger writes the stack's and the worker's logs to path, appending.
func newFileLogger(path string) (*zap.Logger, error) {
	zc := zap.NewDevelopmentConfig()
	zc.Level = zap.NewAtomicLevelAt(zap.InfoLevel)
	zc.DisableStacktrace = true
	zc.OutputPaths = []string{path}
	zc.ErrorOutputPaths = []string{path}
	l, err := zc.Build()
	if err != nil {
		return nil, fmt.Errorf("opening log file %s: %w", path, err)
	}
	return l, nil
}

// clockLine describes the chain's clock.
func clockLine(cfg config) string {
	epoch := time.Duration(cfg.SlotsPerEpoch) * cfg.SlotDuration
	return fmt.Sprintf("chain clock: slot %s, %d slots per epoch (an epoch every %s), blockhashes valid %d slots (%s), final %d slots deep (%s); a deactivating stake is read again at least every %s",
		cfg.SlotDuration, cfg.SlotsPerEpoch, epoch,
		solanart.DefaultBlockhashValidity, time.Duration(solanart.DefaultBlockhashValidity)*cfg.SlotDuration,
		solanart.DefaultFinalizationDepth, time.Duration(solanart.DefaultFinalizationDepth)*cfg.SlotDuration, cfg.EpochRecheck)
}

// startStack checks the ports, finds (or installs) the Temporal CLI and starts the stack,
// printing what it runs.
func startStack(ctx context.Context, cfg config, out, stderr io.Writer) (*localStack, error) {
	if err := checkPorts(cfg); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.StackDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the stack directory: %w", err)
	}
	logPath := filepath.Join(cfg.StackDir, "devstack.log")
	logger, err := newFileLogger(logPath)
	if err != nil {
		return nil, err
	}
	bin, err := temporalCLI(cfg.TemporalCLI, stderr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "starting the local stack: Temporal dev server + Web UI, staking-service sandbox on a Solana runtime, worker\n  %s\n", clockLine(cfg))
	began := time.Now()
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	keyset, err := payloadKeyset(cfg, out)
	if err != nil {
		return nil, err
	}
	var hsm *stack.HSMOptions
	if cfg.HSM {
		hsm = &stack.HSMOptions{Solana: cfg.Stakers, EVM: 2}
	}
	st, err := stack.Start(sctx, stack.Options{
		HSM:            hsm,
		TemporalCLI:    bin,
		Dir:            cfg.StackDir,
		Persist:        cfg.Persist,
		UIPort:         cfg.UIPort,
		TemporalPort:   cfg.TemporalPort,
		SandboxAddr:    cfg.SandboxAddr,
		Runtime:        solanart.Options{Addr: cfg.RPCAddr, SlotDuration: cfg.SlotDuration, SlotsPerEpoch: cfg.SlotsPerEpoch},
		Stakers:        cfg.Stakers,
		StakerLamports: cfg.StakerSOL * 1_000_000_000,
		EpochRecheck:   cfg.EpochRecheck,
		EVM:            &stack.EVMOptions{Stakers: 2},
		Celestia:       &stack.CelestiaOptions{Delegators: 1},
		PayloadKeyset:  keyset,
		CodecServer:    keyset != "",
		Logger:         logger.Named("stack"),
		WorkerLogger:   logger.Named("worker"),
	})
	if err != nil {
		_ = logger.Sync()
		if ctx.Err() != nil {
			return nil, errInterrupted
		}
		return nil, fmt.Errorf("starting the local stack (logs in %s): %w", logPath, err)
	}
	ls := &localStack{Stack: st, cfg: cfg, logPath: logPath, logger: logger, keyset: keyset, temporalCLI: bin}
	if err := os.WriteFile(filepath.Join(cfg.StackDir, rpcURLFile), []byte(st.Sandbox.Runtime().URL()+"\n"), 0o600); err != nil {
		ls.close()
		return nil, err
	}
	db := "in memory"
	if cfg.Persist {
		db = "database " + filepath.Join(cfg.StackDir, "temporal.db")
	}
	fmt.Fprintf(out, "  Temporal:   %s (%s)\n", st.TemporalAddress(), db)
	fmt.Fprintf(out, "  Web UI:     %s\n", st.UIURL)
	fmt.Fprintf(out, "  sandbox:    %s (token in %s)\n", st.Sandbox.URL(), st.TokenFile)
	fmt.Fprintf(out, "  Solana RPC: %s\n", st.Sandbox.Runtime().URL())
	if keyset != "" {
		fmt.Fprintf(out, "  payloads:   encrypted with the keyset %s; the Web UI shows them decoded through the codec server\n", keyset)
		fmt.Fprintf(out, "  codec:      %s (token in %s)\n", st.CodecURL, st.CodecTokenFile)
	} else {
		fmt.Fprintf(out, "  payloads:   in clear (--no-encrypt)\n")
	}
	if h := st.HSM; h != nil {
		fmt.Fprintf(out, "  HSM:        SoftHSM2 token %q (SOFTHSM2_CONF=%s, module %s, PIN file %s): every chain signs through PKCS#11\n",
			h.Token.Label, h.Token.Conf, h.Token.Module, h.Token.PINFile)
	}
	fmt.Fprintf(out, "  logs:       %s\n", logPath)
	fmt.Fprintf(out, "  ready in %s\n", time.Since(began).Round(100*time.Millisecond))
	return ls, nil
}

// payloadKeyset is the keyset file the stack encrypts with: --payload-keyset, checked now, or the
// stack directory's own, generated on the first run; "" with --no-encrypt.
func payloadKeyset(cfg config, out io.Writer) (string, error) {
	if cfg.NoEncrypt {
		return "", nil
	}
	path := cfg.PayloadKeyset
	if path == "" {
		path = filepath.Join(cfg.StackDir, keysetFile)
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			if err := stack.WriteNewKeyset(path, "local-1"); err != nil {
				return "", err
			}
			fmt.Fprintf(out, "  generated the payload keyset %s (keep it: what the stack's database holds is sealed with it)\n", path)
		}
	}
	if _, err := codec.LoadKeyset(path); err != nil {
		return "", fmt.Errorf("--payload-keyset: %w", err)
	}
	return path, nil
}

// starterEnv is the environment the starter commands devstack prints run with: the stack's
// Temporal address and, when it encrypts, its payload keyset.
func (ls *localStack) starterEnv() string {
	env := "STAKEFLOW_TEMPORAL_ADDRESS=" + ls.TemporalAddress()
	if ls.keyset != "" {
		env += " STAKEFLOW_PAYLOAD_KEYSET=" + ls.keyset
	}
	return env
}

// solanaStakers are the funded Solana stakers the worker holds the keys of: the token's with --hsm.
func (ls *localStack) solanaStakers() []solana.PublicKey {
	if ls.HSM != nil {
		return ls.HSM.Solana
	}
	return ls.Stakers
}

// evmStakers are the funded EVM stakers the worker holds the keys of: the token's with --hsm.
func (ls *localStack) evmStakers() []common.Address {
	if ls.HSM != nil {
		return ls.HSM.EVM
	}
	return ls.EVM.Stakers
}

// celestiaDelegators are the funded Celestia delegators the worker holds the keys of: the
// token's with --hsm.
func (ls *localStack) celestiaDelegators() []string {
	if ls.HSM != nil {
		return ls.HSM.Celestia
	}
	return ls.Celestia.Delegators
}

// close stops everything the stack started.
func (ls *localStack) close() {
	ls.Close()
	_ = os.Remove(filepath.Join(ls.cfg.StackDir, rpcURLFile))
	_ = ls.logger.Sync()
}

// workflowURL is the Web UI page of an operation.
func (ls *localStack) workflowURL(operationID string) string {
	return ls.UIURL + "/namespaces/default/workflows/" + operationID
}

// openOperations lists the operations still running, left by an earlier session.
func (ls *localStack) openOperations(ctx context.Context) ([]string, error) {
	resp, err := ls.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query:    fmt.Sprintf("ExecutionStatus = 'Running' AND %s IS NOT NULL", workflows.SAOperation.GetName()),
		PageSize: 1000,
	})
	if err != nil {
		return nil, fmt.Errorf("listing open operations: %w", err)
	}
	var ids []string
	for _, e := range resp.GetExecutions() {
		ids = append(ids, e.GetExecution().GetWorkflowId())
	}
	return ids, nil
}

// settleLeftovers deals with operations an earlier session left running: the Solana runtime
// starts empty on every run, so they cannot finish. Those whose ID starts with prefix (the
// demo's own) are terminated; the others are listed with the command that cancels them.
func (ls *localStack) settleLeftovers(ctx context.Context, out io.Writer, prefix string) error {
	ids, err := ls.openOperations(ctx)
	if err != nil {
		return err
	}
	var others []string
	for _, id := range ids {
		if prefix != "" && strings.HasPrefix(id, prefix) {
			if err := ls.Client.TerminateWorkflow(ctx, id, "", "left open by an interrupted demo; the chain it ran on is gone"); err != nil {
				return fmt.Errorf("terminating %s left by an interrupted demo: %w", id, err)
			}
			fmt.Fprintf(out, "  terminated %s, left open by an interrupted demo\n", id)
			continue
		}
		others = append(others, id)
	}
	if len(others) > 0 {
		what := fmt.Sprintf("%d operations from an earlier session are still open; the chain restarted empty, so they", len(others))
		if len(others) == 1 {
			what = "1 operation from an earlier session is still open; the chain restarted empty, so it"
		}
		fmt.Fprintf(out, "  %s cannot finish:\n", what)
		for _, id := range others {
			fmt.Fprintf(out, "    %s go run ./cmd/starter cancel --id %s\n", ls.starterEnv(), id)
		}
		fmt.Fprintf(out, "  (or stop devstack and remove %s to start from nothing)\n", ls.cfg.StackDir)
	}
	return nil
}

// errWorkerStopped reports that the in-process worker ended on its own.
var errWorkerStopped = errors.New("the worker stopped")

// watchWorker cancels ctx with errWorkerStopped when the worker ends on its own.
func (ls *localStack) watchWorker(ctx context.Context, cancel context.CancelCauseFunc) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := ls.WorkerErr(); err != nil {
				cancel(fmt.Errorf("%w (logs in %s): %v", errWorkerStopped, ls.logPath, err))
				return
			}
		}
	}
}
