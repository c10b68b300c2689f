package chaos

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"

	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/sandbox"
	"github.com/stakeflow/stakeflow/sandbox/solanart"
	"github.com/stakeflow/stakeflow/workflows"
)

// network is the Solana network the operations name.
const network = "testnet"

// Runtime settings: short slots so that transactions finalize in seconds, and epochs so long that
// they turn only when the run warps them.
//
// A blockhash stays valid for 400 blocks (40 s): longer than the 30 s an activity lost with a
// killed worker takes to time out, so a broadcast retried after a kill can still land with the
// same bytes. Warps still expire every outstanding blockhash (they jump a whole epoch of slots).
const (
	slotDuration      = 100 * time.Millisecond
	slotsPerEpoch     = 100_000
	blockhashValidity = 400
	epochRecheck      = time.Second
)

// A warp waits for a quiet moment, when no operation is between starting and broadcasting, for
// at most quietLimit; then it warps anyway.
const quietLimit = 20 * time.Second

// busyQuery finds the operations between starting and broadcasting: a warp among them would
// expire the blockhashes of the transactions they are about to send.
var busyQuery = func() string {
	var terms []string
	for _, step := range []string{workflows.StepValidating, workflows.StepCheckingValidator,
		workflows.StepBuilding, workflows.StepSigning, workflows.StepBroadcasting} {
		terms = append(terms, fmt.Sprintf("%s = %q", workflows.SAStep.GetName(), step))
	}
	return `ExecutionStatus = "Running" AND (` + strings.Join(terms, " OR ") + ")"
}()

// Report is what a chaos run did and found.
type Report struct {
	Config   Config
	Dir      string
	Started  time.Time
	Duration time.Duration

	// Faults are the sandbox's injected faults, counted as they were injected.
	Faults *FaultCounts
	// FaultConfig is the sandbox's fault configuration at the end of the run.
	FaultConfig sandbox.FaultConfig
	// WorkerStarts, WorkerKills and WorkerExits count worker processes started, killed with
	// SIGKILL, and exited on their own (each restarted).
	WorkerStarts, WorkerKills, WorkerExits int
	// TemporalRestarts counts stops and starts of the Temporal dev server on its database.
	TemporalRestarts int
	// Warps counts epoch warps; ForcedWarps those made while operations were about to broadcast
	// (no quiet moment came within quietLimit).
	Warps, ForcedWarps int

	// Operations by end state.
	Completed, Failed, Running, NotStarted int
	// FailedByType counts failed operations by cause.
	FailedByType map[string]int
	// Transactions is how many transactions the operations reported; Rebuilt how many of them
	// took more than one build; AlreadyProcessed how many broadcasts were answered "already
	// processed" (an earlier attempt had landed); Resent how many signatures were broadcast more
	// than once.
	Transactions, Rebuilt, AlreadyProcessed, Resent int
	// MaxBuilds is the most builds one transaction took.
	MaxBuilds int

	Violations []Violation
}

// OK is true when the run found no violation.
func (r *Report) OK() bool { return len(r.Violations) == 0 }

// Run runs a chaos run: the local stack with the worker and the Temporal dev server as child
// processes, the planned operations under service faults, worker kills, a Temporal restart and
// epoch warps, then the check of the chain against the operations. An error means the run could
// not be carried out; what it found is in the report's Violations.
func Run(ctx context.Context, cfg Config, logger *zap.Logger) (rep *Report, err error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	r := &runner{cfg: cfg, log: logger, faults: &FaultCounts{}, epochTurn: make(chan struct{})}
	rep = &Report{Config: cfg, Started: time.Now(), Faults: r.faults, FailedByType: map[string]int{}}
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "stakeflow-chaos-")
		if err != nil {
			return nil, err
		}
		cfg.Dir = dir
		r.cfg.Dir = dir
		defer func() {
			if !cfg.Keep && err == nil && rep.OK() {
				_ = os.RemoveAll(dir)
			}
		}()
	}
	rep.Dir = cfg.Dir
	defer r.close()
	if err := r.setUp(ctx); err != nil {
		return rep, err
	}
	outcomes := r.runOps(ctx)
	if err := r.finish(ctx, rep, outcomes); err != nil {
		return rep, err
	}
	rep.Duration = time.Since(rep.Started)
	return rep, nil
}

type runner struct {
	cfg    Config
	log    *zap.Logger
	faults *FaultCounts

	temporal *temporalServer
	worker   *workerProcess
	sb       *sandbox.Sandbox
	chain    *solchain.Client
	client   client.Client
	ops      []OpSpec
	votes    []solana.PublicKey
	// serviceVote is the vote account the service delegates stakes to.
	serviceVote string
	baseline    int
	logs        []*os.File

	// startGate holds workflow starts back while a warp waits for a quiet moment.
	startGate sync.RWMutex

	mu sync.Mutex
	// done counts finished operations; progress is signalled on each.
	done     int
	progress chan struct{}
	// awaitingTurn counts chains waiting for their stake to become active; unstaking counts
	// unstake workflows running. The warp loop turns the epoch while either is positive.
	awaitingTurn, unstaking int
	epoch                   uint64
	epochTurn               chan struct{}
	warps, temporalRestarts int
	// forcedWarps counts warps made without a quiet moment.
	forcedWarps int
}

func (r *runner) setUp(ctx context.Context) error {
	cfg := r.cfg
	keyDir := filepath.Join(cfg.Dir, "keys")
	if err := os.MkdirAll(keyDir, 0o700); err != nil {
		return err
	}
	bin := cfg.WorkerBin
	if bin == "" {
		bin = filepath.Join(cfg.Dir, "stakeflow-worker")
		r.log.Info("Building the worker", zap.String("binary", bin))
		out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/stakeflow/stakeflow/cmd/worker").CombinedOutput()
		if err != nil {
			return fmt.Errorf("chaos: building cmd/worker: %w\n%s", err, out)
		}
	}

	tlog, err := r.logFile("temporal.log")
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	r.temporal = newTemporalServer(cfg.TemporalCLI, port, filepath.Join(cfg.Dir, "temporal.db"), tlog)
	r.log.Info("Starting the Temporal dev server", zap.String("address", r.temporal.address()))
	if err := r.temporal.start(ctx); err != nil {
		return err
	}

	slog, err := r.logFile("sandbox.log")
	if err != nil {
		return err
	}
	sbLogger := zap.New(newCountingCore(fileCore(slog), r.faults))
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	r.sb, err = sandbox.Start(ctx, sandbox.Config{
		TokenSecret: secret,
		Runtime: solanart.Options{SlotDuration: slotDuration, SlotsPerEpoch: slotsPerEpoch, BlockhashValidity: blockhashValidity,
			Logger: sbLogger.Named("runtime")},
		Logger: sbLogger.Named("sandbox"),
	})
	if err != nil {
		return fmt.Errorf("chaos: starting the sandbox: %w", err)
	}
	rt := r.sb.Runtime()
	r.chain = solchain.New(rt.URL())
	r.votes = rt.VoteAccounts()
	if len(r.votes) == 0 {
		return errors.New("chaos: the runtime has no healthy vote account")
	}
	// The sandbox delegates every stake to the runtime's first healthy vote account.
	r.serviceVote = r.votes[0].String()
	token, err := sandbox.MintToken(secret, "stakeflow-chaos", 24*time.Hour)
	if err != nil {
		return err
	}
	tokenFile := filepath.Join(cfg.Dir, "service-token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		return err
	}

	before, err := rt.Ledger(ctx)
	if err != nil {
		return fmt.Errorf("chaos: reading the runtime ledger: %w", err)
	}
	r.baseline = len(before)
	r.ops = PlanOps(cfg.Seed, cfg.Ops, cfg.ChainShare)
	r.log.Info("Funding stakers", zap.Int("stakers", len(r.ops)))
	if err := r.fund(ctx, keyDir); err != nil {
		return err
	}
	ei, err := r.chain.EpochInfo(ctx)
	if err != nil {
		return fmt.Errorf("chaos: reading the epoch: %w", err)
	}
	r.epoch = ei.Epoch

	hport, err := freePort()
	if err != nil {
		return err
	}
	wlog, err := r.logFile("worker.log")
	if err != nil {
		return err
	}
	votes := make([]string, len(r.votes))
	for i, v := range r.votes {
		votes[i] = v.String()
	}
	r.worker = &workerProcess{
		bin: bin, env: childEnv(), logf: wlog, restartGap: time.Second,
		healthAddr: "127.0.0.1:" + strconv.Itoa(hport),
		args: []string{
			"--temporal-address", r.temporal.address(), "--namespace", "default", "--task-queue", workflows.TaskQueue,
			"--service-url", r.sb.URL(), "--service-token-file", tokenFile,
			"--solana-keys", keyDir, "--solana-rpc", "testnet=" + rt.URL() + ",mainnet-beta=" + rt.URL(),
			// The local runtime serves both networks: the worker expects its genesis, not the public ones.
			"--solana-genesis", "testnet=" + rt.GenesisHash().String() + ",mainnet-beta=" + rt.GenesisHash().String(),
			"--solana-slot-duration", slotDuration.String(), "--epoch-recheck", epochRecheck.String(),
			"--allowed-vote-accounts", strings.Join(votes, ","),
			"--health-addr", "127.0.0.1:" + strconv.Itoa(hport),
			"--log-format", "json", "--log-level", "info", "--stop-timeout", "5s", "--pollers", "8",
		},
	}
	if err := r.worker.run(); err != nil {
		return err
	}
	if err := r.worker.ready(ctx, time.Minute); err != nil {
		return err
	}
	r.client, err = client.Dial(client.Options{HostPort: r.temporal.address(), Logger: cli.TemporalLogger(zap.NewNop())})
	if err != nil {
		return fmt.Errorf("chaos: connecting to Temporal: %w", err)
	}
	return r.sb.SetFaults(ServiceFaults(cfg.Seed, false))
}

// fund writes each staker's keypair for the worker and airdrops its funding.
func (r *runner) fund(ctx context.Context, keyDir string) error {
	jobs := make(chan OpSpec)
	errs := make(chan error, len(r.ops))
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for op := range jobs {
				ints := make([]int, len(op.key))
				for i, b := range op.key {
					ints[i] = int(b)
				}
				raw, err := json.Marshal(ints)
				if err == nil {
					err = os.WriteFile(filepath.Join(keyDir, op.Staker.String()+".json"), raw, 0o600)
				}
				if err == nil {
					err = r.sb.Runtime().Airdrop(ctx, op.Staker, op.Funding)
				}
				if err != nil {
					errs <- fmt.Errorf("chaos: funding staker %s of operation %d: %w", op.Staker, op.Index, err)
				}
			}
		}()
	}
	for _, op := range r.ops {
		jobs <- op
	}
	close(jobs)
	wg.Wait()
	close(errs)
	return <-errs
}

func (r *runner) logFile(name string) (*os.File, error) {
	f, err := os.Create(filepath.Join(r.cfg.Dir, name))
	if err != nil {
		return nil, err
	}
	r.logs = append(r.logs, f)
	return f, nil
}

// runOps runs every operation under the fault schedule and the epoch warps, and returns their
// outcomes, in plan order.
func (r *runner) runOps(ctx context.Context) []OpOutcome {
	octx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	r.progress = make(chan struct{}, 1)
	bg, stopBG := context.WithCancel(octx)
	var bgWG sync.WaitGroup
	bgWG.Add(2)
	go func() { defer bgWG.Done(); r.warpLoop(bg) }()
	go func() { defer bgWG.Done(); r.eventLoop(bg) }()

	outcomes := make([]OpOutcome, len(r.ops))
	sem := make(chan struct{}, r.cfg.Concurrency)
	var wg sync.WaitGroup
	for i, op := range r.ops {
		select {
		case sem <- struct{}{}:
		case <-octx.Done():
		}
		if octx.Err() != nil {
			outcomes[i] = OpOutcome{Spec: op, State: StateNotStarted}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			outcomes[i] = r.runOp(octx, op)
			<-sem
			r.mu.Lock()
			r.done++
			done := r.done
			r.mu.Unlock()
			select {
			case r.progress <- struct{}{}:
			default:
			}
			if done%10 == 0 || done == len(r.ops) {
				r.log.Info("Progress", zap.Int("done", done), zap.Int("of", len(r.ops)))
			}
		}()
	}
	wg.Wait()
	stopBG()
	bgWG.Wait()
	return outcomes
}

// runOp runs one planned operation: the stake and, for a chain, the unstake after the epoch turned.
func (r *runner) runOp(ctx context.Context, op OpSpec) OpOutcome {
	out := OpOutcome{Spec: op}
	in := workflows.StakeInput{Network: network, Staker: op.Staker.String(), Lamports: op.Lamports}
	if op.AskVote {
		in.VoteAccount = r.serviceVote
		out.ExpectedVote = in.VoteAccount
	}
	if !r.start(ctx, op.StakeID, workflows.StakeSummary(in), workflows.StakeWorkflow, in) {
		out.State = StateNotStarted
		return out
	}
	var res workflows.Result
	if !r.await(ctx, op.StakeID, &res, &out) {
		return out
	}
	out.Stake = &res
	if op.Kind != KindChain {
		out.State = StateCompleted
		return out
	}

	// Deactivating in the activation epoch would end the stake at once; wait for it to be active.
	if !r.awaitEpochAfterNow(ctx) {
		out.State = StateRunning
		return out
	}
	un := workflows.UnstakeInput{Network: network, Staker: op.Staker.String(), StakeAccount: res.StakeAccount, Lamports: op.Lamports}
	r.mu.Lock()
	r.unstaking++
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.unstaking--
		r.mu.Unlock()
	}()
	if !r.start(ctx, op.UnstakeID, workflows.UnstakeSummary(un), workflows.UnstakeWorkflow, un) {
		out.State = StateNotStarted
		return out
	}
	var ures workflows.Result
	if !r.await(ctx, op.UnstakeID, &ures, &out) {
		return out
	}
	out.Unstake = &ures
	out.State = StateCompleted
	return out
}

// start starts a workflow, retrying while Temporal cannot be reached. A start refused because
// the ID is taken means an earlier attempt went through (the IDs are this run's own).
func (r *runner) start(ctx context.Context, id, summary string, wf, in any) bool {
	for {
		// Starts wait while a warp waits for a quiet moment.
		r.startGate.RLock()
		_, err := r.client.ExecuteWorkflow(ctx, starter.StartOptions(id, summary), wf, in)
		r.startGate.RUnlock()
		var already *serviceerror.WorkflowExecutionAlreadyStarted
		if err == nil || errors.As(err, &already) {
			return true
		}
		r.log.Debug("Start failed; retrying", zap.String("operationId", id), zap.Error(err))
		if !sleepCtx(ctx, time.Second) {
			return false
		}
	}
}

// await waits for a workflow's result, retrying while Temporal cannot be reached. It records a
// failure or a still-running state in out and returns false then.
func (r *runner) await(ctx context.Context, id string, res *workflows.Result, out *OpOutcome) bool {
	for {
		err := r.client.GetWorkflow(ctx, id, "").Get(ctx, res)
		if err == nil {
			return true
		}
		var wfErr *temporal.WorkflowExecutionError
		if errors.As(err, &wfErr) {
			out.State = StateFailed
			out.FailedType = failureType(err)
			out.Failure = fmt.Sprintf("%s: %v", id, err)
			r.log.Warn("Operation failed", zap.String("operationId", id), zap.Error(err))
			return false
		}
		if ctx.Err() != nil {
			out.State = StateRunning
			return false
		}
		r.log.Debug("Waiting for a result failed; retrying", zap.String("operationId", id), zap.Error(err))
		if !sleepCtx(ctx, time.Second) {
			out.State = StateRunning
			return false
		}
	}
}

func failureType(err error) string {
	var app *temporal.ApplicationError
	var canceled *temporal.CanceledError
	var timeout *temporal.TimeoutError
	switch {
	case errors.As(err, &app):
		if app.Type() != "" {
			return app.Type()
		}
		return "ApplicationError"
	case errors.As(err, &canceled):
		return "Canceled"
	case errors.As(err, &timeout):
		return "Timeout"
	}
	return "Unknown"
}

// awaitEpochAfterNow waits until the epoch is past the current one.
func (r *runner) awaitEpochAfterNow(ctx context.Context) bool {
	var now uint64
	for {
		ei, err := r.chain.EpochInfo(ctx)
		if err == nil {
			now = ei.Epoch
			break
		}
		if !sleepCtx(ctx, 200*time.Millisecond) {
			return false
		}
	}
	r.mu.Lock()
	r.awaitingTurn++
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.awaitingTurn--
		r.mu.Unlock()
	}()
	for {
		r.mu.Lock()
		epoch, turn := r.epoch, r.epochTurn
		r.mu.Unlock()
		if epoch > now {
			return true
		}
		select {
		case <-turn:
		case <-ctx.Done():
			return false
		}
	}
}

// warpLoop turns the epoch, at most every WarpEvery, while a chain waits for its stake to become
// active or an unstake runs (its wait for deactivation ends only at an epoch turn).
func (r *runner) warpLoop(ctx context.Context) {
	t := time.NewTicker(r.cfg.WarpEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.mu.Lock()
		needed := r.awaitingTurn > 0 || r.unstaking > 0
		r.mu.Unlock()
		if !needed {
			continue
		}
		r.startGate.Lock()
		quiet := r.awaitQuiet(ctx)
		err := r.sb.Runtime().WarpEpochs(ctx, 1)
		r.startGate.Unlock()
		if err != nil {
			r.log.Warn("Epoch warp failed", zap.Error(err))
			continue
		}
		if !quiet {
			r.mu.Lock()
			r.forcedWarps++
			r.mu.Unlock()
		}
		ei, err := r.chain.EpochInfo(ctx)
		if err != nil {
			r.log.Warn("Reading the epoch after a warp failed", zap.Error(err))
			continue
		}
		r.mu.Lock()
		r.epoch = ei.Epoch
		r.warps++
		close(r.epochTurn)
		r.epochTurn = make(chan struct{})
		r.mu.Unlock()
	}
}

// awaitQuiet waits until no operation is between starting and broadcasting, for at most
// quietLimit. It reports whether it found such a moment.
func (r *runner) awaitQuiet(ctx context.Context) bool {
	deadline := time.Now().Add(quietLimit)
	for time.Now().Before(deadline) {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := r.client.CountWorkflow(qctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: "default", Query: busyQuery})
		cancel()
		if err == nil && resp.GetCount() == 0 {
			return true
		}
		if !sleepCtx(ctx, 100*time.Millisecond) {
			return false
		}
	}
	return false
}

// eventLoop applies the scheduled process faults as the run reaches their progress points.
func (r *runner) eventLoop(ctx context.Context) {
	for _, ev := range ScheduleEvents(r.cfg.Seed, r.cfg.WorkerKills, r.cfg.RestartTemporal) {
		for {
			r.mu.Lock()
			reached := float64(r.done) >= ev.Progress*float64(len(r.ops))
			r.mu.Unlock()
			if reached {
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-r.progress:
			}
		}
		if !sleepCtx(ctx, ev.Delay) {
			return
		}
		switch ev.Kind {
		case EventKillWorker:
			r.log.Info("Killing the worker (SIGKILL)", zap.Duration("downFor", ev.Pause))
			starts, _, _ := r.worker.counts()
			r.worker.kill(ev.Pause)
			// The next fault waits for the new worker to be up and at work for a moment.
			if err := r.worker.awaitRestart(ctx, starts, 2*time.Minute); err != nil {
				r.log.Warn("The worker did not come back", zap.Error(err))
			}
			sleepCtx(ctx, 2*time.Second)
		case EventRestartTemporal:
			r.log.Info("Stopping the Temporal dev server; killing the worker while it is down", zap.Duration("downFor", ev.Pause))
			r.temporal.stop(20 * time.Second)
			// A worker started while Temporal is down exits at once; the supervisor starts it
			// again until Temporal is back.
			r.worker.kill(100 * time.Millisecond)
			sleepCtx(ctx, ev.Pause)
			for {
				err := r.temporal.start(context.WithoutCancel(ctx))
				if err == nil {
					break
				}
				r.log.Warn("Starting the Temporal dev server again failed; retrying", zap.Error(err))
				r.temporal.stop(5 * time.Second)
				time.Sleep(time.Second)
			}
			r.mu.Lock()
			r.temporalRestarts++
			r.mu.Unlock()
			r.log.Info("Temporal dev server started again on its database")
		case EventLostResponseDrop:
			f := ServiceFaults(r.cfg.Seed+1, true)
			if err := r.sb.SetFaults(f); err != nil {
				r.log.Warn("Switching lost responses to dropped connections failed", zap.Error(err))
			}
		}
	}
}

// finish reads the chain, checks it against the outcomes and fills the report.
func (r *runner) finish(ctx context.Context, rep *Report, outcomes []OpOutcome) error {
	// Let nothing more happen to the chain while it is read.
	rep.FaultConfig = r.sb.Faults()
	_ = r.sb.SetFaults(sandbox.FaultConfig{})
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	obs := Observation{Ops: outcomes, Balances: map[string]uint64{}, Accounts: map[string]AccountView{}}
	entries, err := r.sb.Runtime().Ledger(rctx)
	if err != nil {
		return fmt.Errorf("chaos: reading the runtime ledger: %w", err)
	}
	if r.baseline <= len(entries) {
		obs.Landed = entries[r.baseline:]
	}
	sbl, err := r.sb.Ledger(rctx)
	if err != nil {
		return fmt.Errorf("chaos: reading the sandbox ledger: %w", err)
	}
	obs.Built = sbl.StakeAccounts
	for _, b := range sbl.Broadcasts {
		if b.Count > 1 {
			rep.Resent++
		}
	}
	for _, o := range outcomes {
		bal, err := r.chain.Balance(rctx, o.Spec.Staker.String())
		if err != nil {
			return fmt.Errorf("chaos: balance of %s: %w", o.Spec.Staker, err)
		}
		obs.Balances[o.Spec.Staker.String()] = bal
		if o.Stake == nil || o.Stake.StakeAccount == "" {
			continue
		}
		acct, err := r.chain.StakeAccount(rctx, o.Stake.StakeAccount)
		switch {
		case errors.Is(err, solchain.ErrAccountNotFound):
			obs.Accounts[o.Stake.StakeAccount] = AccountView{}
		case err != nil:
			return fmt.Errorf("chaos: stake account %s: %w", o.Stake.StakeAccount, err)
		default:
			v := AccountView{Exists: true, Lamports: acct.Lamports, Staker: acct.Meta.Staker, Withdrawer: acct.Meta.Withdrawer}
			if acct.Stake != nil {
				v.Voter = acct.Stake.Delegation.Voter
			}
			obs.Accounts[o.Stake.StakeAccount] = v
		}
	}
	rep.Violations = Check(obs)

	for _, o := range outcomes {
		switch o.State {
		case StateCompleted:
			rep.Completed++
		case StateFailed:
			rep.Failed++
			rep.FailedByType[o.FailedType]++
		case StateRunning:
			rep.Running++
		default:
			rep.NotStarted++
		}
		for _, res := range []*workflows.Result{o.Stake, o.Unstake} {
			if res == nil {
				continue
			}
			for _, t := range res.Transactions {
				rep.Transactions++
				if t.Builds > 1 {
					rep.Rebuilt++
				}
				rep.MaxBuilds = max(rep.MaxBuilds, t.Builds)
			}
		}
	}
	rep.AlreadyProcessed, err = countLines(filepath.Join(r.cfg.Dir, "worker.log"), "Broadcast: already processed")
	if err != nil {
		return err
	}
	rep.WorkerStarts, rep.WorkerKills, rep.WorkerExits = r.worker.counts()
	r.mu.Lock()
	rep.TemporalRestarts, rep.Warps, rep.ForcedWarps = r.temporalRestarts, r.warps, r.forcedWarps
	r.mu.Unlock()
	return nil
}

// countLines counts the lines of a file that contain s.
func countLines(path, s string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			n++
		}
	}
	return n, sc.Err()
}

func (r *runner) close() {
	if r.client != nil {
		r.client.Close()
	}
	if r.worker != nil {
		r.worker.stop(10 * time.Second)
	}
	if r.sb != nil {
		_ = r.sb.Close()
	}
	if r.temporal != nil {
		r.temporal.stop(20 * time.Second)
	}
	for _, f := range r.logs {
		_ = f.Close()
	}
}

// sleepCtx waits d or until ctx ends; it reports whether the full wait passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
