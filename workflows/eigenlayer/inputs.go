// Package eigenlayer is the EigenLayer checkpoint operation: one startCheckpoint by the pod owner,
// then proofs transactions from the staking service (endpoint 5), in batches, until the pod's
// checkpoint completes, on the chain-neutral operation core (workflows.Operation, Transact) and
// the EVM family's nonce lease (package lease).
//
// The operation's ID is derived from the network and the owner, whose one pod getPod names: a
// second checkpoint of the same pod is refused while one runs. It finds the checkpoint where
// the chain has it: an active checkpoint (started by an earlier run, or by another tool) is
// proven on, never started again. A batch whose validators another party proved first is
// re-read and skipped: not an error.
//
// Its history is bounded whatever the pod's size: each batch passes through history by
// reference (its digest, its transaction's hash: see activities/eigenlayer), and a run that has
// tried BatchesPerRun batches, or whose history passed HistoryBudgetBytes (or that the server
// suggests continue as new), releases the submitter's nonce lease at the nonce the chain
// consumed and continues as new under the same operation ID, carrying the checkpoint's
// progress and the transactions that landed (Continued), never a proof. The next run reads the
// pod and proves on; the status query answers from the run in progress, which holds the
// earlier runs' progress and transactions (not their attempts).
package eigenlayer

import (
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/sdk/temporal"

	actel "github.com/stakeflow/stakeflow/activities/eigenlayer"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/lease"
	"github.com/stakeflow/stakeflow/workflows"
)

// Chain is the chain name of checkpoint operations (StakeflowChain); Unit their fees' unit.
const (
	Chain = actel.ChainEigenLayer
	Unit  = actevm.Unit
)

// CheckpointWorkflowType is the checkpoint's workflow type; OpCheckpoint its operation name.
const (
	CheckpointWorkflowType = "EigenLayerCheckpointWorkflow"
	OpCheckpoint           = "checkpoint"
)

// RecordedSteps are the values a checkpoint gives the StakeflowStep search attribute.
var RecordedSteps = append(append([]string{}, workflows.RecordedSteps...), lease.StepWaitingNonce)

// CheckpointWorkflowID is the ID of the checkpoint operation of owner's pod on network: one at a
// time per pod (an owner has one pod).
func CheckpointWorkflowID(network, owner string) string {
	return CheckpointWorkflowIDOf(network, strings.ToLower(common.HexToAddress(owner).Hex()))
}

// CheckpointWorkflowIDOf is the checkpoint operation ID of the pod whose owner is named by name on
// network: the owner's lower-case address (CheckpointWorkflowID), or its search tag when payloads
// are encrypted (an ID is never encrypted).
func CheckpointWorkflowIDOf(network, name string) string {
	return fmt.Sprintf("eigenlayer-checkpoint-%s-%s", network, name)
}

// CheckpointInput starts a checkpoint of Owner's pod.
type CheckpointInput struct {
	Network string `json:"network"`
	// Owner is the pod owner: a key the worker holds; it signs startCheckpoint.
	Owner string `json:"owner"`
	// Submitter signs the proofs transactions (a key the worker holds; EigenLayer lets anyone
	// prove); empty: the owner.
	Submitter   string            `json:"submitter,omitempty"`
	RequestedBy string            `json:"requestedBy,omitempty"`
	Options     workflows.Options `json:"options,omitempty"`
	// BatchesPerRun is how many proofs batches one run of the workflow sends before it continues
	// as new (0: DefaultBatchesPerRun); a run also continues once its history passes
	// HistoryBudgetBytes.
	BatchesPerRun int `json:"batchesPerRun,omitempty"`
	// Continued is what the previous run of the operation carried over; only a run continuing as
	// new sets it.
	Continued *CheckpointContinued `json:"continued,omitempty"`
}

// CheckpointContinued is what a checkpoint carries into its next run: references and counts, never a
// proof or a transaction's bytes.
type CheckpointContinued struct {
	Operation *workflows.Continued         `json:"operation"`
	Progress  workflows.CheckpointProgress `json:"progress"`
	Resumed   bool                         `json:"resumed,omitempty"`
	// Run counts the runs before this one.
	Run int `json:"run"`
}

// Validate checks the input.
func (in CheckpointInput) Validate() error {
	if !networks.EVM.Has(in.Network) {
		return &workflows.InputError{Field: "network", Reason: fmt.Sprintf("%q is not one of %v", in.Network, networks.EVM.Names())}
	}
	if !common.IsHexAddress(in.Owner) || common.HexToAddress(in.Owner) == (common.Address{}) {
		return &workflows.InputError{Field: "owner", Reason: fmt.Sprintf("%q is not an address", in.Owner)}
	}
	if in.Submitter != "" && (!common.IsHexAddress(in.Submitter) || common.HexToAddress(in.Submitter) == (common.Address{})) {
		return &workflows.InputError{Field: "submitter", Reason: fmt.Sprintf("%q is not an address", in.Submitter)}
	}
	if in.BatchesPerRun < 0 {
		return &workflows.InputError{Field: "batchesPerRun", Reason: fmt.Sprintf("%d is negative", in.BatchesPerRun)}
	}
	if c := in.Continued; c != nil && (c.Operation == nil || c.Progress.Timestamp == 0 || !common.IsHexAddress(c.Progress.Pod)) {
		return &workflows.InputError{Field: "continued", Reason: "a continued run names no operation, checkpoint timestamp or pod"}
	}
	return in.Options.Validate()
}

// Result is what a finished checkpoint returns.
type Result struct {
	Operation string `json:"operation"`
	Network   string `json:"network"`
	Owner     string `json:"owner"`
	Submitter string `json:"submitter"`
	Pod       string `json:"pod"`
	// CheckpointTimestamp is the checkpoint completed.
	CheckpointTimestamp uint64 `json:"checkpointTimestamp"`
	// StartTx started it: this operation's, or an earlier one's when Resumed.
	StartTx string `json:"startTx,omitempty"`
	Resumed bool   `json:"resumed,omitempty"`
	// BatchesSent counts this operation's proofs transactions that landed.
	BatchesSent  int                  `json:"batchesSent"`
	Transactions []workflows.TxRecord `json:"transactions"`
	// Fee is what this operation's transactions paid, in wei.
	Fee string `json:"fee"`
}

// Attributes are the search attributes the starter sets when it starts a checkpoint.
func Attributes(network, owner string) []temporal.SearchAttributeUpdate {
	return []temporal.SearchAttributeUpdate{
		workflows.SAChain.ValueSet(Chain), workflows.SANetwork.ValueSet(network),
		workflows.SAOperation.ValueSet(OpCheckpoint), workflows.SAStaker.ValueSet(owner),
	}
}
