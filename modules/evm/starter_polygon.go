package evm

import (
	"context"
	"flag"
	"fmt"
	"github.com/stakeflow/stakeflow/internal/starter"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/sdk/client"

	wfevm "github.com/stakeflow/stakeflow/workflows/evm"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
)

// polygonCmd is the Polygon command group: delegate, unstake (then wait and claim), withdraw
// rewards, restake.
func polygonCmd(r *starter.Session, fs *flag.FlagSet, verb string) (func(context.Context) error, error) {
	var network, staker, share, polAmount, weiAmount, requestedBy, id string
	var wait bool
	fs.StringVar(&network, "network", "", "Ethereum network holding Polygon staking: mainnet, sepolia or dev")
	fs.StringVar(&staker, "staker", "", "staker address (0x..., the key that signs)")
	fs.StringVar(&share, "validator-share", "", "the validator's ValidatorShare contract (0x...), on the worker's allow-list")
	fs.StringVar(&requestedBy, "requested-by", starter.CurrentUser(), "who starts the operation (cannot approve it)")
	fs.StringVar(&id, "id", "", "operation ID (default: generated and printed)")
	fs.BoolVar(&wait, "wait", false, "follow the operation until it ends, printing each step")
	withAmount := verb == wfpolygon.OpDelegate || verb == wfpolygon.OpUnstake
	if withAmount {
		fs.StringVar(&polAmount, "pol", "", "amount in POL (at most 18 decimals)")
		fs.StringVar(&weiAmount, "wei", "", "amount in wei")
	}
	types := map[string]string{
		wfpolygon.OpDelegate: wfpolygon.DelegateWorkflowType, wfpolygon.OpUnstake: wfpolygon.UnstakeWorkflowType,
		wfpolygon.OpWithdrawRewards: wfpolygon.WithdrawRewardsWorkflowType, wfpolygon.OpRestake: wfpolygon.RestakeWorkflowType,
	}
	wfType, ok := types[verb]
	if !ok {
		return nil, &starter.UsageError{Msg: fmt.Sprintf("polygon: unknown command %q (delegate, unstake, withdraw-rewards, restake)", verb)}
	}
	return func(ctx context.Context) error {
		fail := func(err error) error { return &starter.UsageError{Msg: "polygon " + verb + ": " + err.Error()} }
		var in any
		amount := ""
		if withAmount {
			w, err := starter.ParseWei(weiAmount, polAmount)
			if err != nil {
				return fail(err)
			}
			amount = w
			d := wfpolygon.DelegateInput{Network: network, Staker: staker, ValidatorShare: share, Amount: amount, RequestedBy: requestedBy}
			if err := d.Validate(); err != nil {
				return fail(err)
			}
			in = d
		} else {
			rw := wfpolygon.RewardsInput{Network: network, Staker: staker, ValidatorShare: share, RequestedBy: requestedBy}
			if err := rw.Validate(); err != nil {
				return fail(err)
			}
			in = rw
		}
		var err error
		if id, err = starter.OperationID(id, "polygon-"+verb); err != nil {
			return fail(err)
		}
		stakerHex := common.HexToAddress(staker).Hex()
		return r.Launch(ctx, starter.Op{Module: wfevm.Module, ID: id, Name: wfType, Workflow: wfType, Input: in,
			Summary: wfpolygon.Summary(verb, network, stakerHex, common.HexToAddress(share).Hex(), amount),
			Attrs:   wfpolygon.Attributes(verb, network, stakerHex), Wait: wait, Result: polygonResult})
	}, nil
}

func polygonResult(run client.WorkflowRun, ctx context.Context) (any, string, error) {
	var res wfpolygon.Result
	err := run.Get(ctx, &res)
	var b strings.Builder
	fmt.Fprintf(&b, "done: polygon %s", res.Operation)
	if res.Amount != "" {
		fmt.Fprintf(&b, " %s", wfpolygon.FormatPOL(res.Amount))
	}
	fmt.Fprintf(&b, "\n  validator share: %s", res.ValidatorShare)
	if res.UnbondNonce != 0 {
		fmt.Fprintf(&b, "\n  unbond:          %d (claimed)", res.UnbondNonce)
	}
	for _, t := range res.Transactions {
		fmt.Fprintf(&b, "\n  %-16s tx %s (block %d, builds %d, fee %s wei)", t.Kind, t.TxID, t.Block, t.Builds, starter.OrDash(t.Fee))
	}
	if res.CancelRequested {
		b.WriteString("\n  a cancel arrived after broadcast: the transaction was followed to its end")
	}
	return res, b.String(), err
}

// polygonGroup is the polygon command group of `starter`.
func polygonGroup() starter.Group {
	return starter.Group{Name: "polygon", NoVerb: "polygon: give a command: delegate, unstake, withdraw-rewards, restake", Command: polygonCmd,
		Usage: `Polygon (POL staking on Ethereum; amounts with --pol X (18 decimals) or --wei N):
  polygon delegate          --network N --staker 0xADDR --validator-share 0xADDR (--pol X | --wei N) [--id ID] [--wait]
  polygon unstake           --network N --staker 0xADDR --validator-share 0xADDR (--pol X | --wei N) [--id ID] [--wait]
  polygon withdraw-rewards  --network N --staker 0xADDR --validator-share 0xADDR [--id ID] [--wait]
  polygon restake           --network N --staker 0xADDR --validator-share 0xADDR [--id ID] [--wait]
`}
}

// StarterGroups are the module's command groups of `starter`: polygon and eigenlayer.
func (m *Module) StarterGroups() []starter.Group {
	return []starter.Group{polygonGroup(), eigenLayerGroup()}
}
