package ton

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	actton "github.com/stakeflow/stakeflow/activities/ton"
	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/workflows"
)

// Chain is the chain name of every TON operation (StakeflowChain); Unit its amounts' unit.
const (
	Chain = actton.Chain
	Unit  = actton.Unit
	// Decimals: 1 TON = 10^9 nanoton, Toncoin's definition in the TON docs ("1 TON =
	// 1,000,000,000 nanotons"), the unit of every balance and value the TON API reports.
	Decimals = 9
)

// WatchWorkflowType is the watch's workflow type, as the worker registers it and the starter
// starts it.
const WatchWorkflowType = "TONWatchWorkflow"

// OpWatch is the watch operation, as StakeflowOperation and the status name it.
const OpWatch = "watch"

// DefaultDeadline is how long a watch looks for its transaction when the input sets no deadline.
const DefaultDeadline = time.Hour

// MaxDeadline bounds WatchInput.Deadline.
const MaxDeadline = 7 * 24 * time.Hour

// RecordedSteps are the values a TON operation gives the StakeflowStep search attribute.
var RecordedSteps = append([]string{}, workflows.RecordedSteps...)

// WatchInput starts a watch of the transaction Hash on Network.
type WatchInput struct {
	Network string `json:"network"`
	// Hash is the transaction hash: 32 bytes in hex or base64.
	Hash string `json:"hash"`
	// Deadline is how long to look for the transaction; 0: DefaultDeadline.
	Deadline    time.Duration     `json:"deadline,omitempty"`
	RequestedBy string            `json:"requestedBy,omitempty"`
	Options     workflows.Options `json:"options,omitempty"`
}

// WatchResult is what a finished watch returns: the transaction as the service reports it.
type WatchResult struct {
	Operation   string             `json:"operation"`
	Network     string             `json:"network"`
	Transaction actton.Transaction `json:"transaction"`
}

// Validate checks the input; the error names the first field that is wrong.
func (in WatchInput) Validate() error {
	if !networks.TON.Has(in.Network) {
		return &workflows.InputError{Field: "network", Reason: fmt.Sprintf("%q is not one of %s", in.Network, strings.Join(networks.TON.Names(), ", "))}
	}
	if in.Hash == "" {
		return &workflows.InputError{Field: "hash", Reason: "is required"}
	}
	if _, err := actton.NormalizeHash(in.Hash); err != nil {
		return &workflows.InputError{Field: "hash", Reason: fmt.Sprintf("%q is %v", in.Hash, err)}
	}
	if in.Deadline < 0 || in.Deadline > MaxDeadline {
		return &workflows.InputError{Field: "deadline", Reason: fmt.Sprintf("%s is not between 0 (the default, %s) and %s", in.Deadline, DefaultDeadline, MaxDeadline)}
	}
	return in.Options.Validate()
}

// Summary is the static one-line summary of a TON operation for the Web UI.
func Summary(op, network, hash string) string {
	if op == OpWatch {
		return fmt.Sprintf("watch TON transaction %s until final (%s)", hash, network)
	}
	return op
}

// Attributes are the search attributes of a TON operation known at start.
func Attributes(op, network string) []temporal.SearchAttributeUpdate {
	return []temporal.SearchAttributeUpdate{
		workflows.SAChain.ValueSet(Chain), workflows.SANetwork.ValueSet(network), workflows.SAOperation.ValueSet(op),
		workflows.SAStaker.ValueSet(""),
	}
}
