package starter

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	actton "github.com/stakeflow/stakeflow/activities/ton"
	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/workflows"
	wfton "github.com/stakeflow/stakeflow/workflows/ton"
)

var errNoTONVerb = errors.New("ton: give a command: watch")

// tonCmd is the TON command group: watch a transaction until it is final.
func (r *runner) tonCmd(fs *flag.FlagSet, verb string) (func(context.Context) error, error) {
	if verb != wfton.OpWatch {
		return nil, &UsageError{Msg: fmt.Sprintf("ton: unknown command %q (watch)", verb)}
	}
	var network, hash, requestedBy, id string
	var deadline time.Duration
	var wait bool
	fs.StringVar(&network, "network", "", "TON network: "+strings.Join(networks.TON.Names(), ", "))
	fs.StringVar(&hash, "hash", "", "transaction hash, 32 bytes in hex or base64")
	fs.DurationVar(&deadline, "deadline", wfton.DefaultDeadline, "how long to look for the transaction before the operation fails")
	fs.StringVar(&requestedBy, "requested-by", currentUser(), "who starts the operation")
	fs.StringVar(&id, "id", "", "operation ID (default: generated and printed)")
	fs.BoolVar(&wait, "wait", false, "follow the operation until it ends, printing each step")
	return func(ctx context.Context) error {
		fail := func(err error) error { return &UsageError{Msg: "ton watch: " + err.Error()} }
		in := wfton.WatchInput{Network: network, Hash: hash, Deadline: deadline, RequestedBy: requestedBy}
		if err := in.Validate(); err != nil {
			return fail(err)
		}
		in.Hash, _ = actton.NormalizeHash(hash)
		if id == "" {
			id = newOperationID("ton-watch")
		}
		if err := workflows.ValidateOperationID(id); err != nil {
			return fail(err)
		}
		c, err := r.client()
		if err != nil {
			return err
		}
		defer c.Close()
		summary := wfton.Summary(wfton.OpWatch, network, in.Hash)
		run, err := r.start(ctx, c, wfton.Module, id, summary, wfton.WatchWorkflowType, in, wfton.Attributes(wfton.OpWatch, network)...)
		if err != nil {
			return err
		}
		return r.afterStartOf(ctx, c, run, wfton.WatchWorkflowType, summary, wait, tonResult)
	}, nil
}

func tonResult(run client.WorkflowRun, ctx context.Context) (any, string, error) {
	var res wfton.WatchResult
	err := run.Get(ctx, &res)
	tx := res.Transaction
	var b strings.Builder
	fmt.Fprintf(&b, "done: ton watch: transaction %s %s", tx.Hash, tx.Outcome)
	fmt.Fprintf(&b, "\n  account:  %s", tx.Account)
	fmt.Fprintf(&b, "\n  lt:       %s (previous %s)", tx.Lt, orDash(tx.PrevTransactionLt))
	fmt.Fprintf(&b, "\n  time:     %s", tx.Time.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "\n  status:   %s -> %s", tx.OldStatus, tx.EndStatus)
	fmt.Fprintf(&b, "\n  messages: %d out", tx.OutMessagesCount)
	b.WriteString("\n  fees:     not reported by the service")
	return res, b.String(), err
}
