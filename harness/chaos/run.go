package chaos

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"

	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/harness/childproc"
	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/sandbox/evmchain"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/workflows"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
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

// finalizedDepth is how far the runtime's finalized slot trails its newest one.
const finalizedDepth = 32

// expiryAdvance is how many slots the forced expiry moves the chain on at once: past the validity
// of any blockhash handed out so far and, at finalized depth, past the expiry margin counted from
// the height its confirmation began at.
const expiryAdvance = blockhashValidity + actsolana.DefaultExpiryMarginBlocks + finalizedDepth

// Limits of the forced expiry's waits: for the dropped broadcast, then for its operation to be
// confirming it with a heartbeat (Confirm heartbeats after 5 s).
const (
	dropLimit       = 30 * time.Second
	confirmingLimit = time.Minute
)

// refusalLimit bounds the wait, before a switch of the service's faults, for the refusal of a
// re-send whose first send lost its answer: the switch would forget the refused signature.
const refusalLimit = 45 * time.Second

// confirmingQuery finds the operations confirming a sent transaction.
var confirmingQuery = fmt.Sprintf(`ExecutionStatus = "Running" AND %s = %q`, workflows.SAStep.GetName(), workflows.StepConfirming)

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
	// Warps counts epoch warps; ForcedWarps the warps and forced-expiry advances (SlotAdvances)
	// made while operations were about to broadcast (no quiet moment came within quietLimit).
	Warps, ForcedWarps int
	// KillsWhileConfirming counts worker kills made while an operation was confirming a sent
	// transaction: the forced expiry's, made while its operation's Confirm activity was running,
	// and scheduled ones that found an operation at the confirming step.
	KillsWhileConfirming int
	// SlotAdvances counts the forced expiry's moves of the chain past the dropped transaction's
	// blockhash validity and expiry margin.
	SlotAdvances int

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
	// Dropped is how many broadcasts the service answered as sent without submitting them;
	// RebuiltAfterExpiry how many of those transactions never landed while their operation
	// completed with a later build of the same step that landed once (rebuilt after the proof of
	// expiry).
	Dropped, RebuiltAfterExpiry int
	// LostAnswers500 and LostAnswersDropped count broadcasts that landed while their answer was
	// lost, as a 500 or as a dropped connection (split by the fault stage in force when the
	// sandbox logged them).
	LostAnswers500, LostAnswersDropped int
	// RefusedResends is how many signatures had a re-send refused after their first send landed
	// with its answer lost; RefusedThenDone how many of those an operation that completed
	// reported, landed once.
	RefusedResends, RefusedThenDone int

	// PolygonOps and PolygonCompleted count the Polygon operations planned and completed;
	// PolygonTransactions the transactions they reported; PolygonCheckpoints the epochs the run
	// advanced for their unstakes.
	PolygonOps, PolygonCompleted, PolygonTransactions, PolygonCheckpoints int
	// PolygonDropped is how many Polygon transactions endpoint 4 answered for without forwarding
	// them; PolygonDroppedThenLanded how many of those an operation still landed, once.
	PolygonDropped, PolygonDroppedThenLanded int
	// PolygonLostAnswers is how many Polygon transactions endpoint 4 forwarded while losing its answer.
	PolygonLostAnswers int
	// CelestiaOps and CelestiaCompleted count the Celestia delegates planned and completed;
	// CelestiaTransactions the transactions on the ledger.
	CelestiaOps, CelestiaCompleted, CelestiaTransactions int
	// CheckpointOps and CheckpointsCompleted count the EigenLayer checkpoints planned and
	// completed; CheckpointTransactions the transactions they reported.
	CheckpointOps, CheckpointsCompleted, CheckpointTransactions int

	// WebhookExpected is how many events the operations' ends must have posted (completed or
	// failed); WebhookEvents how many distinct events the webhook accepted, WebhookDuplicates how
	// many accepted posts repeated one (delivery is at least once), WebhookForged how many posts
	// carried no valid signature.
	WebhookExpected, WebhookEvents, WebhookDuplicates, WebhookForged int

	// JobPeriods is how many APY periods the service serves for the data job's year; JobRows how
	// many rows the store holds after the job ran (killed once at work, JobKills) and ran again.
	JobPeriods, JobRows, JobKills int

	Violations []Violation
}

// OK is true when the run found no violation. (Paths the run did not exercise are listed by
// Unexercised.)
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
	r := &runner{cfg: cfg, log: logger, faults: &FaultCounts{}, epochTurn: make(chan struct{}), dropped: map[string]string{}}
	rep = &Report{Config: cfg, Started: time.Now(), Faults: r.faults, FailedByType: map[string]int{}}
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "stakeflow-chaos-")
		if err != nil {
			return nil, err
		}
		cfg.Dir = dir
		r.cfg.Dir = dir
		defer func() {
			if !cfg.Keep && err == nil && rep.OK() && len(rep.Unexercised()) == 0 {
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
	hooks    *hookReceiver
	// jobID, jobSince and jobKills are the data job's (see datajob.go); tokenFile the service token.
	jobID     string
	jobSince  time.Time
	jobKills  int
	tokenFile string
	// tagger is the keyset's search tagger (nil without a keyset).
	tagger *codec.Tagger
	// healthSock is the worker's health socket, held for the run (see workerProcess.health).
	healthSock *os.File
	sb         *sandbox.Sandbox
	chain      *solchain.Client
	client     client.Client
	ops        []OpSpec
	votes      []solana.PublicKey
	// serviceVote is the vote account the service delegates stakes to.
	serviceVote string
	baseline    int
	logs        []*os.File

	// startGate holds workflow starts back while a warp or the forced expiry waits for a quiet
	// moment.
	startGate sync.RWMutex
	// statusBy bounds, all together, the status queries of the operations still running when the
	// run's time is up (whereItStands); the first query sets it.
	statusOnce sync.Once
	statusBy   time.Time

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
	// forcedWarps counts warps and advances made without a quiet moment.
	forcedWarps int
	// killsConfirming counts kills made while an operation was confirming; slotAdvances the
	// forced expiry's moves of the chain.
	killsConfirming, slotAdvances int
	// dropped maps the signatures the service dropped to the operation that sent them, as far as
	// the forced expiry found them.
	dropped map[string]string
	// stage is the service's fault stage (event loop only).
	stage FaultStage
	// polygon is the EVM chain and the Polygon operations (nil when the run has none).
	polygon *polygonRun
	// celestia is the Celestia ledger and delegates (nil when the run has none).
	celestia *celestiaRun
	// polygonOutcomes are the Polygon operations' ends, in plan order.
	polygonOutcomes []PolygonOutcome
	// checkpointOutcomes are the EigenLayer checkpoints' ends, in order.
	checkpointOutcomes []CheckpointOutcome
	// warpsHeld keeps the warp loop from warping while the forced expiry runs: a warp would expire
	// the dropped transaction before the worker is killed while it is being confirmed.
	warpsHeld bool
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
	// The Temporal CLI cannot bind port 0: a picked port another process took before the server
	// bound it is refused, and the server is started on a new one. Its restarts later in the run
	// keep the port the worker was given.
	for attempt := 1; ; attempt++ {
		port, err := pickPort()
		if err != nil {
			return err
		}
		r.temporal = newTemporalServer(cfg.TemporalCLI, port, filepath.Join(cfg.Dir, "temporal.db"), tlog)
		r.log.Info("Starting the Temporal dev server", zap.String("address", r.temporal.address()))
		err = r.temporal.start(ctx)
		if err == nil {
			break
		}
		r.temporal.stop(5 * time.Second)
		if !errors.Is(err, stack.ErrPortInUse) || attempt == 5 {
			return err
		}
		r.log.Info("The picked port was taken before the server bound it; picking again", zap.Error(err))
	}

	evmRPC := ""
	if cfg.PolygonOps > 0 || cfg.CheckpointOps > 0 {
		r.log.Info("Starting the EVM chain", zap.Int("stakers", cfg.PolygonStakers), zap.Int("podOwners", cfg.CheckpointOps))
		if err := r.setUpPolygon(ctx); err != nil {
			return err
		}
		evmRPC = r.polygon.evm.Node.RPCURL()
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
		EVMRPC: evmRPC, EigenLayer: r.eigenLayer(),
		// The Celestia ledgers exist only when the run has Celestia operations.
		Celestia: celestiaOptions(cfg.CelestiaOps),
	})
	if err != nil {
		return fmt.Errorf("chaos: starting the sandbox: %w", err)
	}
	if cfg.CelestiaOps > 0 {
		if err := r.setUpCelestia(); err != nil {
			return err
		}
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
	if err := checkPlanMinimum(ctx, r.chain, r.ops); err != nil {
		return err
	}
	r.log.Info("Funding stakers", zap.Int("stakers", len(r.ops)))
	if err := r.fund(ctx, keyDir); err != nil {
		return err
	}
	ei, err := r.chain.EpochInfo(ctx)
	if err != nil {
		return fmt.Errorf("chaos: reading the epoch: %w", err)
	}
	r.epoch = ei.Epoch

	// The worker's health socket is bound here once and inherited by every worker process.
	hfile, healthAddr, err := childproc.ListenInheritable()
	if err != nil {
		return fmt.Errorf("chaos: the worker's health socket: %w", err)
	}
	r.healthSock = hfile
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
		healthAddr: healthAddr, health: hfile,
		args: []string{
			"--temporal-address", r.temporal.address(), "--namespace", "default",
			"--service-url", r.sb.URL(), "--service-token-file", tokenFile,
			"--solana-keys", keyDir, "--solana-rpc", "testnet=" + rt.URL() + ",mainnet-beta=" + rt.URL(),
			// The local runtime serves both networks: the worker expects its genesis, not the public ones.
			"--solana-genesis", "testnet=" + rt.GenesisHash().String() + ",mainnet-beta=" + rt.GenesisHash().String(),
			"--solana-slot-duration", slotDuration.String(), "--epoch-recheck", epochRecheck.String(),
			"--allowed-vote-accounts", strings.Join(votes, ","),
			"--health-fd", "3",
			"--log-format", "json", "--log-level", "info", "--stop-timeout", "5s", "--pollers", "8",
		},
	}
	if r.polygon != nil {
		r.worker.args = append(r.worker.args, r.polygon.evm.WorkerArgs()...)
	}
	if r.celestia != nil {
		r.worker.args = append(r.worker.args, r.celestiaArgs()...)
	}
	if r.hooks, err = newHookReceiver(r.cfg.Dir); err != nil {
		return err
	}
	r.worker.args = append(r.worker.args, r.hooks.args()...)
	r.worker.args = append(r.worker.args, "--store", r.jobDSN())
	if r.cfg.PayloadKeyset != "" {
		r.worker.args = append(r.worker.args, "--payload-keyset", r.cfg.PayloadKeyset)
	}
	r.tokenFile = tokenFile
	if err := r.worker.run(); err != nil {
		return err
	}
	if err := r.worker.ready(ctx, time.Minute); err != nil {
		return err
	}
	copts := client.Options{HostPort: r.temporal.address(), Logger: cli.TemporalLogger(zap.NewNop())}
	if err := (&cli.Temporal{PayloadKeyset: r.cfg.PayloadKeyset}).Encrypt(&copts); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	r.client, err = client.Dial(copts)
	if err != nil {
		return fmt.Errorf("chaos: connecting to Temporal: %w", err)
	}
	// Under a keyset the worker writes transaction IDs as search tags: search by the tag.
	if r.tagger, err = (&cli.Temporal{PayloadKeyset: r.cfg.PayloadKeyset}).Tagger(); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	r.stage = StageLostAnswer500
	r.faults.SetLostAnswerDrop(false)
	return r.sb.SetFaults(OpeningFaults(cfg.Seed))
}

// setStage switches the sandbox's faults to stage, keeping the forced faults not yet used. It
// first waits for a pending refused re-send (awaitPendingRefusal): the switch forgets it. Only
// the event loop switches stages.
func (r *runner) setStage(ctx context.Context, stage FaultStage) error {
	r.awaitPendingRefusal(ctx)
	cfg := carryCounts(ServiceFaults(r.cfg.Seed, stage), r.sb.Faults())
	if err := r.sb.SetFaults(cfg); err != nil {
		return fmt.Errorf("chaos: setting the service faults of stage %s: %w", stage, err)
	}
	r.stage = stage
	r.faults.SetLostAnswerDrop(cfg.BroadcastLostResponse.Drop)
	r.log.Info("Service faults switched", zap.Stringer("stage", stage))
	return nil
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
	var polygonWG sync.WaitGroup
	if r.polygon != nil {
		bgWG.Add(1)
		go func() { defer bgWG.Done(); r.checkpointLoop(bg, 2*time.Second) }()
		polygonWG.Add(1)
		go func() { defer polygonWG.Done(); r.polygonOutcomes = r.runPolygonOps(octx) }()
		if r.cfg.CheckpointOps > 0 {
			polygonWG.Add(1)
			go func() { defer polygonWG.Done(); r.checkpointOutcomes = r.runCheckpoints(octx) }()
		}
	}
	if r.celestia != nil {
		polygonWG.Go(func() { r.runCelestiaOps(octx) })
	}

	r.startDataJob(octx)
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
	polygonWG.Wait()
	stopBG()
	bgWG.Wait()
	return outcomes
}

// runOp runs one planned operation: the stake and, for a chain, the unstake after the epoch turned.
func (r *runner) runOp(ctx context.Context, op OpSpec) OpOutcome {
	out := OpOutcome{Spec: op}
	in := wfsolana.StakeInput{Network: network, Staker: op.Staker.String(), Lamports: op.Lamports}
	if op.AskVote {
		in.VoteAccount = r.serviceVote
		out.ExpectedVote = in.VoteAccount
	}
	if !r.start(ctx, wfsolana.Module, op.StakeID, wfsolana.StakeSummary(in), wfsolana.StakeWorkflow, in) {
		out.State = StateNotStarted
		return out
	}
	var res wfsolana.Result
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
	un := wfsolana.UnstakeInput{Network: network, Staker: op.Staker.String(), StakeAccount: res.StakeAccount, Lamports: op.Lamports}
	r.mu.Lock()
	r.unstaking++
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.unstaking--
		r.mu.Unlock()
	}()
	if !r.start(ctx, wfsolana.Module, op.UnstakeID, wfsolana.UnstakeSummary(un), wfsolana.UnstakeWorkflow, un) {
		out.State = StateNotStarted
		return out
	}
	var ures wfsolana.Result
	if !r.await(ctx, op.UnstakeID, &ures, &out) {
		return out
	}
	out.Unstake = &ures
	out.State = StateCompleted
	return out
}

// start starts a workflow on its module's queue, retrying while Temporal cannot be reached. A start refused because
// the ID is taken means an earlier attempt went through (the IDs are this run's own).
func (r *runner) start(ctx context.Context, module, id, summary string, wf, in any) bool {
	for {
		// Starts wait while a warp waits for a quiet moment.
		r.startGate.RLock()
		_, err := r.client.ExecuteWorkflow(ctx, starter.StartOptions(id, summary, workflows.TaskQueueOf(workflows.DefaultTaskQueuePrefix, module)), wf, in)
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
func (r *runner) await(ctx context.Context, id string, res *wfsolana.Result, out *OpOutcome) bool {
	return r.awaitResult(ctx, id, res, &out.State, &out.FailedType, &out.Failure)
}

// awaitResult is await for any workflow's result: state, failedType and failure take the
// outcome when it is not a completion.
func (r *runner) awaitResult(ctx context.Context, id string, res any, state, failedType, failure *string) bool {
	for {
		err := r.client.GetWorkflow(ctx, id, "").Get(ctx, res)
		if err == nil {
			return true
		}
		var wfErr *temporal.WorkflowExecutionError
		if errors.As(err, &wfErr) {
			*state = StateFailed
			*failedType = failureType(err)
			*failure = fmt.Sprintf("%s: %v", id, err)
			r.log.Warn("Operation failed", zap.String("operationId", id), zap.Error(err))
			return false
		}
		if ctx.Err() != nil || !sleepCtx(ctx, time.Second) {
			*state = StateRunning
			*failure = r.whereItStands(id)
			return false
		}
		r.log.Debug("Waiting for a result failed; retrying", zap.String("operationId", id), zap.Error(err))
	}
}

// whereItStands is the status of an operation still running when the run's time is up: its step
// and since when, its attempts and any stall, so that a report says where it waited.
// A query waits for a worker to answer it: each waits 5 s at most, and all of them statusBudget,
// so that a run whose worker answers nothing still writes its report before the test's deadline.
func (r *runner) whereItStands(id string) string {
	r.statusOnce.Do(func() { r.statusBy = time.Now().Add(statusBudget) })
	left := min(5*time.Second, time.Until(r.statusBy))
	if left <= 0 {
		return "(its status was not asked: the status queries of the operations left running had taken " + statusBudget.String() + ")"
	}
	qctx, cancel := context.WithTimeout(context.Background(), left)
	defer cancel()
	v, err := r.client.QueryWorkflow(qctx, id, "", workflows.QueryStatus)
	if err != nil {
		return fmt.Sprintf("(its status could not be read: %v)", err)
	}
	var st workflows.Status
	if err := v.Get(&st); err != nil {
		return fmt.Sprintf("(its status could not be read: %v)", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "step %s since %s (started %s)", st.Step, st.StepSince.Format(time.RFC3339), st.StartedAt.Format(time.RFC3339))
	for _, at := range st.Attempts {
		fmt.Fprintf(&b, "; %s build %d %s %s", at.Kind, at.Build, at.TxID, at.Outcome)
	}
	if st.Stall != nil {
		fmt.Fprintf(&b, "; stalled since %s: %s", st.Stall.Since.Format(time.RFC3339), st.Stall.LastError)
	}
	return b.String()
}

// statusBudget is how long whereItStands's queries may take together.
const statusBudget = time.Minute

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
// active or an unstake runs (its wait for deactivation ends only at an epoch turn), unless the
// forced expiry holds warps.
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
		needed := (r.awaitingTurn > 0 || r.unstaking > 0) && !r.warpsHeld
		r.mu.Unlock()
		if !needed {
			continue
		}
		var err error
		warped := false
		quiet := r.whenQuiet(ctx, func() {
			r.mu.Lock()
			held := r.warpsHeld
			r.mu.Unlock()
			if !held {
				warped, err = true, r.sb.Runtime().WarpEpochs(ctx, 1)
			}
		})
		if !warped {
			continue
		}
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

// whenQuiet runs f, which expires every outstanding blockhash, at a quiet moment: it holds new
// starts back and waits until no operation is between starting and broadcasting, for at most
// quietLimit. It reports whether it found such a moment.
func (r *runner) whenQuiet(ctx context.Context, f func()) bool {
	r.startGate.Lock()
	defer r.startGate.Unlock()
	quiet := r.awaitQuiet(ctx)
	f()
	return quiet
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
		case EventForcedExpiry:
			r.forceExpiry(ctx, ev)
		case EventKillWorker:
			confirming := r.countConfirming(ctx)
			r.log.Info("Killing the worker (SIGKILL)", zap.Duration("downFor", ev.Pause), zap.Int("confirming", confirming))
			starts, _, _ := r.worker.counts()
			r.worker.kill(ev.Pause)
			if confirming > 0 {
				r.mu.Lock()
				r.killsConfirming++
				r.mu.Unlock()
			}
			// The next fault waits for the new worker to be up and at work for a moment.
			if err := r.worker.awaitRestart(ctx, starts, 2*time.Minute); err != nil {
				r.log.Warn("The worker did not come back", zap.Error(err))
			}
			sleepCtx(ctx, 2*time.Second)
		case EventRestartTemporal:
			r.log.Info("Stopping the Temporal dev server; killing the worker while it is down", zap.Duration("downFor", ev.Pause))
			r.temporal.stop(20 * time.Second)
			// A worker started while Temporal is down exits once it finds Temporal unreachable
			// (after loading its keys and proving its networks, which takes longer on a loaded
			// machine); the supervisor starts it again until Temporal is back. Temporal stays down
			// for the pause and until a worker has exited on its own.
			_, _, exits := r.worker.counts()
			r.worker.kill(100 * time.Millisecond)
			sleepCtx(ctx, ev.Pause)
			if err := waitFor(ctx, 2*time.Minute, "a worker started while Temporal is down to exit on its own", nil, func(context.Context) error {
				if _, _, now := r.worker.counts(); now <= exits {
					return errors.New("still running")
				}
				return nil
			}); err != nil {
				r.log.Warn("No worker exited while Temporal was down", zap.Error(err))
			}
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
			if err := r.setStage(ctx, StageLostAnswerDrop); err != nil {
				r.log.Warn("Switching lost responses to dropped connections failed", zap.Error(err))
			}
		}
	}
}

// forceExpiry makes an operation rebuild a transaction after proving it expired, and kills the
// worker while that operation is confirming (ev.KillWorker). It switches the faults to
// StageDropBroadcast, waits for the broadcast the service drops, finds the operation confirming
// the dropped transaction and waits until its Confirm activity runs and has heartbeated (so that a
// retry resumes from the height its confirmation began at); epoch warps are held meanwhile, for
// a warp would expire the transaction first. Then, with new starts held until no
// operation is between starting and broadcasting (a quiet moment, as for a warp), it kills the
// worker and moves the chain expiryAdvance slots on, and switches the faults back. The Confirm
// activity lost with the worker is retried on the next worker once its heartbeat times out,
// proves the transaction expired, and the operation builds it again. Whatever fails is logged;
// the report then shows the path missing.
func (r *runner) forceExpiry(ctx context.Context, ev Event) {
	r.holdWarps(true)
	defer r.holdWarps(false)
	prev := r.stage
	if err := r.setStage(ctx, StageDropBroadcast); err != nil {
		r.log.Warn("Forced expiry: switching to a dropped broadcast failed", zap.Error(err))
		return
	}
	defer func() {
		if err := r.setStage(ctx, prev); err != nil {
			r.log.Warn("Forced expiry: switching the faults back failed", zap.Error(err))
		}
	}()
	sig, err := r.awaitDropped(ctx)
	if err != nil {
		r.log.Warn("Forced expiry: no broadcast was dropped", zap.Error(err))
		return
	}
	id, err := r.awaitConfirming(ctx, sig)
	if err != nil {
		r.log.Warn("Forced expiry: the dropped transaction's operation was not found confirming it", zap.String("txSig", sig), zap.Error(err))
		return
	}
	r.mu.Lock()
	r.dropped[sig] = id
	r.mu.Unlock()
	r.log.Info("Forced expiry: operation confirming a dropped transaction", zap.String("operationId", id), zap.String("txSig", sig))

	var starts int
	var advErr error
	quiet := r.whenQuiet(ctx, func() {
		if ev.KillWorker {
			confirming := r.confirmRunning(ctx, id) == nil
			r.log.Info("Killing the worker (SIGKILL) while an operation is confirming", zap.String("operationId", id),
				zap.Bool("confirmRunning", confirming), zap.Duration("downFor", ev.Pause))
			starts, _, _ = r.worker.counts()
			r.worker.kill(ev.Pause)
			if confirming {
				r.mu.Lock()
				r.killsConfirming++
				r.mu.Unlock()
			}
		}
		advErr = r.sb.Runtime().AdvanceSlots(ctx, expiryAdvance)
	})
	r.holdWarps(false)
	if advErr != nil {
		r.log.Warn("Forced expiry: advancing the chain failed", zap.Error(advErr))
	} else {
		r.mu.Lock()
		r.slotAdvances++
		if !quiet {
			r.forcedWarps++
		}
		r.mu.Unlock()
		r.log.Info("Forced expiry: chain advanced past the blockhash validity and the expiry margin", zap.Uint64("slots", expiryAdvance), zap.Bool("quiet", quiet))
	}
	if ev.KillWorker {
		if err := r.worker.awaitRestart(ctx, starts, 2*time.Minute); err != nil {
			r.log.Warn("The worker did not come back", zap.Error(err))
		}
		sleepCtx(ctx, 2*time.Second)
	}
}

// holdWarps keeps the warp loop from warping (held) or lets it warp again. Holding waits for a
// warp under way to be done.
func (r *runner) holdWarps(held bool) {
	r.mu.Lock()
	r.warpsHeld = held
	r.mu.Unlock()
	if held {
		// A warp happens with the start gate held and checks warpsHeld under it.
		r.startGate.Lock()
		//lint:ignore SA2001 an empty critical section: a barrier.
		r.startGate.Unlock()
	}
}

// awaitPendingRefusal waits, for at most refusalLimit, until the re-send of the broadcast that
// landed with its answer lost under BroadcastLoseThenRefuse (armed once, by OpeningFaults) has
// been refused. It returns at once when no broadcast has taken that fault yet (a switch carries it
// over) or the refusal was seen.
func (r *runner) awaitPendingRefusal(ctx context.Context) {
	if r.sb.Faults().BroadcastLoseThenRefuse.Next > 0 || r.faults.Get(sandbox.EndpointBroadcast, FaultRefusedResend) > 0 {
		return
	}
	err := waitFor(ctx, refusalLimit, "the refusal of a re-send after a lost answer", nil, func(context.Context) error {
		if r.faults.Get(sandbox.EndpointBroadcast, FaultRefusedResend) == 0 {
			return errors.New("not refused yet")
		}
		return nil
	})
	if err != nil {
		r.log.Warn("Switching the faults before the re-send after a lost answer was refused", zap.Error(err))
	}
}

// awaitDropped waits for the sandbox to drop a broadcast and returns its signature.
func (r *runner) awaitDropped(ctx context.Context) (string, error) {
	var sig string
	err := waitFor(ctx, dropLimit, "a dropped broadcast", nil, func(context.Context) error {
		sigs := r.faults.Signatures(FaultDropped)
		if len(sigs) == 0 {
			return errors.New("none yet")
		}
		sig = sigs[0]
		return nil
	})
	return sig, err
}

// awaitConfirming finds the operation that sent sig, and waits until it is confirming it with
// its Confirm activity running and heartbeating.
func (r *runner) awaitConfirming(ctx context.Context, sig string) (string, error) {
	var id string
	err := waitFor(ctx, confirmingLimit, "the operation confirming "+sig, nil, func(ctx context.Context) error {
		if id == "" {
			found, err := r.operationOf(ctx, sig)
			if err != nil {
				return err
			}
			id = found
		}
		return r.confirmRunning(ctx, id)
	})
	return id, err
}

// operationOf finds the operation (workflow ID) whose transactions include sig.
func (r *runner) operationOf(ctx context.Context, sig string) (string, error) {
	value := sig
	if r.tagger != nil {
		tag, ok := r.tagger.Tag(sig)
		if !ok {
			return "", errors.New("chaos: the payload keyset has no search key: transactions cannot be found")
		}
		value = tag
	}
	resp, err := r.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: "default", Query: fmt.Sprintf("%s = %q", workflows.SASignatures.GetName(), value),
	})
	if err != nil {
		return "", err
	}
	if n := len(resp.GetExecutions()); n != 1 {
		return "", fmt.Errorf("%d operations list signature %s", n, sig)
	}
	return resp.GetExecutions()[0].GetExecution().GetWorkflowId(), nil
}

// confirmRunning returns nil when the operation's Confirm activity is running on a worker and has
// heartbeated.
func (r *runner) confirmRunning(ctx context.Context, id string) error {
	desc, err := r.client.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return err
	}
	for _, pa := range desc.GetPendingActivities() {
		if pa.GetActivityType().GetName() != "Confirm" {
			continue
		}
		if pa.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED {
			return fmt.Errorf("its Confirm activity is %s", pa.GetState())
		}
		if pa.GetHeartbeatDetails() == nil {
			return errors.New("its Confirm activity has not heartbeated yet")
		}
		return nil
	}
	return errors.New("no Confirm activity pending")
}

// countConfirming counts the operations at the confirming step (0 when visibility does not answer).
func (r *runner) countConfirming(ctx context.Context) int {
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := r.client.CountWorkflow(qctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: "default", Query: confirmingQuery})
	if err != nil {
		return 0
	}
	return int(resp.GetCount())
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
	obs.Refused = r.faults.Signatures(FaultRefusedResend)
	obs.Dropped = map[string]string{}
	r.mu.Lock()
	known := maps.Clone(r.dropped)
	r.mu.Unlock()
	for _, sig := range r.faults.Signatures(FaultDropped) {
		id, ok := known[sig]
		if !ok {
			if id, err = r.operationOf(rctx, sig); err != nil {
				r.log.Warn("The operation of a dropped transaction was not found", zap.String("txSig", sig), zap.Error(err))
			}
		}
		obs.Dropped[sig] = id
	}
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
	rec := CountRecoveries(obs)
	rep.RebuiltAfterExpiry, rep.RefusedThenDone = rec.RebuiltAfterExpiry, rec.RefusedThenDone
	rep.Dropped, rep.RefusedResends = len(obs.Dropped), len(obs.Refused)
	rep.LostAnswers500 = r.faults.Get(sandbox.EndpointBroadcast, FaultLostAnswer500)
	rep.LostAnswersDropped = r.faults.Get(sandbox.EndpointBroadcast, FaultLostAnswerDrop)

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
		for _, res := range []*wfsolana.Result{o.Stake, o.Unstake} {
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
	if r.polygon != nil {
		if err := r.finishPolygon(rctx, rep); err != nil {
			return err
		}
		if err := r.finishCheckpoints(rctx, rep); err != nil {
			return err
		}
	}
	if r.celestia != nil {
		r.finishCelestia(rep)
	}
	r.hooks.checkEvents(rctx, rep, append(expectedEvents(outcomes, r.polygonOutcomes), checkpointEvents(r.checkpointOutcomes)...), 3*time.Minute)
	r.checkDataJob(rctx, rep, r.tokenFile)
	rep.AlreadyProcessed, err = countLines(filepath.Join(r.cfg.Dir, "worker.log"), "Broadcast: already processed")
	if err != nil {
		return err
	}
	rep.WorkerStarts, rep.WorkerKills, rep.WorkerExits = r.worker.counts()
	r.mu.Lock()
	rep.TemporalRestarts, rep.Warps, rep.ForcedWarps = r.temporalRestarts, r.warps, r.forcedWarps
	rep.KillsWhileConfirming, rep.SlotAdvances = r.killsConfirming, r.slotAdvances
	r.mu.Unlock()
	return nil
}

// countLines counts the lines of a file that contain s.
func countLines(path, s string) (int, error) {
	n := 0
	err := eachLine(path, func(line string) {
		if strings.Contains(line, s) {
			n++
		}
	})
	return n, err
}

// eachLine calls fn with each line of the file at path (a worker log's lines can be long).
func eachLine(path string, fn func(string)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		fn(sc.Text())
	}
	return sc.Err()
}

// WriteOpLogs writes, for each operation a violation names, the last max lines of the worker's log
// (worker.log under Dir, every worker process of the run) that mention it: what a failed run's
// reader needs when Dir is gone with the test's temporary directory.
func (r *Report) WriteOpLogs(w io.Writer, max int) error {
	var ops []string
	lines := map[string][]string{}
	for _, v := range r.Violations {
		if _, named := lines[v.Op]; v.Op != "" && !named {
			ops = append(ops, v.Op)
			lines[v.Op] = []string{}
		}
	}
	if len(ops) == 0 {
		return nil
	}
	err := eachLine(filepath.Join(r.Dir, "worker.log"), func(line string) {
		for _, op := range ops {
			if strings.Contains(line, op) {
				lines[op] = append(lines[op], line)
			}
		}
	})
	if err != nil {
		return err
	}
	for _, op := range ops {
		shown := lines[op]
		if len(shown) > max {
			shown = shown[len(shown)-max:]
		}
		if _, err := fmt.Fprintf(w, "worker log lines of %s (%d shown):\n%s\n", op, len(shown), strings.Join(shown, "\n")); err != nil {
			return err
		}
	}
	return nil
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
	if r.polygon != nil && r.polygon.evm != nil {
		r.polygon.evm.Close()
	}
	if r.temporal != nil {
		r.temporal.stop(20 * time.Second)
	}
	if r.healthSock != nil {
		_ = r.healthSock.Close()
	}
	if r.hooks != nil {
		r.hooks.close()
	}
	for _, f := range r.logs {
		_ = f.Close()
	}
}

// eigenLayer is the run's EigenLayer stand-ins (nil without an EVM chain).
func (r *runner) eigenLayer() *evmchain.EigenLayer {
	if r.polygon == nil || r.polygon.evm == nil {
		return nil
	}
	return r.polygon.evm.EigenLayer
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
