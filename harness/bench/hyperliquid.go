package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/stakeflow/stakeflow/activities"
	acthl "github.com/stakeflow/stakeflow/activities/hyperliquid"
	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/lease"
	wfhyperliquid "github.com/stakeflow/stakeflow/workflows/hyperliquid"
)

// BareHyperliquid withdraws as HyperliquidWithdrawWorkflow does up to the point where the
// withdrawal's fate is final, with no Temporal server: it calls the worker's own Hyperliquid
// activities in-process, in the workflow's order (the delegator's account, for the pending limit
// and the withdrawals already known; the request of endpoint 6; its verification and signature;
// its submission to the exchange; the account again until the delegator's history shows the
// withdrawal). No history, no task queue, no lease workflow: one withdrawal at a time per
// delegator holds the delegator, as the workflow's lease does. The queue to spot that follows is
// the chain's time and is not part of it.
type BareHyperliquid struct {
	Acts    *acthl.Activities
	Network string

	mu    sync.Mutex
	addrs map[common.Address]*sync.Mutex
}

// Withdraw withdraws hype HYPE of delegator's staking balance and waits until the delegator's
// history shows the withdrawal.
func (b *BareHyperliquid) Withdraw(ctx context.Context, delegator common.Address, hype string) error {
	wei, err := wfhyperliquid.WeiOf(hype)
	if err != nil {
		return err
	}
	lock := b.delegator(delegator)
	lock.Lock()
	defer lock.Unlock()
	call := activityCaller(ctx, b.Acts)
	who := delegator.Hex()
	var before acthl.Account
	if err := call(b.Acts.HLReadAccount, acthl.AccountInput{Network: b.Network, Delegator: who}, &before); err != nil {
		return fmt.Errorf("account: %w", err)
	}
	if n := len(before.Pending); n >= acthl.MaxPending {
		return fmt.Errorf("%s has %d withdrawals pending, Hyperliquid's limit; nothing was signed", who, n)
	}
	known := acthl.Hashes(before.Account)
	rin := acthl.RequestInput{Network: b.Network, Delegator: who, Amount: hype}
	var used []uint64
	for requests := 1; ; requests++ {
		if requests > bareMaxBuilds {
			return fmt.Errorf("the exchange refused the nonce of each of %d requests (nonces %v)", bareMaxBuilds, used)
		}
		var req acthl.Request
		if err := call(b.Acts.HLRequest, rin, &req); err != nil {
			return fmt.Errorf("request: %w", err)
		}
		var signed acthl.Signed
		if err := call(b.Acts.HLSign, acthl.SignInput{RequestInput: rin, Unsigned: req.Unsigned, EchoedAmount: req.Amount, UsedNonces: used}, &signed); err != nil {
			return fmt.Errorf("sign: %w", err)
		}
		used = append(used, signed.Nonce)
		var sub acthl.SubmitResult
		if err := call(b.Acts.HLSubmit, acthl.SubmitInput{Network: b.Network, Delegator: who, Signed: signed, Known: known}, &sub); err != nil {
			return fmt.Errorf("submit nonce %d: %w", signed.Nonce, err)
		}
		switch sub.Outcome {
		case acthl.OutcomeSent:
			return b.follow(ctx, call, who, wei, signed.Nonce, known)
		case acthl.OutcomeNonceRefused:
			continue
		default:
			return fmt.Errorf("the exchange refused the withdrawal of nonce %d: %s", signed.Nonce, sub.Reason)
		}
	}
}

// follow reads the delegator's account until its history shows the withdrawal of the action
// signed with nonce (acthl.Fate), waiting between reads as the workflow does (the worker's
// recheck, at most a minute), at most bareMaxReads reads.
func (b *BareHyperliquid) follow(ctx context.Context, call func(fn, in, out any) error, who string, wei, nonce uint64, known []string) error {
	for reads := 1; ; reads++ {
		var acc acthl.Account
		if err := call(b.Acts.HLReadAccount, acthl.AccountInput{Network: b.Network, Delegator: who}, &acc); err != nil {
			return fmt.Errorf("account after nonce %d: %w", nonce, err)
		}
		switch _, outcome := acthl.Fate(acc, wei, nonce, known); outcome {
		case activities.OutcomeFinalized:
			return nil
		case activities.OutcomeCannotLand:
			return fmt.Errorf("the action of nonce %d cannot land", nonce)
		}
		if reads == bareMaxReads {
			return fmt.Errorf("the delegator's history does not show the withdrawal of nonce %d after %d reads", nonce, reads)
		}
		wait := time.Minute
		if acc.RecheckAfter > 0 {
			wait = min(acc.RecheckAfter, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// bareMaxBuilds is the workflows' default Options.MaxBuilds; bareMaxReads how many reads the
// workflow makes before it treats a withdrawal its history does not show as stalled.
const (
	bareMaxBuilds = 3
	bareMaxReads  = 5
)

func (b *BareHyperliquid) delegator(d common.Address) *sync.Mutex {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.addrs == nil {
		b.addrs = map[common.Address]*sync.Mutex{}
	}
	if b.addrs[d] == nil {
		b.addrs[d] = &sync.Mutex{}
	}
	return b.addrs[d]
}

// hyperliquidNetwork is the network both Hyperliquid sides withdraw on: the sandbox's testnet,
// whose queue to spot (5 minutes) the workflows wait out on their own after the measurement.
const hyperliquidNetwork = "testnet"

// hyperliquidOp withdraws the i-th operation's HYPE through the workflow, started as the admin
// tool starts it, and returns once the delegator's history shows the withdrawal: when the workflow
// gives the delegator's lease back (untilLeaseReleased).
func (e *env) hyperliquidOp(ctx context.Context, i int) error {
	delegator := e.hyperliquidDelegator(i, 0)
	in := wfhyperliquid.WithdrawInput{Network: hyperliquidNetwork, Delegator: delegator.Hex(), Amount: e.cfg.HyperliquidHYPE}
	who := strings.ToLower(delegator.Hex())
	opts := starter.StartOptions(e.idFor("hyperliquid-withdraw", i),
		wfhyperliquid.Summary(wfhyperliquid.OpWithdraw, in.Network, who, in.Amount), benchQueue(wfhyperliquid.Module),
		wfhyperliquid.Attributes(wfhyperliquid.OpWithdraw, in.Network, who)...)
	run, err := e.c.ExecuteWorkflow(ctx, opts, wfhyperliquid.WithdrawWorkflowType, in)
	if err != nil {
		return err
	}
	return e.untilLeaseReleased(ctx, run)
}

func (e *env) bareHyperliquidOp(ctx context.Context, i int) error {
	return e.bareHyperliquid.Withdraw(ctx, e.hyperliquidDelegator(i, 1), e.cfg.HyperliquidHYPE)
}

// untilLeaseReleased follows run's history as the server writes it (a long poll) until the
// workflow signals its lease back (lease.SignalRelease): for a withdrawal, the moment the
// delegator's history shows it and its fate is final. A run that closes first ends the wait with
// its outcome.
func (e *env) untilLeaseReleased(ctx context.Context, run client.WorkflowRun) error {
	it := e.c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), true, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return err
		}
		if a := ev.GetSignalExternalWorkflowExecutionInitiatedEventAttributes(); a != nil && a.GetSignalName() == lease.SignalRelease {
			return nil
		}
		if closes(ev) {
			var res wfhyperliquid.WithdrawResult
			if err := run.Get(ctx, &res); err != nil {
				return err
			}
			return nil
		}
	}
	return errors.New("the history ended before the workflow gave its lease back")
}

// closes reports whether ev closes its run.
func closes(ev *history.HistoryEvent) bool {
	switch ev.GetEventType() {
	case enums.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enums.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
		enums.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enums.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
		enums.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED, enums.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
		return true
	}
	return false
}

// hyperliquidDelegators is how many delegators each Hyperliquid side withdraws from: one per
// concurrent withdrawal, and more when a round would otherwise give one delegator more than
// Hyperliquid's limit of pending withdrawals (the queue is warped before each round).
func hyperliquidDelegators(cfg Config) int {
	perRound := cfg.HyperliquidOps - cfg.HyperliquidOps/chainRounds
	return max(cfg.HyperliquidConcurrency, (perRound+acthl.MaxPending-1)/acthl.MaxPending)
}

// hyperliquidDelegator is the i-th operation's delegator on a side (0 orchestrated, 1 bare): each
// side has delegators of its own (hyperliquidDelegators), after the Polygon sides' EVM keys.
func (e *env) hyperliquidDelegator(i, side int) common.Address {
	n := hyperliquidDelegators(e.cfg)
	return e.st.EVM.Stakers[evmKeysOf(e.cfg).hyperliquid+side*n+i%n]
}

// measureHyperliquid measures the Hyperliquid withdrawal on both sides. Every delegator is funded
// first, and before each round the sandbox's L1 clock is moved past the queue, so that the
// withdrawals of the rounds before have reached spot on the exchange and no delegator reaches the
// pending limit.
func (e *env) measureHyperliquid(ctx context.Context) (*ChainReport, error) {
	wei, err := wfhyperliquid.WeiOf(e.cfg.HyperliquidHYPE)
	if err != nil {
		return nil, err
	}
	n := hyperliquidDelegators(e.cfg)
	for side := range 2 {
		for i := range n {
			e.st.Sandbox.HyperliquidFund(hyperliquidNetwork, e.hyperliquidDelegator(i, side), wei*uint64(e.cfg.HyperliquidOps+1))
		}
	}
	rep := &ChainReport{Operation: "Hyperliquid withdrawal (cWithdraw requested, signed and taken by the sandbox's exchange)",
		Concurrency: e.cfg.HyperliquidConcurrency, Ops: e.cfg.HyperliquidOps,
		about: fmt.Sprintf("Each withdrawal of %s HYPE is measured from its start until the delegator's history shows it (its fate final, the delegator's lease given back); "+
			"the queue to spot after it (%s on %s) is not: the workflows wait it out afterwards on durable timers. Before each round the sandbox's L1 clock is moved past the queue, "+
			"so that no delegator reaches Hyperliquid's %d pending withdrawals. The exchange runs in the benchmark's process.",
			e.cfg.HyperliquidHYPE, sandbox.HyperliquidQueue(hyperliquidNetwork), hyperliquidNetwork, acthl.MaxPending),
		prepare: func() { e.st.Sandbox.HyperliquidWarp(hyperliquidNetwork, sandbox.HyperliquidQueue(hyperliquidNetwork)) }}
	return rep, e.measureChain(ctx, rep, e.hyperliquidOp, e.bareHyperliquidOp, 0)
}
