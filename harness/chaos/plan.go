package chaos

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/gagliardetto/solana-go"

	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/harness/sandbox"
)

// Kind is the shape of one planned operation.
type Kind string

// Operation shapes.
const (
	// KindStake is a StakeWorkflow alone: the stake account stays.
	KindStake Kind = "stake"
	// KindChain is a StakeWorkflow, an epoch turn, then an UnstakeWorkflow (deactivate, wait for
	// the epoch to pass, withdraw): the lamports come back to the staker.
	KindChain Kind = "stake-unstake-withdraw"
)

// sol is one SOL in lamports.
const sol = uint64(1_000_000_000)

// stakeAccountRent is the rent-exempt reserve of a stake account: its 200 bytes of data plus the
// runtime's 128 bytes of account overhead, at the default rent of 3,480 lamports a byte-year and
// its two-year exemption threshold (solana-program's rent.rs): (128+200) * 3,480 * 2.
const stakeAccountRent = uint64(2_282_880)

// minStake is the least a planned stake is: the reserve plus the stake program's minimum
// delegation of 1 SOL (what the runtime answers to getStakeMinimumDelegation, every feature being
// on). The worker refuses a smaller stake before signing, rightly; the run checks this against the
// runtime before it starts (checkPlanMinimum).
const minStake = stakeAccountRent + sol

// FeePerSignature is what the runtime charges per transaction signature, in lamports.
const FeePerSignature = uint64(5000)

// fundingMargin is what each staker gets on top of its stake, for fees.
const fundingMargin = 10_000_000

// minimumReader reads what the chain asks of a new stake account.
type minimumReader interface {
	RentExemptMinimum(ctx context.Context, size uint64) (uint64, error)
	MinimumDelegation(ctx context.Context) (uint64, error)
}

// checkPlanMinimum refuses, before anything is funded, a plan with a stake under the chain's
// minimum as the runtime answers it: the stake account's rent-exempt reserve plus the minimum
// delegation. The worker refuses such a stake before signing, and the run would report the
// refusal as a violation of its own making.
func checkPlanMinimum(ctx context.Context, c minimumReader, ops []OpSpec) error {
	rent, err := c.RentExemptMinimum(ctx, solchain.StakeAccountSize)
	if err != nil {
		return fmt.Errorf("chaos: reading a stake account's rent-exempt reserve: %w", err)
	}
	delegation, err := c.MinimumDelegation(ctx)
	if err != nil {
		return fmt.Errorf("chaos: reading the minimum delegation: %w", err)
	}
	least := rent + delegation
	for _, op := range ops {
		if op.Lamports < least {
			return fmt.Errorf("chaos: %s would stake %d lamports, under the runtime's minimum of %d (rent-exempt reserve %d plus minimum delegation %d); the plan draws from %d",
				op.StakeID, op.Lamports, least, rent, delegation, minStake)
		}
	}
	return nil
}

// OpSpec is one planned operation: everything about it is derived from the seed and its index.
type OpSpec struct {
	Index int
	Kind  Kind
	// StakeID is the stake's operation ID; UnstakeID the unstake's (KindChain only).
	StakeID   string
	UnstakeID string
	// Staker is the operation's own staker; its key derives from the seed and the index.
	Staker solana.PublicKey
	key    solana.PrivateKey
	// Lamports is the stake amount; Funding what the staker is given before the run.
	Lamports uint64
	Funding  uint64
	// AskVote names the service's own validator in the stake; otherwise the service chooses and
	// the worker checks its choice against the allow-list. (The build endpoint takes no vote
	// account: asking for another validator is refused before signing, by design.)
	AskVote bool
}

// PlanOps derives n operations from seed. About chainShare of them are stake -> unstake ->
// withdraw chains, the rest stakes alone. The same seed and n give the same plan.
func PlanOps(seed uint64, n int, chainShare float64) []OpSpec {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed_c4a0))
	ops := make([]OpSpec, n)
	for i := range ops {
		op := OpSpec{Index: i, Kind: KindStake}
		if rng.Float64() < chainShare {
			op.Kind = KindChain
		}
		op.StakeID = fmt.Sprintf("chaos-%d-%04d-stake", seed, i)
		if op.Kind == KindChain {
			op.UnstakeID = fmt.Sprintf("chaos-%d-%04d-unstake", seed, i)
		}
		op.Lamports = minStake + rng.Uint64N(4*sol)
		op.Funding = op.Lamports + fundingMargin
		op.AskVote = rng.IntN(2) == 0
		op.key = stakerKey(seed, i)
		op.Staker = op.key.PublicKey()
		ops[i] = op
	}
	return ops
}

// stakerKey derives the staker key of operation i from the seed, so a rerun uses the same
// addresses. These keys guard lamports on a throwaway local chain only.
func stakerKey(seed uint64, i int) solana.PrivateKey {
	s := sha256.Sum256(fmt.Appendf(nil, "stakeflow-chaos-staker:%d:%d", seed, i))
	return solana.PrivateKey(ed25519.NewKeyFromSeed(s[:]))
}

// EventKind is a fault the run applies to a process.
type EventKind string

// Process faults.
const (
	// EventForcedExpiry forces the rebuild after a proven expiry, first thing in the run (while
	// stakes still broadcast and no chain waits for an epoch turn): the sandbox answers the next
	// broadcast as sent without submitting it (StageDropBroadcast, then back to the stage before);
	// once its operation is confirming it (its Confirm activity running and heartbeating), new
	// starts are held until no operation is between starting and broadcasting, the worker is
	// killed with SIGKILL when KillWorker is set (a kill while an operation is confirming) and
	// started again after Pause, and the chain is advanced past the transaction's blockhash
	// validity and the expiry margin, so that the operation proves it expired and builds it again.
	EventForcedExpiry EventKind = "forced-expiry"
	// EventKillWorker sends SIGKILL to the worker; it is started again after Pause.
	EventKillWorker EventKind = "kill-worker"
	// EventRestartTemporal stops the Temporal dev server; it is started again on the same
	// database file after Pause.
	EventRestartTemporal EventKind = "restart-temporal"
	// EventLostResponseDrop switches the service's faults to StageLostAnswerDrop (lost broadcast
	// answers become dropped connections).
	EventLostResponseDrop EventKind = "lost-response-drop"
)

// Event is one scheduled fault: it fires once Progress of the operations are done (or their
// chains have reached the unstake), after Delay.
type Event struct {
	Kind     EventKind
	Progress float64
	Delay    time.Duration
	Pause    time.Duration
	// KillWorker: EventForcedExpiry kills the worker while the operation is confirming.
	KillWorker bool
}

// ScheduleEvents derives the process faults from seed. First, at once, the forced expiry; with
// kills of at least one it makes the first kill, while an operation is confirming. The other
// kills-1 worker kills and, when restartTemporal is set, one Temporal restart, come at random
// points between 10% and 75% of the run (a quarter of the operations are still to finish after
// the last); the lost answers turn to dropped connections at half of the run.
func ScheduleEvents(seed uint64, kills int, restartTemporal bool) []Event {
	rng := rand.New(rand.NewPCG(seed, seed^0xe7e7_0001))
	var evs []Event
	for i := 0; i < kills; i++ {
		evs = append(evs, Event{
			Kind: EventKillWorker, Progress: 0.10 + 0.65*rng.Float64(),
			Delay: time.Duration(rng.IntN(3000)) * time.Millisecond,
			Pause: time.Duration(200+rng.IntN(2800)) * time.Millisecond,
		})
	}
	forced := Event{Kind: EventForcedExpiry}
	if kills > 0 {
		// The first kill is the forced expiry's: its pause, not its point of the run.
		forced.KillWorker, forced.Pause = true, evs[0].Pause
		evs = evs[1:]
	}
	if restartTemporal {
		evs = append(evs, Event{
			Kind: EventRestartTemporal, Progress: 0.25 + 0.35*rng.Float64(),
			Delay: time.Duration(rng.IntN(3000)) * time.Millisecond,
			Pause: time.Duration(1000+rng.IntN(3000)) * time.Millisecond,
		})
	}
	evs = append(evs, Event{Kind: EventLostResponseDrop, Progress: 0.5})
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Progress < evs[j].Progress })
	return append([]Event{forced}, evs...)
}

// FaultStage is a phase of the service's faults during a run. Every stage has the same seeded
// rates of endpoint faults; what changes is how broadcasts misbehave.
type FaultStage int

// Fault stages. A run opens in StageLostAnswer500 (OpeningFaults), turns at once to
// StageDropBroadcast for the forced expiry and back once it is done, and to StageLostAnswerDrop
// at half of the run.
const (
	// StageLostAnswer500: broadcasts land while their answer is lost as a 500, the next one
	// certainly, the following ones at the seeded rate.
	StageLostAnswer500 FaultStage = iota
	// StageDropBroadcast: the next broadcast to reach the service is answered as sent without
	// being submitted, and no answer is lost (a lost answer drawn for that very broadcast would
	// hide the drop).
	StageDropBroadcast
	// StageLostAnswerDrop: as StageLostAnswer500 with dropped connections.
	StageLostAnswerDrop
)

func (s FaultStage) String() string {
	switch s {
	case StageLostAnswer500:
		return "lost-answer-500"
	case StageDropBroadcast:
		return "drop-broadcast"
	case StageLostAnswerDrop:
		return "lost-answer-drop"
	}
	return fmt.Sprintf("FaultStage(%d)", int(s))
}

// faultEndpoints are the endpoints a run injects faults into.
var faultEndpoints = []string{sandbox.EndpointStake, sandbox.EndpointUnstake, sandbox.EndpointWithdraw,
	sandbox.EndpointBroadcast, sandbox.EndpointValidatorStatus, sandbox.EndpointPolygonSend}

// buildEndpoints are the endpoints that build transactions.
var buildEndpoints = []string{sandbox.EndpointStake, sandbox.EndpointUnstake, sandbox.EndpointWithdraw}

// ServiceFaults is the sandbox's fault configuration for a stage of a run: on the build,
// broadcast and validator-status endpoints, 429s with Retry-After, 500s, dropped connections and
// added latency; broadcasts as the stage says. Rates derive from seed within fixed bands, the same
// in every stage; the fault RNG is seeded from seed and the stage.
func ServiceFaults(seed uint64, stage FaultStage) sandbox.FaultConfig {
	rng := rand.New(rand.NewPCG(seed, seed^0xfa17_0002))
	band := func(lo, hi float64) float64 { return lo + (hi-lo)*rng.Float64() }
	cfg := sandbox.FaultConfig{Seed: seed + uint64(stage), Endpoints: map[string]sandbox.EndpointFaults{}}
	for _, ep := range faultEndpoints {
		cfg.Endpoints[ep] = sandbox.EndpointFaults{
			Latency:           sandbox.Duration(time.Duration(10+rng.IntN(90)) * time.Millisecond),
			Rate429:           band(0.04, 0.08),
			Rate500:           band(0.04, 0.08),
			RateDrop:          band(0.02, 0.05),
			RetryAfterSeconds: 1,
		}
	}
	lost := band(0.08, 0.15)
	cfg.PolygonSendLostResponse = sandbox.LostResponse{Rate: lost, Drop: stage == StageLostAnswerDrop}
	switch stage {
	case StageLostAnswer500:
		cfg.BroadcastLostResponse = sandbox.LostResponse{Next: 1, Rate: lost}
	case StageDropBroadcast:
		cfg.BroadcastDropped = sandbox.LostResponse{Next: 1}
	case StageLostAnswerDrop:
		cfg.BroadcastLostResponse = sandbox.LostResponse{Next: 1, Rate: lost, Drop: true}
		cfg.BroadcastLoseThenRefuse.Drop = true
	}
	return cfg
}

// OpeningFaults is the sandbox's fault configuration at the start of a run: StageLostAnswer500,
// with the first 429, 500 and dropped connection of every endpoint forced, and the first
// broadcast to land without losing its answer otherwise made to lose it and have its re-send
// refused (BroadcastLoseThenRefuse). Stage switches carry over what has not been used yet.
func OpeningFaults(seed uint64) sandbox.FaultConfig {
	cfg := ServiceFaults(seed, StageLostAnswer500)
	for ep, f := range cfg.Endpoints {
		f.Next429, f.Next500, f.NextDrop = 1, 1, 1
		cfg.Endpoints[ep] = f
	}
	cfg.BroadcastLoseThenRefuse.Next = 1
	// The first Polygon transaction is answered for and never forwarded; the next forwarded with
	// its answer lost.
	cfg.PolygonSendDropped.Next = 1
	cfg.PolygonSendLostResponse.Next = 1
	return cfg
}

// carryCounts returns next with the forced faults ("the next N requests") that cur has not used
// yet added to its own, so that a stage switch does not cancel them: the endpoints' and the
// refused re-send's.
func carryCounts(next, cur sandbox.FaultConfig) sandbox.FaultConfig {
	next.BroadcastLoseThenRefuse.Next += cur.BroadcastLoseThenRefuse.Next
	next.PolygonSendDropped.Next += cur.PolygonSendDropped.Next
	next.PolygonSendLostResponse.Next += cur.PolygonSendLostResponse.Next
	for ep, f := range next.Endpoints {
		c := cur.Endpoints[ep]
		f.Next429 += c.Next429
		f.Next500 += c.Next500
		f.NextDrop += c.NextDrop
		next.Endpoints[ep] = f
	}
	return next
}

// Config is a chaos run's settings.
type Config struct {
	// Ops is how many operations run; Concurrency how many at once.
	Ops         int
	Concurrency int
	// ChainShare is the fraction of operations that are stake -> unstake -> withdraw chains.
	ChainShare float64
	// WorkerKills is how many times the worker is killed with SIGKILL and started again (besides
	// the kill while Temporal is down), at seeded points: the first while an operation is
	// confirming a transaction the service dropped (EventForcedExpiry, at the start of the run).
	WorkerKills int
	// RestartTemporal stops the Temporal dev server once and starts it again on its database.
	RestartTemporal bool
	// Seed derives the operations, the stakers, the fault rates and the process-fault schedule.
	Seed uint64
	// Timeout bounds the whole run.
	Timeout time.Duration
	// WarpEvery is the least time between two epoch warps.
	WarpEvery time.Duration
	// PolygonOps is how many Polygon operations (delegates, and delegate -> unstake -> claim
	// chains) run beside the Solana ones on a geth --dev chain, from PolygonStakers addresses
	// (default 2); 0 runs none.
	PolygonOps, PolygonStakers int
	// CelestiaOps is how many Celestia delegates (from three delegators, on the sandbox's
	// Celestia ledger) run beside the Solana ones; 0 runs none.
	CelestiaOps int
	// CheckpointOps is how many EigenLayer checkpoints (one per pod, each its own owner, on the
	// same chain) run beside them; 0 runs none.
	CheckpointOps int
	// TemporalCLI is the pinned Temporal CLI binary (scripts/tools.sh temporal); required.
	TemporalCLI string
	// PayloadKeyset, when set, is the keyset file of the payload codec (codec.LoadKeyset): the
	// worker processes (--payload-keyset) and the run's client encrypt every payload and failure
	// they write to Temporal, as a production deployment does.
	PayloadKeyset string
	// WorkerBin is a built cmd/worker binary; empty builds one with `go build` into Dir.
	WorkerBin string
	// Dir holds the run's files (database, keys, logs); empty uses a new temporary directory,
	// removed afterwards unless Keep is set.
	Dir  string
	Keep bool
}

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	if c.Ops == 0 {
		c.Ops = 200
	}
	if c.Concurrency == 0 {
		c.Concurrency = 40
	}
	if c.ChainShare == 0 {
		c.ChainShare = 0.4
	}
	if c.Timeout == 0 {
		c.Timeout = 30 * time.Minute
	}
	if c.WarpEvery == 0 {
		c.WarpEvery = 5 * time.Second
	}
	if c.PolygonOps > 0 && c.PolygonStakers == 0 {
		c.PolygonStakers = 2
	}
	return c
}

// Validate names every setting that is wrong.
func (c Config) Validate() error {
	var errs []error
	if c.Ops < 1 {
		errs = append(errs, fmt.Errorf("ops %d: want at least 1", c.Ops))
	}
	if c.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("concurrency %d: want at least 1", c.Concurrency))
	}
	if c.ChainShare < 0 || c.ChainShare > 1 {
		errs = append(errs, fmt.Errorf("chain share %v: want 0..1", c.ChainShare))
	}
	if c.WorkerKills < 0 {
		errs = append(errs, fmt.Errorf("worker kills %d: want 0 or more", c.WorkerKills))
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout %s: want a positive duration", c.Timeout))
	}
	if c.WarpEvery <= 0 {
		errs = append(errs, fmt.Errorf("warp interval %s: want a positive duration", c.WarpEvery))
	}
	if c.CelestiaOps < 0 {
		return errors.New("chaos: CelestiaOps must not be negative")
	}
	if c.PolygonOps < 0 || c.PolygonStakers < 0 || (c.PolygonOps > 0 && c.PolygonStakers < 1) {
		errs = append(errs, fmt.Errorf("polygon ops %d from %d stakers: want 0 or more operations from at least one staker", c.PolygonOps, c.PolygonStakers))
	}
	if c.CheckpointOps < 0 {
		errs = append(errs, fmt.Errorf("checkpoint ops %d: want 0 or more", c.CheckpointOps))
	}
	if c.TemporalCLI == "" {
		errs = append(errs, errors.New("the Temporal CLI path is required (scripts/tools.sh temporal)"))
	}
	return errors.Join(errs...)
}
