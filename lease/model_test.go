package lease

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/workflows"
)

// The lease model: several operations of one address lease its nonces from a real sequencer
// (NonceLeaseWorkflow) and send transactions to a fake nonce chain on which a build may land
// at once, late, or never; an operation may give up following its build (releasing with it still
// open) or be terminated at any point while holding the lease. After every seeded run:
//   - every grant was at the chain's next nonce with nothing of the address pending (no nonce
//     skipped, none given twice), to one operation at a time, and never an error;
//   - the sequencer's next nonce equals the chain's consumed nonce at final depth;
//   - no lease is held by a closed workflow, nothing waits, nothing is left settling;
//   - every operation that was not terminated got its lease.
var (
	modelRuns = flag.Int("model.runs", 25, "seeded runs of the lease model")
	modelSeed = flag.Int64("model.seed", 1, "first seed of the lease model (run i uses seed+i)")
)

// modelFinality is how long a landed transaction takes to reach final depth.
const modelFinality = 20 * time.Second

type modelTx struct {
	op     string
	nonce  uint64
	hash   string
	at     time.Time
	lands  bool
	closed bool
}

type modelLanding struct {
	op, hash string
	at       time.Time
}

// modelChain is the fake nonce chain and the test's view of the operations.
type modelChain struct {
	mu       sync.Mutex
	seed     int64
	now      func() time.Time
	landed   []modelLanding
	pool     []*modelTx
	alive    map[string]bool
	holding  map[string]bool
	granted  map[string]bool
	requests []Request
	problems []string
	grants   []string
}

func (c *modelChain) problem(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// advance lands (in nonce order) or drops what is due.
func (c *modelChain) advance() {
	now := c.now()
	for changed := true; changed; {
		changed = false
		sort.SliceStable(c.pool, func(i, j int) bool { return c.pool[i].at.Before(c.pool[j].at) })
		for _, tx := range c.pool {
			if tx.closed || tx.at.After(now) {
				continue
			}
			switch next := uint64(len(c.landed)); {
			case tx.nonce < next || !tx.lands:
				tx.closed, changed = true, true
			case tx.nonce == next:
				c.landed = append(c.landed, modelLanding{op: tx.op, hash: tx.hash, at: tx.at})
				tx.closed, changed = true, true
			}
		}
	}
}

func (c *modelChain) nonces() Nonces {
	c.advance()
	n := Nonces{Latest: uint64(len(c.landed))}
	for _, l := range c.landed {
		if !l.at.Add(modelFinality).After(c.now()) {
			n.Finalized++
		}
	}
	n.Pending = n.Latest
	for _, tx := range c.pool {
		if !tx.closed && tx.nonce+1 > n.Pending {
			n.Pending = tx.nonce + 1
		}
	}
	return n
}

// fate decides, from the seed alone, whether a build lands and when it lands or is dropped.
func (c *modelChain) fate(op string, nonce uint64, build int) (bool, time.Duration) {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%d/%d", c.seed, op, nonce, build)
	r := rand.New(rand.NewSource(int64(h.Sum64())))
	lands := r.Intn(4) != 0
	d := time.Duration(2+r.Intn(60)) * time.Second
	if r.Intn(6) == 0 {
		d = time.Duration(3+r.Intn(6)) * time.Minute // late
	}
	return lands, d
}

type modelSendInput struct {
	Op    string
	Nonce uint64
	Build int
}

type modelFollowResult struct {
	Landed, Final, Dropped bool
}

func (c *modelChain) send(_ context.Context, in modelSendInput) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advance()
	hash := fmt.Sprintf("%s/%d/%d", in.Op, in.Nonce, in.Build)
	lands, d := c.fate(in.Op, in.Nonce, in.Build)
	c.pool = append(c.pool, &modelTx{op: in.Op, nonce: in.Nonce, hash: hash, at: c.now().Add(d), lands: lands})
	return hash, nil
}

func (c *modelChain) follow(_ context.Context, hash string) (modelFollowResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advance()
	for _, l := range c.landed {
		if l.hash == hash {
			return modelFollowResult{Landed: true, Final: !l.at.Add(modelFinality).After(c.now())}, nil
		}
	}
	for _, tx := range c.pool {
		if tx.hash == hash && tx.closed {
			return modelFollowResult{Dropped: true}, nil
		}
	}
	return modelFollowResult{}, nil
}

// onGrant checks a grant the moment the operation has it.
func (c *modelChain) onGrant(_ context.Context, op string, nonce uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nonces()
	c.grants = append(c.grants, fmt.Sprintf("%s@%d", op, nonce))
	if nonce != n.Latest || n.Pending != n.Latest {
		c.problem("%s granted nonce %d while the chain counts latest %d, pending %d, final %d", op, nonce, n.Latest, n.Pending, n.Finalized)
	}
	for h := range c.holding {
		c.problem("%s granted the lease while %s, alive, holds it", op, h)
	}
	c.holding[op], c.granted[op] = true, true
	return nil
}

func (c *modelChain) onError(_ context.Context, op, msg string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.problem("%s was refused its lease: %s", op, msg)
	return nil
}

// onReleasing: the operation gives its lease back now.
func (c *modelChain) onReleasing(_ context.Context, op string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.holding, op)
	return nil
}

// onEnd: the operation closes now (having released its lease, or terminated holding it).
func (c *modelChain) onEnd(_ context.Context, op string, released bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.holding, op)
	c.alive[op] = false
	return nil
}

type modelOpPlan struct {
	ID    string
	Start time.Duration
	Steps int
	// DieAt: terminated at its DieAt-th point (1: once granted; then after each send); 0: never.
	DieAt int
	// GiveUp: after its first send, releases at once with the build still open (the core's
	// finding 1, as the sequencer must survive it).
	GiveUp bool
}

func modelOp(ctx workflow.Context, p modelOpPlan) error {
	o, err := workflows.NewOperation(ctx, workflows.Setup{Chain: "evmtest", Network: "dev", Operation: "delegate",
		Staker: addr, Unit: "wei", Options: workflows.Options{MaxStallWait: 3 * time.Minute}, Waits: []string{StepWaitingNonce}})
	if err != nil {
		return err
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	end := func(released bool) error {
		return workflow.ExecuteActivity(actx, "ModelEnd", p.ID, released).Get(ctx, nil)
	}
	released := func() error { return workflow.ExecuteActivity(actx, "ModelReleasing", p.ID).Get(ctx, nil) }
	lease, err := Acquire(ctx, o, EVM, "dev", addr, requestLease)
	if err != nil {
		_ = workflow.ExecuteActivity(actx, "ModelError", p.ID, err.Error()).Get(ctx, nil)
		return end(false)
	}
	if err := workflow.ExecuteActivity(actx, "ModelGranted", p.ID, lease.Next).Get(ctx, nil); err != nil {
		return err
	}
	point := 0
	die := func() bool { point++; return point == p.DieAt }
	if die() {
		return end(false) // terminated holding the lease
	}
	for step := 0; step < p.Steps; step++ {
		nonce, landed := lease.Next, false
		for build := 1; build <= 3 && !landed; build++ {
			var hash string
			if err := workflow.ExecuteActivity(actx, "ModelSend", modelSendInput{Op: p.ID, Nonce: nonce, Build: build}).Get(ctx, &hash); err != nil {
				return err
			}
			if die() {
				return end(false)
			}
			if p.GiveUp {
				if err := released(); err != nil {
					return err
				}
				_ = lease.Release(ctx)
				return end(true)
			}
			for {
				if err := workflow.Sleep(ctx, 5*time.Second); err != nil {
					return err
				}
				var f modelFollowResult
				if err := workflow.ExecuteActivity(actx, "ModelFollow", hash).Get(ctx, &f); err != nil {
					return err
				}
				if f.Landed && f.Final {
					landed = true
					break
				}
				if f.Dropped {
					break
				}
			}
		}
		if !landed {
			break
		}
		lease.Next = nonce + 1
	}
	if err := released(); err != nil {
		return err
	}
	if err := lease.Release(ctx); err != nil {
		return err
	}
	o.Done(ctx)
	return end(true)
}

type modelPlan struct {
	Ops []modelOpPlan
}

// modelWorld runs the sequencer and the operations as its children, and carries the
// operations' lease requests to the sequencer (the request activity's signal-with-start).
func modelWorld(ctx workflow.Context, plan modelPlan) error {
	seqID := ID(EVM, "dev", addr)
	sctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: seqID,
		ParentClosePolicy: enums.PARENT_CLOSE_POLICY_ABANDON})
	seq := workflow.ExecuteChildWorkflow(sctx, WorkflowType, State{Network: "dev", Address: addr, CheckEvery: time.Minute})
	if err := seq.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		return err
	}
	done := 0
	for _, op := range plan.Ops {
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer func() { done++ }()
			if workflow.Sleep(ctx, op.Start) != nil {
				return
			}
			cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: op.ID})
			if err := workflow.ExecuteChildWorkflow(cctx, modelOp, op).Get(ctx, nil); err != nil {
				workflow.GetLogger(ctx).Error("model operation failed", "op", op.ID, "error", err)
			}
		})
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	deadline := workflow.Now(ctx).Add(4 * time.Hour)
	for done < len(plan.Ops) && workflow.Now(ctx).Before(deadline) {
		var reqs []Request
		if err := workflow.ExecuteLocalActivity(lctx, "ModelDrain").Get(ctx, &reqs); err != nil {
			return err
		}
		for _, r := range reqs {
			if err := workflow.SignalExternalWorkflow(ctx, seqID, "", SignalAcquire, r).Get(ctx, nil); err != nil {
				return err
			}
		}
		if err := workflow.Sleep(ctx, 2*time.Second); err != nil {
			return err
		}
	}
	// Long enough for the sequencer to find every closed holder and the chain to settle.
	return workflow.Sleep(ctx, 30*time.Minute)
}

func newModelPlan(seed int64) modelPlan {
	r := rand.New(rand.NewSource(seed))
	var p modelPlan
	for i := range 3 + r.Intn(3) {
		op := modelOpPlan{ID: fmt.Sprintf("op-%d", i), Start: time.Duration(r.Intn(90)) * time.Second, Steps: 1 + r.Intn(2)}
		switch r.Intn(6) {
		case 0:
			op.DieAt = 1
		case 1:
			op.DieAt = 2 + r.Intn(op.Steps)
		case 2:
			op.GiveUp = true
		}
		p.Ops = append(p.Ops, op)
	}
	return p
}

// runLeaseModel runs one seeded run and returns what went wrong.
func runLeaseModel(t *testing.T, seed int64) []string {
	plan := newModelPlan(seed)
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(modelLogHandler)))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	// The sequencer outlives the run (abandoned), as it outlives operations.
	env.SetDetachedChildWait(false)
	// A loaded machine (2 cores, many runs) must not pass for a deadlocked workflow.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 30 * time.Second})
	c := &modelChain{seed: seed, now: env.Now, alive: map[string]bool{}, holding: map[string]bool{}, granted: map[string]bool{}}
	for _, op := range plan.Ops {
		c.alive[op.ID] = true
	}
	env.RegisterWorkflow(modelWorld)
	env.RegisterWorkflow(modelOp)
	env.RegisterWorkflowWithOptions(Workflow(readNonces), workflow.RegisterOptions{Name: WorkflowType})
	registerChain(env)
	env.RegisterActivityWithOptions(c.send, activity.RegisterOptions{Name: "ModelSend"})
	env.RegisterActivityWithOptions(c.follow, activity.RegisterOptions{Name: "ModelFollow"})
	env.RegisterActivityWithOptions(c.onGrant, activity.RegisterOptions{Name: "ModelGranted"})
	env.RegisterActivityWithOptions(c.onError, activity.RegisterOptions{Name: "ModelError"})
	env.RegisterActivityWithOptions(c.onEnd, activity.RegisterOptions{Name: "ModelEnd"})
	env.RegisterActivityWithOptions(c.onReleasing, activity.RegisterOptions{Name: "ModelReleasing"})
	env.RegisterActivityWithOptions(func(context.Context) ([]Request, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		out := c.requests
		c.requests = nil
		return out, nil
	}, activity.RegisterOptions{Name: "ModelDrain"})
	env.OnActivity(requestLease, mock.Anything, mock.Anything).Return(func(_ context.Context, r Request) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.requests = append(c.requests, r)
		return nil
	})
	env.OnActivity(readNonces, mock.Anything, mock.Anything).Return(func(context.Context, ReadInput) (Nonces, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.nonces(), nil
	})
	env.OnActivity(holders.LeaseHolder, mock.Anything, mock.Anything).Return(func(_ context.Context, in HolderInput) (HolderState, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.alive[in.WorkflowID] {
			return HolderState{Running: true, Status: "Running"}, nil
		}
		return HolderState{Status: "Terminated"}, nil
	})
	env.ExecuteWorkflow(modelWorld, plan)
	if err := env.GetWorkflowError(); err != nil {
		return []string{fmt.Sprintf("the run did not end: %v", err)}
	}
	v, err := env.QueryWorkflowByID(ID(EVM, "dev", addr), QueryState)
	if err != nil {
		return []string{fmt.Sprintf("querying the sequencer: %v", err)}
	}
	var st State
	if err := v.Get(&st); err != nil {
		return []string{err.Error()}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nonces()
	if st.Next != n.Finalized || n.Latest != n.Finalized || n.Pending != n.Finalized {
		c.problem("the sequencer's next nonce is %d; the chain counts final %d, latest %d, pending %d", st.Next, n.Finalized, n.Latest, n.Pending)
	}
	if st.Holder != nil {
		c.problem("the lease is held by %s, closed", st.Holder.WorkflowID)
	}
	if st.Settling != nil {
		c.problem("the lease %s gave back is still settling (claim %d)", st.Settling.WorkflowID, st.Settling.Claim)
	}
	for _, q := range st.Queue {
		c.problem("%s still waits for the lease", q.WorkflowID)
	}
	for _, op := range plan.Ops {
		if !c.granted[op.ID] {
			c.problem("%s never got the lease", op.ID)
		}
	}
	for _, e := range st.Events {
		modelSeen[e.Kind]++
	}
	for _, op := range plan.Ops {
		switch {
		case op.DieAt > 0:
			modelSeen["terminated holders"]++
		case op.GiveUp:
			modelSeen["releases with a build open"]++
		}
	}
	if len(c.problems) > 0 {
		return append(c.problems, fmt.Sprintf("plan %+v; grants %v; sequencer events %+v", plan.Ops, c.grants, st.Events))
	}
	return nil
}

// modelSeen tallies what the runs went through (TestLeaseModelCheck logs it).
var modelSeen = map[string]int{}

// TestLeaseModelCheck: see the lease model above. Reproduce a failure with -model.seed=N -model.runs=1.
func TestLeaseModelCheck(t *testing.T) {
	defer func() { t.Logf("%d runs went through: %v", *modelRuns, modelSeen) }()
	for i := range *modelRuns {
		seed := *modelSeed + int64(i)
		if problems := runLeaseModel(t, seed); len(problems) > 0 {
			t.Fatalf("lease model, seed %d (-model.seed=%d -model.runs=1):\n%s", seed, seed, strings.Join(problems, "\n"))
		}
	}
}

var modelLogHandler slog.Handler = slog.DiscardHandler
