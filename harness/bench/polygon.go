package bench

import (
	"context"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/stakeflow/stakeflow/activities"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/lease"
	"github.com/stakeflow/stakeflow/workflows"
	wfevm "github.com/stakeflow/stakeflow/workflows/evm"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
)

// BarePolygon delegates POL as PolygonDelegateWorkflow does, with no Temporal server: it calls the
// worker's own EVM activities in-process, in the workflow's order (the delegation read, the
// address's pending nonce, then for the approve when the allowance is short and for buyVoucherPOL:
// build, verify and sign, prove new, send through endpoint 4, confirm at finalized depth). No
// history, no task queue, no timer; the SDK's activity test environment only gives the
// activities the context they read (logger, heartbeats). One delegate at a time per address
// holds the address, as the workflows' nonce lease does.
type BarePolygon struct {
	Acts    *actevm.Activities
	Network string
	Poll    time.Duration

	mu    sync.Mutex
	addrs map[common.Address]*sync.Mutex
}

// Delegate delegates wei from staker to the validator share and waits until both transactions
// are final.
func (b *BarePolygon) Delegate(ctx context.Context, staker, share common.Address, wei *big.Int) error {
	n, ok := b.Acts.Networks[b.Network]
	if !ok {
		return fmt.Errorf("no EVM network %q", b.Network)
	}
	lock := b.addr(staker)
	lock.Lock()
	defer lock.Unlock()
	call := activityCaller(ctx, b.Acts)
	var d actevm.Delegation
	if err := call(b.Acts.EVMReadDelegation, actevm.DelegationInput{Network: b.Network, Staker: staker.Hex(),
		ValidatorShare: share.Hex(), Amount: wei.String()}, &d); err != nil {
		return fmt.Errorf("delegation: %w", err)
	}
	var nonces lease.Nonces
	if err := call(b.Acts.EVMReadNonces, lease.ReadInput{Network: b.Network, Address: staker.Hex()}, &nonces); err != nil {
		return fmt.Errorf("nonces: %w", err)
	}
	nonce := nonces.Pending
	intent := actevm.Intent{ChainID: n.Signer.Policy().ChainID, Staker: staker, ValidatorShare: share, Amount: new(big.Int).Set(wei)}
	step := func(in actevm.Intent) error {
		in.Nonce = nonce
		var built actevm.BuildResult
		if err := call(b.Acts.EVMBuild, actevm.BuildInput{Network: b.Network, Intent: in, Build: 1}, &built); err != nil {
			return fmt.Errorf("build %s: %w", in.Operation, err)
		}
		var signed actevm.SignResult
		if err := call(b.Acts.EVMSign, actevm.SignInput{Network: b.Network, Intent: built.Intent, UnsignedTransaction: built.UnsignedTransaction}, &signed); err != nil {
			return fmt.Errorf("sign %s: %w", in.Operation, err)
		}
		hashes := []string{signed.Hash}
		var fresh actevm.FreshResult
		if err := call(b.Acts.EVMCheckFresh, actevm.FreshInput{Network: b.Network, Staker: staker.Hex(), Nonce: nonce, Hashes: hashes}, &fresh); err != nil {
			return fmt.Errorf("freshness of %s: %w", in.Operation, err)
		}
		var sent actevm.BroadcastResult
		if err := call(b.Acts.EVMBroadcast, actevm.BroadcastInput{Network: b.Network, Staker: staker.Hex(), Hash: signed.Hash,
			SignedTransaction: signed.SignedTransaction}, &sent); err != nil {
			return fmt.Errorf("send %s: %w", in.Operation, err)
		}
		var conf actevm.ConfirmResult
		if err := call(b.Acts.EVMConfirm, actevm.ConfirmInput{Network: b.Network, Staker: staker.Hex(), Nonce: nonce, Hashes: hashes,
			SignedTransaction: signed.SignedTransaction, PollInterval: b.Poll}, &conf); err != nil {
			return fmt.Errorf("confirm %s: %w", in.Operation, err)
		}
		if conf.Outcome != activities.OutcomeFinalized {
			return fmt.Errorf("%s %s ended %s: %s", in.Operation, signed.Hash, conf.Outcome, conf.Error)
		}
		nonce++
		return nil
	}
	if allowance, _ := new(big.Int).SetString(d.Allowance, 10); allowance == nil || allowance.Cmp(wei) < 0 {
		approve := intent
		approve.Operation, approve.ValidatorShare = actevm.Operation("approve"), common.Address{}
		if err := step(approve); err != nil {
			return err
		}
	}
	delegate := intent
	delegate.Operation = actevm.Operation("delegate")
	delegate.ExpectedShares, _ = new(big.Int).SetString(d.ExpectedShares, 10)
	return step(delegate)
}

func (b *BarePolygon) addr(a common.Address) *sync.Mutex {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.addrs == nil {
		b.addrs = map[common.Address]*sync.Mutex{}
	}
	if b.addrs[a] == nil {
		b.addrs[a] = &sync.Mutex{}
	}
	return b.addrs[a]
}

// ChainReport is one chain's operation measured through its workflow and through a bare client
// calling the same activities in-process, on the stack of the first server mode.
type ChainReport struct {
	// Operation says what each operation is.
	Operation string `json:"operation"`
	// Concurrency is how many operations each side ran at once, each from its own address; Ops
	// how many per side.
	Concurrency int `json:"concurrency"`
	Ops         int `json:"ops"`
	// Orchestrated ran the workflow; Bare the same activities called in-process.
	Orchestrated Stats `json:"orchestrated"`
	Bare         Stats `json:"bare"`
	// ThroughputVsBare is the orchestrated ops/s over the bare side's; P50VsBare the orchestrated
	// p50 over the bare side's; CPUVsBare the bare side's CPU per operation over the
	// orchestrated side's (server, benchmark process and the chain's process).
	ThroughputVsBare float64 `json:"throughputVsBare"`
	P50VsBare        float64 `json:"p50VsBare"`
	CPUVsBare        float64 `json:"cpuVsBare"`
	// about says what an operation waits for; chain names the chain's process in the CPU
	// columns ("" when the chain runs in the benchmark's process).
	about, chain string
	// prepare, when set, runs before each round of either side, unmeasured.
	prepare func()
}

// activityCaller calls the activities of acts in-process, outside any workflow: the SDK's
// activity test environment only gives them the context they read (logger, heartbeats).
func activityCaller(ctx context.Context, acts any) func(fn, in, out any) error {
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestActivityEnvironment()
	env.SetWorkerOptions(sdkworker.Options{BackgroundActivityContext: ctx})
	env.RegisterActivity(acts)
	return func(fn, in, out any) error {
		v, err := env.ExecuteActivity(fn, in)
		if err != nil {
			return err
		}
		return v.Get(out)
	}
}

// polygonOp delegates the i-th operation's POL through the workflow.
func (e *env) polygonOp(ctx context.Context, i int) error {
	staker, share := e.polygonStaker(i, 0)
	in := wfpolygon.DelegateInput{Network: stack.EVMNetwork, Staker: staker.Hex(), ValidatorShare: share.Hex(),
		Amount: e.cfg.PolygonWei.String(), Options: workflows.Options{ConfirmPollInterval: e.cfg.PolygonConfirmPoll}}
	opts := starter.StartOptions(e.idFor("polygon-delegate", i),
		wfpolygon.Summary(wfpolygon.OpDelegate, in.Network, in.Staker, in.ValidatorShare, in.Amount), benchQueue(wfevm.Module),
		wfpolygon.Attributes(wfpolygon.OpDelegate, in.Network, in.Staker)...)
	run, err := e.c.ExecuteWorkflow(ctx, opts, wfpolygon.DelegateWorkflowType, in)
	if err != nil {
		return err
	}
	var res wfpolygon.Result
	return e.wait(ctx, run, &res)
}

func (e *env) barePolygonOp(ctx context.Context, i int) error {
	staker, share := e.polygonStaker(i, 1)
	return e.barePolygon.Delegate(ctx, staker, share, e.cfg.PolygonWei)
}

// polygonStaker is the i-th operation's address and validator on a side (0 orchestrated, 1
// bare): each side has addresses of its own, as many as the concurrency, and operation i uses
// address i mod the concurrency. The sides must not share an address: the orchestrated side's
// nonce lease would rightly report the bare side's transactions as a stranger's.
func (e *env) polygonStaker(i, side int) (common.Address, common.Address) {
	ev := e.st.EVM
	c := e.cfg.PolygonConcurrency
	a := ev.Stakers[side*c+i%c]
	v := ev.Deployment.Validators[i%len(ev.Deployment.Validators)]
	return a, v.Share
}

// measurePolygon measures the Polygon delegate on both sides.
func (e *env) measurePolygon(ctx context.Context) (*ChainReport, error) {
	rep := &ChainReport{Operation: "Polygon delegate (approve + buyVoucherPOL, each final on geth --dev)",
		Concurrency: e.cfg.PolygonConcurrency, Ops: e.cfg.PolygonOps, chain: "geth",
		about: "Each delegate waits for its approve and its buyVoucherPOL to be final on geth --dev, which dominates its latency."}
	return rep, e.measureChain(ctx, rep, e.polygonOp, e.barePolygonOp, e.st.EVM.Node.Pid())
}

// measureChain runs a chain's orchestrated and bare sides in two alternating rounds each at the
// report's concurrency, reading CPU around each round as the Solana sides do, with chain the
// chain's process (0: it runs in the benchmark's process). (A chain's operation waits for its
// blocks: more rounds would only lengthen the run.)
func (e *env) measureChain(ctx context.Context, rep *ChainReport, orch, bare func(context.Context, int) error, chain int) error {
	if chain == 0 {
		chain = os.Getpid()
	}
	sides := []struct {
		name string
		op   func(context.Context, int) error
		into *Stats
	}{{"orchestrated", orch, &rep.Orchestrated}, {"bare", bare, &rep.Bare}}
	rounds := make([][]Stats, len(sides))
	for r := range chainRounds {
		per := perRound(rep.Ops, chainRounds, r)
		for _, j := range balancedOrder(len(sides), r) {
			if rep.prepare != nil {
				rep.prepare()
			}
			cpu0 := e.cpuWith(chain)
			s := RunLoad(ctx, per, rep.Concurrency, sides[j].op)
			e.settle(ctx)
			s.CPU = e.cpuWith(chain).perOp(cpu0, per)
			if s.Errors > 0 {
				return fmt.Errorf("%s: %d of %d failed, first: %s", sides[j].name, s.Errors, s.Ops, s.FirstError)
			}
			rounds[j] = append(rounds[j], s)
		}
	}
	for j := range sides {
		*sides[j].into = Merge(rounds[j]...)
	}
	rep.ratios()
	return nil
}

// chainRounds is how many rounds each side of a chain runs its operations in (measureChain).
const chainRounds = 2

// ratios compares the orchestrated side with the bare one.
func (r *ChainReport) ratios() {
	r.ThroughputVsBare = ratio(r.Orchestrated.OpsPerSec, r.Bare.OpsPerSec)
	r.P50VsBare = ratio(float64(r.Orchestrated.P50), float64(r.Bare.P50))
	r.CPUVsBare = 0
	if o, b := r.Orchestrated.CPU, r.Bare.CPU; o != nil && b != nil {
		r.CPUVsBare = ratio(float64(b.total()), float64(o.total()))
	}
}

// markdown is the report's section ("" without one).
func (r *ChainReport) markdown() string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## %s\n\n", r.Operation)
	fmt.Fprintf(&b, "%d operations per side in two alternating rounds, %d at once, each side from addresses of its own. %s\n\n", r.Ops, r.Concurrency, r.about)
	chain := r.chain
	if chain == "" {
		chain = "chain (in the bench process, counted twice)"
	}
	fmt.Fprintf(&b, "| side | ops/s | p50 | p95 | p99 | errors | CPU ms/op: server | bench process | %s |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n", chain)
	for _, row := range []struct {
		name string
		s    Stats
	}{{"orchestrated", r.Orchestrated}, {"bare", r.Bare}} {
		fmt.Fprintf(&b, "| %s | %.2f | %s | %s | %s | %d | %s |\n", row.name, row.s.OpsPerSec, ms(row.s.P50), ms(row.s.P95), ms(row.s.P99), row.s.Errors, cpuCells(row.s.CPU))
	}
	fmt.Fprintf(&b, "\norchestrated/bare: throughput %.2f, p50 %.2f, CPU per op (bare/orchestrated) %.2f\n", r.ThroughputVsBare, r.P50VsBare, r.CPUVsBare)
	return b.String()
}
