package evm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
)

// Names of the nonce sequencer (workflows/evm) that EVMRequestLease signals: defined here, where
// both the activity that starts it and the workflow that is it can import them.
const (
	// SequencerWorkflowType is the sequencer's workflow type.
	SequencerWorkflowType = "EVMNonceSequencerWorkflow"
	// SignalAcquire asks the sequencer for the lease (a SequencerRequest).
	SignalAcquire = "acquire"
	// ErrNonceConflict: the address's nonces on chain are not what stakeflow handed out or
	// expects: a transaction stakeflow did not send is pending or landed, or nonces were skipped
	// (a gap). Non-retryable.
	ErrNonceConflict = "NonceConflict"
)

// SequencerID is the workflow ID of the sequencer of address on network.
func SequencerID(network, address string) string {
	return "evm-nonces/" + network + "/" + strings.ToLower(address)
}

// SequencerState is the sequencer's input, carried over each continue-as-new. EVMRequestLease
// starts a sequencer with Network and Address only.
type SequencerState struct {
	Network string `json:"network"`
	Address string `json:"address"`
	// Next is the next nonce to hand out; Known is false until the chain was read once.
	Next  uint64 `json:"next"`
	Known bool   `json:"known"`
	// Holder is the operation holding the lease; Queue those waiting, in order.
	Holder *SequencerRequest  `json:"holder,omitempty"`
	Queue  []SequencerRequest `json:"queue,omitempty"`
	// Reader is the name of the activity that reads the address's nonces (NoncesInput to
	// Nonces) on a chain other than EVM's, whose sequences the same sequencer hands out (Cosmos
	// account sequences); empty: EVMReadNonces.
	Reader string `json:"reader,omitempty"`
	// Settling is the lease given back and not yet agreed by the chain (nil: none).
	Settling *Settling `json:"settling,omitempty"`
	// CheckEvery is how often the sequencer asks whether its holder still runs, and the bound
	// after which the waiting operations are told of a lease that does not settle (0:
	// DefaultCheckEvery).
	CheckEvery time.Duration `json:"checkEvery,omitempty"`
	// Events are the last reconciliations with the chain, newest last (at most MaxEvents).
	Events []SequencerEvent `json:"events,omitempty"`
}

// DefaultCheckEvery is SequencerState.CheckEvery's default; MaxEvents bounds
// SequencerState.Events.
const (
	DefaultCheckEvery = 3 * time.Minute
	MaxEvents         = 20
)

// Settling is a lease given back (or taken from a holder that closed without giving it back)
// while the sequencer waits for the chain to agree: no nonce is handed out until the nonce the
// chain has consumed at final depth reaches Claim.
type Settling struct {
	// WorkflowID and RunID are the operation that held the lease.
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId,omitempty"`
	// From is the nonce the holder was granted; Claim the first nonce it says it did not use
	// (From when it closed without saying).
	From  uint64 `json:"from"`
	Claim uint64 `json:"claim"`
	// Closed is the holder's close status when it closed without releasing (Terminated,
	// TimedOut, ...); empty when it released.
	Closed string `json:"closed,omitempty"`
	// Since is when the lease was given back or found abandoned; Reads counts the chain reads
	// that did not settle it; Told is the reason the waiting operations were last told of.
	Since time.Time `json:"since"`
	Reads int       `json:"reads,omitempty"`
	Told  string    `json:"told,omitempty"`
}

// SequencerEvent records what the sequencer took from the chain rather than from a holder: a
// release the chain contradicted, a holder found closed, an operator's resync.
type SequencerEvent struct {
	At time.Time `json:"at"`
	// Kind is one of the Event* constants; Holder the operation concerned.
	Kind   string `json:"kind"`
	Holder string `json:"holder,omitempty"`
	// Claimed is the nonce the holder gave back; Next the one the sequencer continued from.
	Claimed uint64 `json:"claimed"`
	Next    uint64 `json:"next"`
	Detail  string `json:"detail"`
}

// Kinds of SequencerEvent.
const (
	// EventChainAhead: the chain had consumed more nonces at final depth than the holder gave
	// back (a transaction of the holder landed past what it said): the chain's count was taken.
	EventChainAhead = "chain-ahead"
	// EventHolderClosed: the holder closed without releasing; the lease was freed at the chain's
	// count once nothing of the address was pending.
	EventHolderClosed = "holder-closed"
	// EventResync: an operator told the sequencer to take the chain's count.
	EventResync = "resync"
)

// HolderInput names the operation holding a lease (its run, when known).
type HolderInput struct {
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId,omitempty"`
}

// HolderState is whether a lease holder still runs, and how it closed when not.
type HolderState struct {
	Running bool `json:"running"`
	// Status is the run's status as Temporal names it (Running, Completed, Failed, Canceled,
	// Terminated, TimedOut, ContinuedAsNew), or NotFound.
	Status string `json:"status"`
}

// WorkflowDescriber describes a workflow run (the Temporal client).
type WorkflowDescriber interface {
	DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error)
}

// EVMLeaseHolder tells whether the operation holding a nonce lease still runs (the sequencer asks
// it on a timer, so that a holder terminated, timed out or gone does not keep the address's lease
// forever). It describes the holder's run through the worker's Temporal client; the run of
// another chain's operation too (the sequencer is chain-neutral).
func (a *Activities) EVMLeaseHolder(ctx context.Context, in HolderInput) (HolderState, error) {
	if in.WorkflowID == "" {
		return HolderState{}, invalid("the lease holder has no workflow ID")
	}
	d, ok := a.Temporal.(WorkflowDescriber)
	if !ok || a.Temporal == nil {
		return HolderState{}, invalid("this worker has no Temporal client to describe lease holders with")
	}
	desc, err := d.DescribeWorkflowExecution(ctx, in.WorkflowID, in.RunID)
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return HolderState{Status: "NotFound"}, nil
		}
		if errors.Is(err, context.Canceled) {
			return HolderState{}, err
		}
		return HolderState{}, temporal.NewApplicationError(fmt.Sprintf("describing lease holder %s: %v", in.WorkflowID, err), activities.ErrServiceUnavailable)
	}
	st := desc.GetWorkflowExecutionInfo().GetStatus()
	return HolderState{Running: st == enums.WORKFLOW_EXECUTION_STATUS_RUNNING, Status: st.String()}, nil
}
