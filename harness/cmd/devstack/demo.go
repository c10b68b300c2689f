package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/modules/all"
	wfcelestia "github.com/stakeflow/stakeflow/workflows/celestia"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// demoPrefix starts the operation IDs the demo uses.
const demoPrefix = "demo-"

// demoNetwork and demoSOL are what the demo stakes.
const (
	demoNetwork = "testnet"
	demoSOL     = "2"
)

// syncWriter serialises writes from the starter and the epoch warper.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// runDemo starts the stack, stakes, unstakes and withdraws through the starter, then stops.
func runDemo(ctx context.Context, cfg config, stdout, stderr io.Writer) (err error) {
	out := &syncWriter{w: stdout}
	fmt.Fprintln(out, "stakeflow demo: stake 2 SOL, then unstake and withdraw it, on the local stack")
	ls, err := startStack(ctx, cfg, out, stderr)
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(out, "stopping the local stack")
		ls.close()
		fmt.Fprintln(out, "stopped")
	}()

	dctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	dctx, cancelTimeout := context.WithTimeoutCause(dctx, cfg.Timeout, fmt.Errorf("the demo did not finish within --timeout %s", cfg.Timeout))
	defer cancelTimeout()
	go ls.watchWorker(dctx, cancel)
	defer func() {
		if err == nil {
			return
		}
		switch {
		case ctx.Err() != nil:
			err = errInterrupted
		case dctx.Err() != nil && context.Cause(dctx) != nil && !errors.Is(context.Cause(dctx), context.Canceled):
			err = fmt.Errorf("%w (%v)", context.Cause(dctx), err)
		}
	}()

	if err := ls.settleLeftovers(dctx, out, demoPrefix); err != nil {
		return err
	}
	staker := ls.solanaStakers()[0].String()
	fmt.Fprintf(out, "  staker:     %s (funded with %d SOL)\n", staker, cfg.StakerSOL)
	suffix := demoSuffix()

	// The Polygon flow runs beside the Solana one (each waits on its own chain); its output is
	// printed once the Solana flow is done.
	var polygonOut outputBuffer
	var polygonDone chan error
	if ls.EVM != nil {
		polygonDone = make(chan error, 1)
		go func() { polygonDone <- ls.polygonDemo(dctx, &polygonOut, suffix) }()
	}

	stakeID := demoPrefix + "stake-" + suffix
	fmt.Fprintf(out, "\n1/2 stake %s SOL\n", demoSOL)
	res, err := ls.runStarter(dctx, out, nil, "stake", "--network", demoNetwork, "--staker", staker, "--sol", demoSOL, "--id", stakeID, "--wait")
	if err != nil {
		return fmt.Errorf("stake %s failed: %w", stakeID, err)
	}
	if res.StakeAccount == "" {
		return fmt.Errorf("stake %s finished without a stake account", stakeID)
	}

	// A stake becomes active at the next epoch; unstaking it before then would end it at once,
	// with no deactivation to wait for.
	from, to, err := warpEpochs(dctx, ls.Sandbox.Runtime().URL(), 1)
	if err != nil {
		return fmt.Errorf("moving the chain to the next epoch so the stake becomes active: %w", err)
	}
	fmt.Fprintf(out, "  (devstack) warped the chain from epoch %d to epoch %d (sandbox_warpEpochs): the stake is active from this epoch on\n", from, to)

	unstakeID := demoPrefix + "unstake-" + suffix
	fmt.Fprintf(out, "\n2/2 unstake stake account %s: deactivate, wait for the epoch to end, withdraw\n", res.StakeAccount)
	watch := newStepWatch(out, wfsolana.StepWaitingDeactivation)
	warper := func(wctx context.Context) { ls.warpWhenWaiting(wctx, out, watch) }
	if _, err := ls.runStarter(dctx, watch, warper, "unstake", "--network", demoNetwork, "--staker", staker,
		"--stake-account", res.StakeAccount, "--id", unstakeID, "--wait"); err != nil {
		return fmt.Errorf("unstake %s failed: %w", unstakeID, err)
	}

	fmt.Fprintf(out, "\ndemo finished: %s SOL staked, unstaked and withdrawn back to %s\n", demoSOL, staker)
	fmt.Fprintf(out, "  %s\n  %s\n", ls.workflowURL(stakeID), ls.workflowURL(unstakeID))
	if ls.Celestia != nil {
		if err := ls.celestiaDemo(dctx, out, suffix); err != nil {
			return err
		}
	}
	if polygonDone != nil {
		fmt.Fprintln(out, "\nPolygon (it ran beside the Solana flow; its output, as it went):")
		perr := <-polygonDone
		_, _ = out.Write(polygonOut.Bytes())
		if perr != nil {
			return perr
		}
	}
	return nil
}

// demoTIA is what the Celestia part of the demo delegates.
const demoTIA = "5"

// celestiaDemo delegates TIA on the sandbox's Celestia ledger: built and signed by the worker,
// broadcast through endpoint 3, confirmed by hash on the ledger's REST endpoint.
func (ls *localStack) celestiaDemo(ctx context.Context, out io.Writer, suffix string) error {
	c := ls.Celestia
	delegator, validator := ls.celestiaDelegators()[0], sandbox.CelestiaValidators[0]
	fmt.Fprintf(out, "\nCelestia (the sandbox's Celestia ledger, %s)\n  delegator: %s\n  validator: %s\n", stack.CelestiaNetwork, delegator, validator)
	id := demoPrefix + "celestia-delegate-" + suffix
	fmt.Fprintf(out, "\ndelegate %s TIA: MsgDelegate, SIGN_MODE_DIRECT, sent through endpoint 3, confirmed by hash\n", demoTIA)
	var res wfcelestia.Result
	if err := ls.runStarterInto(ctx, out, nil, &res, "celestia", "delegate", "--network", stack.CelestiaNetwork, "--delegator", delegator,
		"--validator", validator, "--tia", demoTIA, "--id", id, "--wait"); err != nil {
		return fmt.Errorf("celestia delegate %s failed: %w", id, err)
	}
	for _, d := range c.Ledger.Snapshot().Delegations {
		if d.Delegator == delegator {
			fmt.Fprintf(out, "  the ledger holds %s utia delegated by %s to %s\n", d.Amount, d.Delegator, d.Validator)
		}
	}
	fmt.Fprintf(out, "  %s\n", ls.workflowURL(id))
	return nil
}

// demoPOL and demoUnstakePOL are what the Polygon part of the demo delegates and unstakes.
const (
	demoPOL        = "100"
	demoUnstakePOL = "40"
)

// polygonDemo delegates POL on the local EVM chain, then unstakes part of it: the operation waits
// for the withdrawal delay (devstack advances the checkpoints once it waits) and claims it.
func (ls *localStack) polygonDemo(ctx context.Context, out io.Writer, suffix string) error {
	e := ls.EVM
	staker, share := ls.evmStakers()[0].Hex(), e.Deployment.Validators[0].Share.Hex()
	fmt.Fprintf(out, "\nPolygon (POL staking on the local EVM chain, geth --dev with stand-in staking contracts)\n")
	fmt.Fprintf(out, "  staker:          %s\n  validator share: %s\n", staker, share)
	delegateID := demoPrefix + "polygon-delegate-" + suffix
	fmt.Fprintf(out, "\n1/2 delegate %s POL: approve exactly that, then buyVoucherPOL, each final\n", demoPOL)
	var res wfpolygon.Result
	if err := ls.runStarterInto(ctx, out, nil, &res, "polygon", "delegate", "--network", stack.EVMNetwork, "--staker", staker,
		"--validator-share", share, "--pol", demoPOL, "--id", delegateID, "--wait"); err != nil {
		return fmt.Errorf("polygon delegate %s failed: %w", delegateID, err)
	}
	unstakeID := demoPrefix + "polygon-unstake-" + suffix
	fmt.Fprintf(out, "\n2/2 unstake %s POL: sellVoucher_newPOL, wait for the withdrawal delay, claim\n", demoUnstakePOL)
	watch := newStepWatch(out, wfpolygon.StepWaitingWithdrawal)
	advance := func(actx context.Context) {
		select {
		case <-actx.Done():
			return
		case <-watch.seen:
		}
		delay, err := e.Deployment.WithdrawalDelay(actx)
		if err == nil {
			err = e.Deployment.AdvanceEpochs(actx, delay+1)
		}
		if err != nil {
			if actx.Err() == nil {
				fmt.Fprintf(out, "  (devstack) advancing the checkpoints failed: %v\n", err)
			}
			return
		}
		fmt.Fprintf(out, "  (devstack) advanced the StakeManager %d checkpoints: the withdrawal delay has passed when the workflow looks again\n", delay+1)
	}
	if err := ls.runStarterInto(ctx, watch, advance, &res, "polygon", "unstake", "--network", stack.EVMNetwork, "--staker", staker,
		"--validator-share", share, "--pol", demoUnstakePOL, "--id", unstakeID, "--wait"); err != nil {
		return fmt.Errorf("polygon unstake %s failed: %w", unstakeID, err)
	}
	fmt.Fprintf(out, "\ndemo finished: %s POL delegated, %s POL unstaked and claimed back to %s\n", demoPOL, demoUnstakePOL, staker)
	fmt.Fprintf(out, "  %s\n  %s\n", ls.workflowURL(delegateID), ls.workflowURL(unstakeID))
	return nil
}

// runStarter runs one starter command against the stack, printing the command line first and
// the operation's Web UI page last; alongside, if not nil, runs with a context ended when the
// starter returns. It returns the operation's result.
func (ls *localStack) runStarter(ctx context.Context, out io.Writer, alongside func(context.Context), args ...string) (wfsolana.Result, error) {
	var res wfsolana.Result
	err := ls.runStarterInto(ctx, out, alongside, &res, args...)
	return res, err
}

// runStarterInto is runStarter for any chain's result: it decodes the operation's result into res.
func (ls *localStack) runStarterInto(ctx context.Context, out io.Writer, alongside func(context.Context), res any, args ...string) error {
	fmt.Fprintf(out, "$ %s go run ./cmd/starter %s\n", ls.starterEnv(), strings.Join(args, " "))
	var id string
	for i, a := range args {
		if a == "--id" && i+1 < len(args) {
			id = args[i+1]
		}
	}
	var wg sync.WaitGroup
	actx, stop := context.WithCancel(ctx)
	if alongside != nil {
		wg.Add(1)
		go func() { defer wg.Done(); alongside(actx) }()
	}
	args = append(append([]string{}, args...), "--temporal-address", ls.TemporalAddress())
	if ls.keyset != "" {
		args = append(args, "--payload-keyset", ls.keyset)
	}
	err := starter.Run(ctx, args, out, nil, all.StarterGroups()...)
	stop()
	wg.Wait()
	if id != "" {
		fmt.Fprintf(out, "  Web UI: %s\n", ls.workflowURL(id))
	}
	if err != nil {
		return err
	}
	if err := ls.Client.GetWorkflow(ctx, id, "").Get(ctx, res); err != nil {
		return fmt.Errorf("reading the result of %s: %w", id, err)
	}
	return nil
}

// stepWatch passes writes through and closes seen the first time one holds marker: the
// starter's line for a step, so what devstack does on that step prints after it.
type stepWatch struct {
	w      io.Writer
	marker []byte
	seen   chan struct{}
	once   sync.Once
}

func newStepWatch(w io.Writer, step string) *stepWatch {
	return &stepWatch{w: w, marker: []byte("  " + step), seen: make(chan struct{})}
}

func (s *stepWatch) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if bytes.Contains(p, s.marker) {
		s.once.Do(func() { close(s.seen) })
	}
	return n, err
}

// warpWhenWaiting moves the chain one epoch forward once the starter has printed the step
// waiting-deactivation, so the stake is inactive when the workflow reads it again.
func (ls *localStack) warpWhenWaiting(ctx context.Context, out io.Writer, watch *stepWatch) {
	select {
	case <-ctx.Done():
		return
	case <-watch.seen:
	}
	from, to, err := warpEpochs(ctx, ls.Sandbox.Runtime().URL(), 1)
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(out, "  (devstack) epoch warp failed, so the workflow waits out the epoch: %v\n", err)
		}
		return
	}
	fmt.Fprintf(out, "  (devstack) warped the chain from epoch %d to epoch %d (sandbox_warpEpochs): the deactivation is complete when the workflow looks again\n", from, to)
}

// demoSuffix makes the demo's operation IDs unique across runs that share a database.
func demoSuffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// outputBuffer is a buffer safe for one writer and a later reader.
type outputBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *outputBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Bytes is what was written so far.
func (b *outputBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf.Bytes()...)
}
