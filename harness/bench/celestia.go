package bench

import (
	"context"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/stakeflow/stakeflow/activities"
	actcelestia "github.com/stakeflow/stakeflow/activities/celestia"
	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/lease"
	"github.com/stakeflow/stakeflow/workflows"
	wfcelestia "github.com/stakeflow/stakeflow/workflows/celestia"
)

// BareCelestia delegates as CelestiaDelegateWorkflow does, with no Temporal server: it calls the
// worker's own Celestia activities in-process, in the workflow's order (the delegator's position,
// its account sequence, then build, verify and sign, send, confirm by hash). No history, no task
// queue, no lease workflow: one delegate at a time per delegator holds its sequence, as the
// workflow's lease does.
type BareCelestia struct {
	Acts    *actcelestia.Activities
	Network string
	Poll    time.Duration

	mu    sync.Mutex
	addrs map[string]*sync.Mutex
}

// Delegate delegates utia from delegator to validator and waits until the transaction is
// included.
func (b *BareCelestia) Delegate(ctx context.Context, delegator, validator, utia string) error {
	lock := b.delegator(delegator)
	lock.Lock()
	defer lock.Unlock()
	call := activityCaller(ctx, b.Acts)
	var p actcelestia.Position
	if err := call(b.Acts.CelestiaReadPosition, actcelestia.PositionInput{Network: b.Network, Delegator: delegator, Validator: validator}, &p); err != nil {
		return fmt.Errorf("position: %w", err)
	}
	balance, _ := new(big.Int).SetString(p.Balance, 10)
	want, _ := new(big.Int).SetString(utia, 10)
	if balance == nil || want == nil || balance.Cmp(want) < 0 {
		return fmt.Errorf("%s holds %s utia, less than the %s asked", delegator, p.Balance, utia)
	}
	var nonces lease.Nonces
	if err := call(b.Acts.CelestiaReadNonces, lease.ReadInput{Network: b.Network, Address: delegator}, &nonces); err != nil {
		return fmt.Errorf("sequence: %w", err)
	}
	seq := nonces.Pending
	intent := wfcelestia.Input{Network: b.Network, Delegator: delegator, Validator: validator, Amount: utia}.Intent(wfcelestia.OpDelegate)
	var built actcelestia.BuildResult
	if err := call(b.Acts.CelestiaBuild, actcelestia.BuildInput{Intent: intent, Sequence: &seq, Build: 1}, &built); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	var signed actcelestia.SignResult
	if err := call(b.Acts.CelestiaSign, actcelestia.SignInput{Intent: built.Intent, Unsigned: built.Unsigned, Account: built.Account}, &signed); err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	var sent actcelestia.BroadcastResult
	if err := call(b.Acts.CelestiaBroadcast, actcelestia.BroadcastInput{Network: b.Network, TxBase64: signed.TxBase64, Hash: signed.Hash}, &sent); err != nil {
		return fmt.Errorf("send %s: %w", signed.Hash, err)
	}
	var conf actcelestia.ConfirmResult
	if err := call(b.Acts.CelestiaConfirm, actcelestia.ConfirmInput{Network: b.Network, Delegator: delegator, Sequence: seq,
		Hashes: []string{signed.Hash}, TimeoutHeights: []uint64{built.Intent.TimeoutHeight}, FromHeight: built.Height + 1,
		PollInterval: b.Poll}, &conf); err != nil {
		return fmt.Errorf("confirm %s: %w", signed.Hash, err)
	}
	if conf.Outcome != activities.OutcomeFinalized {
		return fmt.Errorf("delegate %s ended %s: %s", signed.Hash, conf.Outcome, conf.Error)
	}
	return nil
}

func (b *BareCelestia) delegator(d string) *sync.Mutex {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.addrs == nil {
		b.addrs = map[string]*sync.Mutex{}
	}
	if b.addrs[d] == nil {
		b.addrs[d] = &sync.Mutex{}
	}
	return b.addrs[d]
}

// celestiaOp delegates the i-th operation's utia through the workflow.
func (e *env) celestiaOp(ctx context.Context, i int) error {
	delegator, validator := e.celestiaDelegator(i, 0)
	in := wfcelestia.Input{Network: stack.CelestiaNetwork, Delegator: delegator, Validator: validator,
		Amount: e.cfg.CelestiaUtia, Options: workflows.Options{ConfirmPollInterval: e.cfg.CelestiaConfirmPoll}}
	opts := starter.StartOptions(e.idFor("celestia-delegate", i), wfcelestia.Summary(wfcelestia.OpDelegate, in),
		benchQueue(wfcelestia.Module), wfcelestia.Attributes(wfcelestia.OpDelegate, in.Network, in.Delegator)...)
	run, err := e.c.ExecuteWorkflow(ctx, opts, wfcelestia.DelegateWorkflowType, in)
	if err != nil {
		return err
	}
	var res wfcelestia.Result
	return e.wait(ctx, run, &res)
}

func (e *env) bareCelestiaOp(ctx context.Context, i int) error {
	delegator, validator := e.celestiaDelegator(i, 1)
	return e.bareCelestia.Delegate(ctx, delegator, validator, e.cfg.CelestiaUtia)
}

// celestiaDelegator is the i-th operation's delegator and validator on a side (0 orchestrated, 1
// bare): each side has delegators of its own, as many as the concurrency (the orchestrated
// side's sequence lease would rightly take the bare side's transactions for a stranger's).
func (e *env) celestiaDelegator(i, side int) (string, string) {
	c := e.cfg.CelestiaConcurrency
	return e.st.Celestia.Delegators[side*c+i%c], sandbox.CelestiaValidators[i%len(sandbox.CelestiaValidators)]
}

// measureCelestia measures the Celestia delegate on both sides.
func (e *env) measureCelestia(ctx context.Context) (*ChainReport, error) {
	rep := &ChainReport{Operation: "Celestia delegate (MsgDelegate, included in the sandbox's ledger)",
		Concurrency: e.cfg.CelestiaConcurrency, Ops: e.cfg.CelestiaOps,
		about: fmt.Sprintf("Each delegate waits for its transaction to be included; the sandbox's ledger makes a block every %s and runs in the benchmark's process.", celestiaBlockTime)}
	return rep, e.measureChain(ctx, rep, e.celestiaOp, e.bareCelestiaOp, 0)
}

// celestiaBlockTime is how often the Celestia ledger makes a block (the stack's default).
const celestiaBlockTime = 500 * time.Millisecond
