package lease

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
)

// Describer describes a workflow run (the Temporal client).
type Describer interface {
	DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error)
}

// Activities are the lease's own activities (LeaseHolder), the same for every chain.
type Activities struct {
	// Temporal describes the holders' runs; nil: the client of the worker running the activity.
	Temporal Describer
}

// LeaseHolder tells whether the operation holding a lease still runs (the lease asks it on a
// timer, so that a holder terminated, timed out or gone does not keep the address's lease
// forever). It describes the holder's run through the worker's Temporal client.
func (a *Activities) LeaseHolder(ctx context.Context, in HolderInput) (HolderState, error) {
	if in.WorkflowID == "" {
		return HolderState{}, invalid("the lease holder has no workflow ID")
	}
	var d Describer
	if a != nil && a.Temporal != nil {
		d = a.Temporal
	} else if c := activity.GetClient(ctx); c != nil {
		d = c
	}
	if d == nil {
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

// Starter signals a workflow, starting it when it is not running (the Temporal client).
type Starter interface {
	SignalWithStartWorkflow(ctx context.Context, workflowID string, signalName string, signalArg any,
		options client.StartWorkflowOptions, workflow any, workflowArgs ...any) (client.WorkflowRun, error)
}

// Ask signals req to the lease of (chain, req.Network, req.Address), starting the lease on
// taskQueue when it is not running: the body of each chain's request activity, once the chain has
// checked the network and the address. The grant is signalled to the operation that asked.
func Ask(ctx context.Context, c Starter, taskQueue string, chain Chain, req Request) error {
	if req.Chain != "" && req.Chain != chain {
		return invalid(fmt.Sprintf("the lease request is for a %s address; this activity asks %s leases", req.Chain, chain))
	}
	req.Chain = chain
	if req.WorkflowID == "" {
		return invalid("the lease request names no operation (workflow ID)")
	}
	if c == nil || taskQueue == "" {
		return invalid(fmt.Sprintf("this worker has no Temporal client or task queue for the %s nonce leases", chain))
	}
	id := req.Lease
	if id == "" {
		id = ID(chain, req.Network, req.Address)
	}
	if prefix := IDOf(chain, req.Network, ""); !strings.HasPrefix(id, prefix) || id == prefix {
		return invalid(fmt.Sprintf("the lease request names lease %q, not one of %s", id, prefix+"..."))
	}
	_, err := c.SignalWithStartWorkflow(ctx, id, SignalAcquire, req,
		client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue},
		WorkflowType, State{Chain: chain, Network: req.Network, Address: req.Address})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return temporal.NewApplicationError(fmt.Sprintf("signalling nonce lease %s: %v", id, err), activities.ErrServiceUnavailable)
	}
	return nil
}

func invalid(msg string) error {
	return temporal.NewNonRetryableApplicationError(msg, activities.ErrInvalidInput, nil)
}
