package hyperliquid

import (
	"context"
	"flag"
	"fmt"
	"github.com/stakeflow/stakeflow/internal/starter"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/sdk/client"

	wfhyperliquid "github.com/stakeflow/stakeflow/workflows/hyperliquid"
)

// hyperliquidCmd is the Hyperliquid command group: withdraw staking rewards to spot.
func hyperliquidCmd(r *starter.Session, fs *flag.FlagSet, verb string) (func(context.Context) error, error) {
	if verb != wfhyperliquid.OpWithdraw {
		return nil, &starter.UsageError{Msg: fmt.Sprintf("hyperliquid: unknown command %q (withdraw)", verb)}
	}
	var network, delegator, amount, requestedBy, id string
	var wait bool
	fs.StringVar(&network, "network", "", "Hyperliquid network: mainnet or testnet")
	fs.StringVar(&delegator, "delegator", "", "delegator address (0x..., the EVM key that signs)")
	fs.StringVar(&amount, "amount", "", "HYPE to move from the staking balance to spot (at most 8 decimals)")
	fs.StringVar(&requestedBy, "requested-by", starter.CurrentUser(), "who starts the operation (cannot approve it)")
	fs.StringVar(&id, "id", "", "operation ID (default: generated and printed)")
	fs.BoolVar(&wait, "wait", false, "follow the operation until it ends, printing each step")
	return func(ctx context.Context) error {
		fail := func(err error) error { return &starter.UsageError{Msg: "hyperliquid withdraw: " + err.Error()} }
		in := wfhyperliquid.WithdrawInput{Network: network, Delegator: delegator, Amount: amount, RequestedBy: requestedBy}
		if err := in.Validate(); err != nil {
			return fail(err)
		}
		var err error
		if id, err = starter.OperationID(id, "hyperliquid-withdraw"); err != nil {
			return fail(err)
		}
		who := strings.ToLower(common.HexToAddress(delegator).Hex())
		return r.Launch(ctx, starter.Op{Module: wfhyperliquid.Module, ID: id, Name: wfhyperliquid.WithdrawWorkflowType,
			Workflow: wfhyperliquid.WithdrawWorkflowType, Input: in, Summary: wfhyperliquid.Summary(wfhyperliquid.OpWithdraw, network, who, amount),
			Attrs: wfhyperliquid.Attributes(wfhyperliquid.OpWithdraw, network, who), Wait: wait, Result: hyperliquidResult})
	}, nil
}

func hyperliquidResult(run client.WorkflowRun, ctx context.Context) (any, string, error) {
	var res wfhyperliquid.WithdrawResult
	err := run.Get(ctx, &res)
	var b strings.Builder
	fmt.Fprintf(&b, "done: hyperliquid withdraw %s HYPE", res.Amount)
	fmt.Fprintf(&b, "\n  delegator:    %s", res.Delegator)
	fmt.Fprintf(&b, "\n  action:       nonce %d, digest %s (requests %d)", res.Nonce, res.Digest, res.Requests)
	fmt.Fprintf(&b, "\n  reached spot: %s", wfhyperliquid.FormatHYPE(res.ReachedSpot))
	fmt.Fprintf(&b, "\n  spot:         %s -> %s", wfhyperliquid.FormatHYPE(res.SpotBefore), wfhyperliquid.FormatHYPE(res.SpotAfter))
	return res, b.String(), err
}

// group is the hyperliquid command group of `starter`.
func group() starter.Group {
	return starter.Group{Name: "hyperliquid", NoVerb: "hyperliquid: give a command: withdraw", Command: hyperliquidCmd,
		Usage: `Hyperliquid (staking rewards to spot, after Hyperliquid's queue: 7 days on mainnet):
  hyperliquid withdraw      --network N --delegator 0xADDR --amount HYPE [--id ID] [--wait]
`}
}

// StarterGroups are the module's command groups of `starter`.
func (m *Module) StarterGroups() []starter.Group { return []starter.Group{group()} }
