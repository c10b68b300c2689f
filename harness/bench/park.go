package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/workflows"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// ParkReport is what parking UnstakeWorkflows at the deactivation wait costs the worker that
// holds them: the shipped worker binary in a process of its own (Config.ParkWorkerBin), serving
// the Solana module on queues of its own.
type ParkReport struct {
	// Workflows is how many UnstakeWorkflows were parked; Mode the server mode.
	Workflows int    `json:"workflows"`
	Mode      string `json:"mode"`
	// StickyCache is the worker's sticky workflow cache size.
	StickyCache int `json:"stickyCache"`
	// Before is measured once the worker is ready, before the stake accounts were made; Parked
	// as the last workflow reached the wait (parking's own garbage still in the heap); After
	// once the worker's RSS has settled with every workflow parked (SettleTook later): what
	// parked workflows hold.
	Before     ProcSample `json:"before"`
	Parked     ProcSample `json:"parked"`
	After      ProcSample `json:"after"`
	SettleTook Duration   `json:"settleTook"`
	// StartRate is workflows parked per second (start to reaching the wait).
	StartRate float64 `json:"startRate"`
	// GoalRSS is the worker RSS that parking ParkGoalWorkflows must stay under; MeetsGoal says
	// whether After.WorkerRSS did (for Workflows of at least ParkGoalWorkflows; false below).
	GoalRSS   uint64 `json:"goalRssBytes"`
	MeetsGoal bool   `json:"meetsGoal"`
}

// The parked-memory goal: 10,000 unstakes at the deactivation wait under 120 MB (10^6 bytes)
// of worker RSS.
const (
	ParkGoalWorkflows = 10_000
	ParkGoalRSS       = 120_000_000
)

// judge records the goal and whether the parked sample meets it.
func (p *ParkReport) judge() {
	p.GoalRSS = ParkGoalRSS
	p.MeetsGoal = p.Workflows >= ParkGoalWorkflows && p.After.WorkerRSS < ParkGoalRSS
}

// verdict says how the parked worker RSS compares with the goal.
func (p *ParkReport) verdict() string {
	mb := func(b uint64) string { return fmt.Sprintf("%.0f MB", float64(b)/1e6) }
	switch {
	case p.Workflows < ParkGoalWorkflows:
		return fmt.Sprintf("goal not measured: %d parked, the goal is for %d", p.Workflows, ParkGoalWorkflows)
	case p.MeetsGoal:
		return fmt.Sprintf("goal met: worker RSS %s, under %s", mb(p.After.WorkerRSS), mb(p.GoalRSS))
	default:
		return fmt.Sprintf("goal MISSED: worker RSS %s, not under %s", mb(p.After.WorkerRSS), mb(p.GoalRSS))
	}
}

// ProcSample is one reading of the worker's and the server's processes.
type ProcSample struct {
	// WorkerRSS is the worker process's VmRSS, WorkerHeap its Go heap in use and Goroutines its
	// goroutine count (from its /metrics); ServerRSS is the dev server's VmRSS (ServerError
	// when unreadable).
	WorkerRSS   uint64 `json:"workerRssBytes"`
	WorkerHeap  uint64 `json:"workerHeapInuseBytes"`
	Goroutines  int    `json:"goroutines"`
	ServerRSS   uint64 `json:"serverRssBytes"`
	ServerError string `json:"serverError,omitempty"`
}

// sample reads the park worker and the server.
func (e *env) sample(ctx context.Context, w *parkWorker) (ProcSample, error) {
	var s ProcSample
	var err error
	if s.WorkerRSS, s.WorkerHeap, s.Goroutines, err = w.sample(ctx); err != nil {
		return s, fmt.Errorf("reading the park worker: %w", err)
	}
	rss, err := e.serverRSS()
	if err != nil {
		s.ServerError = err.Error()
	}
	s.ServerRSS = rss
	return s, nil
}

type stakeAccount struct {
	staker, account string
}

// park makes n active stake accounts and deactivates them with the bare client (fast, no
// Temporal), then starts the real UnstakeWorkflow for each: every one reads its account, finds it
// deactivating, and parks on its durable timer until the epoch ends.
func (e *env) park(ctx context.Context, rep *Report, n int) (*ParkReport, error) {
	log := e.cfg.Logger.With(zap.String("mode", e.mode))
	pr := &ParkReport{Workflows: n, Mode: e.mode, StickyCache: stickyCacheOf(e.cfg)}
	w, err := e.startParkWorker(ctx)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	if pr.Before, err = e.sample(ctx, w); err != nil {
		return nil, err
	}

	accounts := make([]stakeAccount, n)
	ph := rep.phase(fmt.Sprintf("%s: park: %d stake accounts (bare client)", e.mode, n))
	s := RunLoad(ctx, n, e.cfg.ParkConcurrency, func(ctx context.Context, i int) error {
		acct, err := e.bare.StakeUnchecked(ctx, e.staker(i), e.vote, e.cfg.Lamports)
		accounts[i] = stakeAccount{staker: e.staker(i), account: acct}
		return err
	})
	ph.end()
	if s.Errors > 0 {
		return nil, fmt.Errorf("staking: %d of %d failed, first: %s", s.Errors, n, s.FirstError)
	}
	log.Info("Stake accounts made", zap.Int("n", n), zap.Duration("took", ph.took()))
	// Active from the next epoch on: a stake deactivated in its activation epoch is inactive at once.
	if err := e.st.Sandbox.Runtime().WarpEpochs(ctx, 1); err != nil {
		return nil, fmt.Errorf("warping an epoch: %w", err)
	}
	ph = rep.phase(fmt.Sprintf("%s: park: %d deactivations (bare client)", e.mode, n))
	s = RunLoad(ctx, n, e.cfg.ParkConcurrency, func(ctx context.Context, i int) error {
		return e.bare.Deactivate(ctx, accounts[i].staker, accounts[i].account, e.cfg.Lamports)
	})
	ph.end()
	if s.Errors > 0 {
		return nil, fmt.Errorf("deactivating: %d of %d failed, first: %s", s.Errors, n, s.FirstError)
	}
	log.Info("Stake accounts deactivating", zap.Int("n", n), zap.Duration("took", ph.took()))

	ph = rep.phase(fmt.Sprintf("%s: park: %d UnstakeWorkflows to the wait", e.mode, n))
	start := time.Now()
	ids := make([]string, n)
	s = RunLoad(ctx, n, e.cfg.ParkConcurrency, func(ctx context.Context, i int) error {
		in := wfsolana.UnstakeInput{Network: "testnet", Staker: accounts[i].staker, StakeAccount: accounts[i].account,
			Options: workflows.Options{ConfirmPollInterval: e.cfg.ConfirmPoll}}
		ids[i] = e.idFor("unstake", i)
		_, err := e.c.ExecuteWorkflow(ctx, starter.StartOptions(ids[i], wfsolana.UnstakeSummary(in), w.queue(wfsolana.Module),
			wfsolana.UnstakeAttributes("unstake", in)...), wfsolana.UnstakeWorkflow, in)
		return err
	})
	if s.Errors > 0 {
		ph.end()
		return nil, fmt.Errorf("starting unstakes: %d of %d failed, first: %s", s.Errors, n, s.FirstError)
	}
	err = e.waitParked(ctx, n, log)
	ph.end()
	if err != nil {
		return nil, err
	}
	if err := e.ranOn(ctx, ids[n-1], parkWorkerIdentity); err != nil {
		return nil, err
	}
	pr.StartRate = float64(n) / time.Since(start).Seconds()
	if pr.Parked, err = e.sample(ctx, w); err != nil {
		return nil, err
	}
	settled := time.Now()
	if pr.After, err = e.settleRSS(ctx, w, pr.Parked); err != nil {
		return nil, err
	}
	pr.SettleTook = Duration(time.Since(settled))
	pr.judge()
	return pr, nil
}

// Settling: the worker's RSS is read every rssEvery until it has not fallen by more than
// rssSlack over rssWindow, or for rssMax at most. The Go runtime returns freed memory
// to the system gradually (its scavenger), and collects at least every two minutes.
const (
	rssEvery  = 5 * time.Second
	rssWindow = 30 * time.Second
	rssSlack  = 1 << 20
	rssMax    = 5 * time.Minute
)

// settleRSS waits until the worker's RSS stops falling and returns the last sample.
func (e *env) settleRSS(ctx context.Context, w *parkWorker, first ProcSample) (ProcSample, error) {
	samples := []ProcSample{first}
	deadline := time.Now().Add(rssMax)
	tick := time.NewTicker(rssEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ProcSample{}, ctx.Err()
		case <-tick.C:
		}
		s, err := e.sample(ctx, w)
		if err != nil {
			return s, err
		}
		samples = append(samples, s)
		if settledRSS(samples, int(rssWindow/rssEvery)) || time.Now().After(deadline) {
			return samples[len(samples)-1], nil
		}
	}
}

// settledRSS reports whether the worker RSS fell by at most rssSlack over the last window
// samples.
func settledRSS(samples []ProcSample, window int) bool {
	if len(samples) <= window {
		return false
	}
	from, last := samples[len(samples)-1-window].WorkerRSS, samples[len(samples)-1].WorkerRSS
	return last+rssSlack >= from
}

// ranOn checks that every workflow task of the workflow id was taken by the worker named
// identity.
func (e *env) ranOn(ctx context.Context, id, identity string) error {
	it := e.c.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	tasks := 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return fmt.Errorf("history of %s: %w", id, err)
		}
		if a := ev.GetWorkflowTaskStartedEventAttributes(); a != nil {
			tasks++
			if a.GetIdentity() != identity {
				return fmt.Errorf("%s: a workflow task was taken by %q, not the park worker %q", id, a.GetIdentity(), identity)
			}
		}
	}
	if tasks == 0 {
		return fmt.Errorf("%s: no workflow task in its history", id)
	}
	return nil
}

// parkStall is how long waitParked waits without one more unstake reaching the wait.
const parkStall = 2 * time.Minute

// waitParked waits until n unstakes report the deactivation wait as their step, failing as soon
// as one of them ends, or once none more has reached it for parkStall (a slower machine only
// parks more slowly).
func (e *env) waitParked(ctx context.Context, n int, log *zap.Logger) error {
	const (
		waiting = `StakeflowOperation = "unstake" AND StakeflowStep = "waiting-deactivation" AND ExecutionStatus = "Running"`
		ended   = `StakeflowOperation = "unstake" AND ExecutionStatus != "Running"`
	)
	moved := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last int64
	for {
		var got, bad int64
		var wg sync.WaitGroup
		var err1, err2 error
		wg.Add(2)
		go func() { defer wg.Done(); got, err1 = e.count(ctx, waiting) }()
		go func() { defer wg.Done(); bad, err2 = e.count(ctx, ended) }()
		wg.Wait()
		switch {
		case err1 != nil:
			return err1
		case err2 != nil:
			return err2
		case bad > 0:
			return fmt.Errorf("%d unstake workflows ended instead of waiting for deactivation", bad)
		case got >= int64(n):
			return nil
		}
		if got != last {
			log.Info("Parking", zap.Int64("parked", got), zap.Int("of", n))
			last, moved = got, time.Now()
		}
		if time.Since(moved) > parkStall {
			return fmt.Errorf("%d of %d unstakes reached the deactivation wait, none more in the last %s", got, n, parkStall)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func (e *env) count(ctx context.Context, query string) (int64, error) {
	resp, err := e.c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: query})
	if err != nil {
		return 0, fmt.Errorf("counting workflows (%s): %w", query, err)
	}
	return resp.GetCount(), nil
}
