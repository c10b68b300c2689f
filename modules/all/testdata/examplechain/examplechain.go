// Package examplechain is a chain-shaped module as small as one can be: one operation (a
// transfer) on a ledger kept in memory, run through the operation core like every chain's. It is
// the template of "Adding a chain" (docs/adding-a-chain.md); modules/all's test adds it to the
// worker with its own folder and two lines in modules/all, and runs it.
package examplechain

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"sync"

	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/workflows"
)

// Module is the module's name: its task queue is <prefix>-example.
const Module = "example"

// TransferWorkflowType is the transfer's workflow type.
const TransferWorkflowType = "ExampleTransferWorkflow"

// TransferInput is what a transfer asks: Amount units from the worker's key to To.
type TransferInput struct {
	Network string `json:"network"`
	To      string `json:"to"`
	Amount  uint64 `json:"amount"`
}

// Result is the transfer's record.
type Result struct {
	Transaction workflows.TxRecord `json:"transaction"`
}

// Transfer runs one transfer exactly once through the core.
func Transfer(ctx workflow.Context, in TransferInput) (Result, error) {
	if in.To == "" || in.Amount == 0 {
		return Result{}, temporal.NewNonRetryableApplicationError("invalid transfer: give to and a positive amount", activities.ErrInvalidInput, nil)
	}
	o, err := workflows.NewOperation(ctx, workflows.Setup{Chain: Module, Network: in.Network, Operation: "transfer",
		Staker: "worker", Amount: strconv.FormatUint(in.Amount, 10), Unit: "unit"})
	if err != nil {
		return Result{}, err
	}
	rec, err := o.Transact(ctx, &tx{in: in})
	if err != nil {
		return Result{}, o.Fail(ctx, err)
	}
	o.Done(ctx)
	return Result{Transaction: rec}, nil
}

// ea names the activities in the workflow.
var ea *Activities

// tx is the transfer's step for the core's transact loop.
type tx struct {
	in      TransferInput
	built   []byte
	signed  Signed
	outcome string
}

func (t *tx) Kind() string { return "transfer" }
func (t *tx) Build(int) workflows.Call {
	return workflows.Call{Activity: ea.ExampleBuild, Input: t.in, Result: &t.built}
}
func (t *tx) Check(workflow.Context, *workflows.Operation) error { return nil }
func (t *tx) Sign() workflows.Call {
	return workflows.Call{Activity: ea.ExampleSign, Input: SignInput{Intent: t.in, Unsigned: t.built}, Result: &t.signed}
}
func (t *tx) Signed() workflows.Signed {
	return workflows.Signed{TxID: t.signed.ID, Expiry: "none", MaxFee: "0"}
}
func (t *tx) Fresh() workflows.Call { return workflows.Call{} }
func (t *tx) Broadcast() workflows.Call {
	return workflows.Call{Activity: ea.ExampleSend, Input: t.signed}
}
func (t *tx) Confirm() workflows.Call {
	return workflows.Call{Activity: ea.ExampleConfirm, Input: t.signed.ID, Result: &t.outcome}
}
func (t *tx) Confirmed() workflows.Confirmed {
	return workflows.Confirmed{Outcome: t.outcome, Block: 1, Fee: "0"}
}

// SignInput is what the signer holds to exact expectation.
type SignInput struct {
	Intent   TransferInput `json:"intent"`
	Unsigned []byte        `json:"unsigned"`
}

// Signed is a signed transfer.
type Signed struct {
	ID        string `json:"id"`
	Unsigned  []byte `json:"unsigned"`
	Signature []byte `json:"signature"`
}

// Ledger is the chain: the transfers it holds, by ID.
type Ledger struct {
	mu  sync.Mutex
	Txs map[string]Signed
}

// Activities are the example chain's activities.
type Activities struct {
	Key    ed25519.PrivateKey
	Ledger *Ledger
}

// encode is the one encoding of an intent: what the service would build and the signer expects.
func encode(in TransferInput) []byte {
	return []byte(fmt.Sprintf("transfer %d to %s on %s", in.Amount, in.To, in.Network))
}

// ExampleBuild stands for the staking service: it returns the unsigned transaction.
func (a *Activities) ExampleBuild(_ context.Context, in TransferInput) ([]byte, error) {
	return encode(in), nil
}

// ExampleSign signs only the transaction the intent calls for, byte for byte.
func (a *Activities) ExampleSign(_ context.Context, in SignInput) (Signed, error) {
	if !bytes.Equal(in.Unsigned, encode(in.Intent)) {
		return Signed{}, temporal.NewNonRetryableApplicationError("the unsigned transaction is not the intent's", activities.ErrInvalidInput, nil)
	}
	sig := ed25519.Sign(a.Key, in.Unsigned)
	return Signed{ID: hex.EncodeToString(sig[:8]), Unsigned: in.Unsigned, Signature: sig}, nil
}

// ExampleSend puts the signed transfer on the ledger (the same bytes again change nothing).
func (a *Activities) ExampleSend(_ context.Context, s Signed) error {
	if !ed25519.Verify(a.Key.Public().(ed25519.PublicKey), s.Unsigned, s.Signature) {
		return errors.New("the ledger refuses a bad signature")
	}
	a.Ledger.mu.Lock()
	defer a.Ledger.mu.Unlock()
	a.Ledger.Txs[s.ID] = s
	return nil
}

// ExampleConfirm is the ledger's final word: finalized once it holds the transfer.
func (a *Activities) ExampleConfirm(_ context.Context, id string) (string, error) {
	a.Ledger.mu.Lock()
	defer a.Ledger.mu.Unlock()
	if _, ok := a.Ledger.Txs[id]; ok {
		return activities.OutcomeFinalized, nil
	}
	return activities.OutcomeCannotLand, nil
}

// StarterGroups is the chain's command group: `starter example transfer --network N --to X --amount N`.
func (c *Chain) StarterGroups() []starter.Group {
	return []starter.Group{{Name: Module, NoVerb: "example: give a command: transfer",
		Usage: "Example:\n  example transfer  --network N --to NAME --amount N [--id ID]\n",
		Command: func(s *starter.Session, fs *flag.FlagSet, verb string) (func(context.Context) error, error) {
			if verb != "transfer" {
				return nil, &starter.UsageError{Msg: fmt.Sprintf("example: unknown command %q (transfer)", verb)}
			}
			var in TransferInput
			var id string
			fs.StringVar(&in.Network, "network", "", "the network")
			fs.StringVar(&in.To, "to", "", "who receives")
			fs.Uint64Var(&in.Amount, "amount", 0, "units")
			fs.StringVar(&id, "id", "", "operation ID (default: generated)")
			return func(ctx context.Context) error {
				if in.To == "" || in.Amount == 0 {
					return &starter.UsageError{Msg: "example transfer: give --to and a positive --amount"}
				}
				var err error
				if id, err = starter.OperationID(id, "example-transfer"); err != nil {
					return &starter.UsageError{Msg: "example transfer: " + err.Error()}
				}
				return s.Launch(ctx, starter.Op{Module: Module, ID: id, Summary: "transfer", Name: TransferWorkflowType,
					Workflow: TransferWorkflowType, Input: in})
			}, nil
		}}}
}

// Chain is the module: its settings, its queue, its keys.
type Chain struct {
	Network string
	Ledger  *Ledger
}

// New is the module, off until --example-network names a network.
func New() *Chain { return &Chain{Ledger: &Ledger{Txs: map[string]Signed{}}} }

func (c *Chain) Name() string { return Module }
func (c *Chain) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.Network, "example-network", "", "the example chain's network")
}
func (c *Chain) Enabled() bool   { return c.Network != "" }
func (c *Chain) Validate() error { return nil }
func (c *Chain) Workflows(r sdkworker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Transfer, workflow.RegisterOptions{Name: TransferWorkflowType})
}

// Build makes the module's key and activities.
func (c *Chain) Build(context.Context, module.Env) (module.Built, error) {
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		return module.Built{}, err
	}
	return module.Built{Activities: []any{&Activities{Key: key, Ledger: c.Ledger}}, Keys: func() int { return 1 }}, nil
}
