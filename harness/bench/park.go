package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/workflows"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// ParkReport is what parking UnstakeWorkflows at the deactivation wait costs.
type ParkReport struct {
	// Workflows is how many UnstakeWorkflows were parked; Mode the server mode.
	Workflows int    `json:"workflows"`
	Mode      string `json:"mode"`
	// WorkerInProcess is true: the worker runs in the benchmark's process, whose RSS also holds
	// the sandbox's HTTP server and the benchmark's clients (the Solana runtime is a separate
	// node process, not counted).
	WorkerInProcess bool `json:"workerInProcess"`
	// StickyCache is the worker's sticky workflow cache size.
	StickyCache int `json:"stickyCache"`
	// Before and After are measured before the stake accounts were made and once every workflow
	// was parked.
	Before ProcSample `json:"before"`
	After  ProcSample `json:"after"`
	// StartRate is workflows parked per second (start to reaching the wait).
	StartRate float64 `json:"startRate"`
}

// ProcSample is one reading of the worker's and the server's processes.
type ProcSample struct {
	// WorkerRSS is the benchmark process's VmRSS, WorkerHeap its Go heap in use and Goroutines
	// its goroutine count; ServerRSS is the dev server's VmRSS (ServerError when unreadable).
	WorkerRSS   uint64 `json:"workerRssBytes"`
	WorkerHeap  uint64 `json:"workerHeapInuseBytes"`
	Goroutines  int    `json:"goroutines"`
	ServerRSS   uint64 `json:"serverRssBytes"`
	ServerError string `json:"serverError,omitempty"`
}

func (e *env) sample() ProcSample {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := ProcSample{WorkerHeap: ms.HeapInuse, Goroutines: runtime.NumGoroutine()}
	s.WorkerRSS, _ = VmRSS(os.Getpid())
	rss, err := e.serverRSS()
	if err != nil {
		s.ServerError = err.Error()
	}
	s.ServerRSS = rss
	return s
}

type stakeAccount struct {
	staker, account string
}

// park makes n active stake accounts and deactivates them with the bare client (fast, no
// Temporal), then starts the real UnstakeWorkflow for each: every one reads its account, finds it
// deactivating, and parks on its durable timer until the epoch ends.
func (e *env) park(ctx context.Context, rep *Report, n int) (*ParkReport, error) {
	log := e.cfg.Logger.With(zap.String("mode", e.mode))
	pr := &ParkReport{Workflows: n, Mode: e.mode, WorkerInProcess: true, StickyCache: e.cfg.StickyCache}
	pr.Before = e.sample()

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
	s = RunLoad(ctx, n, e.cfg.ParkConcurrency, func(ctx context.Context, i int) error {
		in := wfsolana.UnstakeInput{Network: "testnet", Staker: accounts[i].staker, StakeAccount: accounts[i].account,
			Options: workflows.Options{ConfirmPollInterval: e.cfg.ConfirmPoll}}
		_, err := e.c.ExecuteWorkflow(ctx, starter.StartOptions(e.idFor("unstake", i), wfsolana.UnstakeSummary(in), benchQueue(wfsolana.Module),
			wfsolana.UnstakeAttributes("unstake", in)...), wfsolana.UnstakeWorkflow, in)
		return err
	})
	if s.Errors > 0 {
		ph.end()
		return nil, fmt.Errorf("starting unstakes: %d of %d failed, first: %s", s.Errors, n, s.FirstError)
	}
	err := e.waitParked(ctx, n, log)
	ph.end()
	if err != nil {
		return nil, err
	}
	pr.StartRate = float64(n) / time.Since(start).Seconds()
	pr.After = e.sample()
	return pr, nil
}

// waitParked waits until n unstakes report the deactivation wait as their step, failing as soon
// as one of them ends.
func (e *env) waitParked(ctx context.Context, n int, log *zap.Logger) error {
	const (
		waiting = `StakeflowOperation = "unstake" AND StakeflowStep = "waiting-deactivation" AND ExecutionStatus = "Running"`
		ended   = `StakeflowOperation = "unstake" AND ExecutionStatus != "Running"`
	)
	timeout := time.Duration(n)*50*time.Millisecond + 2*time.Minute
	deadline := time.Now().Add(timeout)
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
			last = got
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d unstakes reached the deactivation wait within %s", got, n, timeout)
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
