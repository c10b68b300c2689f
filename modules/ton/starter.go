package ton

import (
	"context"
	"flag"
	"fmt"
	"github.com/stakeflow/stakeflow/internal/starter"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	actton "github.com/stakeflow/stakeflow/activities/ton"
	"github.com/stakeflow/stakeflow/chain/networks"
	wfton "github.com/stakeflow/stakeflow/workflows/ton"
)

// tonCmd is the TON command group: watch a transaction until it is final.
func tonCmd(r *starter.Session, fs *flag.FlagSet, verb string) (func(context.Context) error, error) {
	if verb != wfton.OpWatch {
		return nil, &starter.UsageError{Msg: fmt.Sprintf("ton: unknown command %q (watch)", verb)}
	}
	var network, hash, requestedBy, id string
	var deadline time.Duration
	var wait bool
	fs.StringVar(&network, "network", "", "TON network: "+strings.Join(networks.TON.Names(), ", "))
	fs.StringVar(&hash, "hash", "", "transaction hash, 32 bytes in hex or base64")
	fs.DurationVar(&deadline, "deadline", wfton.DefaultDeadline, "how long to look for the transaction before the operation fails")
	fs.StringVar(&requestedBy, "requested-by", starter.CurrentUser(), "who starts the operation")
	fs.StringVar(&id, "id", "", "operation ID (default: generated and printed)")
	fs.BoolVar(&wait, "wait", false, "follow the operation until it ends, printing each step")
	return func(ctx context.Context) error {
		fail := func(err error) error { return &starter.UsageError{Msg: "ton watch: " + err.Error()} }
		in := wfton.WatchInput{Network: network, Hash: hash, Deadline: deadline, RequestedBy: requestedBy}
		if err := in.Validate(); err != nil {
			return fail(err)
		}
		in.Hash, _ = actton.NormalizeHash(hash)
		var err error
		if id, err = starter.OperationID(id, "ton-watch"); err != nil {
			return fail(err)
		}
		return r.Launch(ctx, starter.Op{Module: wfton.Module, ID: id, Name: wfton.WatchWorkflowType, Workflow: wfton.WatchWorkflowType,
			Input: in, Summary: wfton.Summary(wfton.OpWatch, network, in.Hash), Attrs: wfton.Attributes(wfton.OpWatch, network),
			Wait: wait, Result: tonResult})
	}, nil
}

func tonResult(run client.WorkflowRun, ctx context.Context) (any, string, error) {
	var res wfton.WatchResult
	err := run.Get(ctx, &res)
	tx := res.Transaction
	var b strings.Builder
	fmt.Fprintf(&b, "done: ton watch: transaction %s %s", tx.Hash, tx.Outcome)
	fmt.Fprintf(&b, "\n  account:  %s", tx.Account)
	fmt.Fprintf(&b, "\n  lt:       %s (previous %s)", tx.Lt, starter.OrDash(tx.PrevTransactionLt))
	fmt.Fprintf(&b, "\n  time:     %s", tx.Time.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "\n  status:   %s -> %s", tx.OldStatus, tx.EndStatus)
	fmt.Fprintf(&b, "\n  messages: %d out", tx.OutMessagesCount)
	b.WriteString("\n  fees:     not reported by the service")
	return res, b.String(), err
}

// group is the ton command group of `starter`.
func group() starter.Group {
	return starter.Group{Name: "ton", NoVerb: "ton: give a command: watch", Command: tonCmd,
		Usage: `TON:
  ton watch                 --network N --hash HASH (hex or base64) [--deadline 1h] [--id ID] [--wait]
                            follow a transaction until it is final; not found by the deadline, it fails
`}
}

// StarterGroups are the module's command groups of `starter`.
func (m *Module) StarterGroups() []starter.Group { return []starter.Group{group()} }
