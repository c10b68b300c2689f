package evm

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/stakeflow/stakeflow/internal/starter"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/stakeflow/stakeflow/workflows"
	wfeigenlayer "github.com/stakeflow/stakeflow/workflows/eigenlayer"
	wfevm "github.com/stakeflow/stakeflow/workflows/evm"
)

// eigenLayerCmd is the EigenLayer command group: checkpoint.
func eigenLayerCmd(r *starter.Session, fs *flag.FlagSet, verb string) (func(context.Context) error, error) {
	if verb != wfeigenlayer.OpCheckpoint {
		return nil, &starter.UsageError{Msg: fmt.Sprintf("eigenlayer: unknown command %q (checkpoint)", verb)}
	}
	var in wfeigenlayer.CheckpointInput
	var wait bool
	fs.StringVar(&in.Network, "network", "", "Ethereum network of the pod: mainnet, sepolia or dev")
	fs.StringVar(&in.Owner, "owner", "", "pod owner address (0x..., the key that signs startCheckpoint)")
	fs.StringVar(&in.Submitter, "submitter", "", "proof submitter address (0x..., the key that signs the proofs; default: the owner)")
	fs.StringVar(&in.RequestedBy, "requested-by", starter.CurrentUser(), "who starts the operation (cannot approve it)")
	fs.BoolVar(&wait, "wait", false, "follow the operation until it ends, printing each step")
	return func(ctx context.Context) error {
		if err := in.Validate(); err != nil {
			return &starter.UsageError{Msg: "eigenlayer checkpoint: " + err.Error()}
		}
		if r.SignsStarts() {
			// A checkpoint has no approval gate: a signed start would bind nothing.
			return &starter.UsageError{Msg: "eigenlayer checkpoint: --sign-key and --ssh-agent do not apply (a checkpoint waits for no approval)"}
		}
		c, err := r.Client()
		if err != nil {
			return err
		}
		defer c.Close()
		owner := common.HexToAddress(in.Owner).Hex()
		name, err := r.Searchable("eigenlayer checkpoint --owner", strings.ToLower(owner))
		if err != nil {
			return err
		}
		id := wfeigenlayer.CheckpointWorkflowIDOf(in.Network, name)
		summary := fmt.Sprintf("checkpoint the EigenPod of %s (%s)", owner, in.Network)
		queue := r.TaskQueue(wfevm.Module)
		attrs, err := r.Conceal(wfeigenlayer.Attributes(in.Network, owner))
		if err != nil {
			return err
		}
		opts := starter.StartOptions(id, summary, queue, attrs...)
		// One checkpoint per pod at a time, and a new one once it ended: the ID is the pod's.
		opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
		run, err := c.ExecuteWorkflow(ctx, opts, wfeigenlayer.CheckpointWorkflowType, in)
		if err != nil {
			var already *serviceerror.WorkflowExecutionAlreadyStarted
			if errors.As(err, &already) {
				return fmt.Errorf("%w: a checkpoint of %s's pod is running as %s (run %s); follow it with status --id %s",
					workflows.ErrAlreadyStarted, owner, id, already.RunId, id)
			}
			return fmt.Errorf("starting %s: %w", id, err)
		}
		r.CheckQueue(ctx, c, queue)
		return r.AfterStartOf(ctx, c, run, wfeigenlayer.CheckpointWorkflowType, summary, wait, eigenLayerResult)
	}, nil
}

func eigenLayerResult(run client.WorkflowRun, ctx context.Context) (any, string, error) {
	var res wfeigenlayer.Result
	err := run.Get(ctx, &res)
	var b strings.Builder
	fmt.Fprintf(&b, "done: eigenlayer checkpoint %d of pod %s", res.CheckpointTimestamp, res.Pod)
	if res.Resumed {
		b.WriteString("\n  the checkpoint was already active: proven on, not started again")
	}
	fmt.Fprintf(&b, "\n  batches sent:    %d", res.BatchesSent)
	for _, t := range res.Transactions {
		fmt.Fprintf(&b, "\n  %-24s tx %s (block %d, builds %d, fee %s wei)", t.Kind, t.TxID, t.Block, t.Builds, starter.OrDash(t.Fee))
	}
	return res, b.String(), err
}

// eigenLayerGroup is the eigenlayer command group of `starter`.
func eigenLayerGroup() starter.Group {
	return starter.Group{Name: "eigenlayer", NoVerb: "eigenlayer: give a command: checkpoint", Command: eigenLayerCmd,
		Usage: `EigenLayer (checkpoints of the owner's EigenPod; one per pod at a time, resumed where the chain has it):
  eigenlayer checkpoint     --network N --owner 0xADDR [--submitter 0xADDR] [--wait]
`}
}
