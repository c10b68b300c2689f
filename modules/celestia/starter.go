package celestia

import (
	"context"
	"flag"
	"fmt"
	"github.com/stakeflow/stakeflow/internal/starter"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/stakeflow/stakeflow/chain/networks"
	wfcelestia "github.com/stakeflow/stakeflow/workflows/celestia"
)

// celestiaCmd is the Celestia command group: delegate, undelegate (then wait the unbonding
// period), redelegate, withdraw rewards.
func celestiaCmd(r *starter.Session, fs *flag.FlagSet, verb string) (func(context.Context) error, error) {
	types := map[string]string{
		wfcelestia.OpDelegate: wfcelestia.DelegateWorkflowType, wfcelestia.OpUndelegate: wfcelestia.UndelegateWorkflowType,
		wfcelestia.OpRedelegate: wfcelestia.RedelegateWorkflowType, wfcelestia.OpWithdrawRewards: wfcelestia.WithdrawRewardsWorkflowType,
	}
	wfType, ok := types[verb]
	if !ok {
		return nil, &starter.UsageError{Msg: fmt.Sprintf("celestia: unknown command %q (delegate, undelegate, redelegate, withdraw-rewards)", verb)}
	}
	var in wfcelestia.Input
	var id, tia string
	var wait bool
	fs.StringVar(&in.Network, "network", "", strings.Join(networks.Celestia.Names(), " or "))
	fs.StringVar(&in.Delegator, "delegator", "", "delegator address (celestia1..., the key that signs)")
	fs.StringVar(&in.Validator, "validator", "", "validator (celestiavaloper1...), on the worker's allow-list; the source of a redelegation")
	fs.StringVar(&in.RequestedBy, "requested-by", starter.CurrentUser(), "who starts the operation (cannot approve it)")
	fs.StringVar(&id, "id", "", "operation ID (default: generated and printed)")
	fs.BoolVar(&wait, "wait", false, "follow the operation until it ends, printing each step")
	if verb == wfcelestia.OpRedelegate {
		fs.StringVar(&in.DstValidator, "to-validator", "", "destination validator (celestiavaloper1...)")
	}
	withAmount := verb != wfcelestia.OpWithdrawRewards
	if withAmount {
		fs.StringVar(&in.Amount, "utia", "", "amount in utia")
		fs.StringVar(&tia, "tia", "", "amount in TIA (at most 6 decimals)")
	}
	return func(ctx context.Context) error {
		fail := func(err error) error { return &starter.UsageError{Msg: "celestia " + verb + ": " + err.Error()} }
		if withAmount {
			amount, err := starter.ParseUtia(in.Amount, tia)
			if err != nil {
				return fail(err)
			}
			in.Amount = amount
		}
		if err := in.ValidateFor(verb); err != nil {
			return fail(err)
		}
		var err error
		if id, err = starter.OperationID(id, "celestia-"+verb); err != nil {
			return fail(err)
		}
		return r.Launch(ctx, starter.Op{Module: wfcelestia.Module, ID: id, Summary: wfcelestia.Summary(verb, in), Name: wfType,
			Workflow: wfType, Input: in, Attrs: wfcelestia.Attributes(verb, in.Network, in.Delegator), Wait: wait, Result: celestiaResult})
	}, nil
}

func celestiaResult(run client.WorkflowRun, ctx context.Context) (any, string, error) {
	var res wfcelestia.Result
	err := run.Get(ctx, &res)
	var b strings.Builder
	fmt.Fprintf(&b, "done: celestia %s", res.Operation)
	if res.Amount != "" {
		fmt.Fprintf(&b, " %s", wfcelestia.FormatTIA(res.Amount))
	}
	fmt.Fprintf(&b, "\n  validator: %s", res.Validator)
	if res.DstValidator != "" {
		fmt.Fprintf(&b, "\n  to:        %s", res.DstValidator)
	}
	if res.UnbondedAt != "" {
		fmt.Fprintf(&b, "\n  unbonded:  %s (tokens back)", res.UnbondedAt)
	}
	for _, t := range res.Transactions {
		fmt.Fprintf(&b, "\n  %-16s tx %s (height %d, builds %d, fee %s utia)", t.Kind, t.TxID, t.Block, t.Builds, starter.OrDash(t.Fee))
	}
	return res, b.String(), err
}

// group is the celestia command group of `starter`.
func group() starter.Group {
	return starter.Group{Name: "celestia", NoVerb: "celestia: give a command: delegate, undelegate, redelegate, withdraw-rewards", Command: celestiaCmd,
		Usage: `Celestia (amounts with --tia X (6 decimals) or --utia N):
  celestia delegate          --network N --delegator celestia1... --validator celestiavaloper1... (--tia X | --utia N) [--id ID] [--wait]
  celestia undelegate        --network N --delegator celestia1... --validator celestiavaloper1... (--tia X | --utia N) [--id ID] [--wait]
  celestia redelegate        --network N --delegator celestia1... --validator celestiavaloper1... --to-validator celestiavaloper1... (--tia X | --utia N)
  celestia withdraw-rewards  --network N --delegator celestia1... --validator celestiavaloper1... [--id ID] [--wait]
`}
}

// StarterGroups are the module's command groups of `starter`.
func (m *Module) StarterGroups() []starter.Group { return []starter.Group{group()} }
