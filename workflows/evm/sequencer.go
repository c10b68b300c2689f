package evm

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/workflows"
)

// The nonce sequencer of an address: one durable workflow per (network, address), the only
// source of that address's nonces for every stakeflow operation.
//
// An operation leases the address: it is granted the next nonce, uses as many consecutive nonces
// as its transactions need (a replacement reuses its step's nonce), and releases the lease with
// the next unused nonce once its last transaction is finalized, or with the nonce it started from
// when nothing it signed can land. One lease at a time: two operations from one address get
// consecutive nonces, and a nonce is never skipped. Before each grant the sequencer reads the
// address's nonces from the chain: a transaction from the address that stakeflow did not send
// (pending in the pool, or having consumed a nonce) is reported to the operation asking, as a
// non-retryable error, never passed over in silence.
const (
	// SequencerWorkflowType is the sequencer's workflow type (defined with the activity that
	// starts it).
	SequencerWorkflowType = actevm.SequencerWorkflowType
	// SignalAcquire asks for the lease (SequencerRequest); SignalRelease gives it back (Release).
	SignalAcquire = actevm.SignalAcquire
	SignalRelease = "release"
	// SignalGrant carries a Grant to the operation that asked.
	SignalGrant = "nonce-grant"
	// ErrNonceConflict: the address's nonces on chain are not what stakeflow handed out: a
	// transaction stakeflow did not send is pending or landed. Non-retryable.
	ErrNonceConflict = actevm.ErrNonceConflict
	// StepWaitingNonce: the operation waits for its address's lease, held by another operation.
	StepWaitingNonce = "waiting-nonce"
)

// SequencerID is the workflow ID of the sequencer of address on network.
func SequencerID(network, address string) string { return actevm.SequencerID(network, address) }

// SequencerState is the sequencer's input, carried over each continue-as-new.
type SequencerState = actevm.SequencerState

// Grant is the sequencer's answer to an acquire: the first nonce the operation may use, or why
// it may use none.
type Grant struct {
	Nonce uint64 `json:"nonce"`
	Error string `json:"error,omitempty"`
}

// Release gives a lease back: Next is the first nonce the operation did not use.
type Release struct {
	WorkflowID string `json:"workflowId"`
	Next       uint64 `json:"next"`
}

// grantsPerRun bounds a sequencer run's history before it continues as new.
const grantsPerRun = 200

// NonceSequencerWorkflow hands out the nonces of one address (see SequencerID).
func NonceSequencerWorkflow(ctx workflow.Context, st SequencerState) error {
	logger := workflow.GetLogger(ctx)
	acquire := workflow.GetSignalChannel(ctx, SignalAcquire)
	release := workflow.GetSignalChannel(ctx, SignalRelease)
	grants := 0
	for {
		if st.Holder == nil && len(st.Queue) > 0 {
			req := st.Queue[0]
			st.Queue = st.Queue[1:]
			g := grant(ctx, &st, req)
			if g.Error == "" {
				st.Holder = &req
			}
			grants++
			logger.Info("Nonce lease", "operationId", req.WorkflowID, "nonce", g.Nonce, "error", g.Error)
			if err := workflow.SignalExternalWorkflow(ctx, req.WorkflowID, req.RunID, SignalGrant, g).Get(ctx, nil); err != nil {
				// The operation is gone: its lease is free again.
				logger.Warn("Lease not delivered", "operationId", req.WorkflowID, "error", err)
				st.Holder = nil
			}
			continue
		}
		if grants >= grantsPerRun && st.Holder == nil && len(st.Queue) == 0 && acquire.Len() == 0 && release.Len() == 0 {
			return workflow.NewContinueAsNewError(ctx, SequencerWorkflowType, st)
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(acquire, func(c workflow.ReceiveChannel, _ bool) {
			var req actevm.SequencerRequest
			c.Receive(ctx, &req)
			if st.Holder != nil && st.Holder.WorkflowID == req.WorkflowID {
				// The holder asks again (it restarted its wait): it already holds the lease.
				st.Queue = append([]actevm.SequencerRequest{req}, st.Queue...)
				st.Holder = nil
				return
			}
			for _, q := range st.Queue {
				if q.WorkflowID == req.WorkflowID {
					return
				}
			}
			st.Queue = append(st.Queue, req)
		})
		sel.AddReceive(release, func(c workflow.ReceiveChannel, _ bool) {
			var rel Release
			c.Receive(ctx, &rel)
			if st.Holder == nil || st.Holder.WorkflowID != rel.WorkflowID {
				// An operation that gave up waiting (cancelled): it leaves the queue.
				for i, q := range st.Queue {
					if q.WorkflowID == rel.WorkflowID {
						st.Queue = append(st.Queue[:i:i], st.Queue[i+1:]...)
						return
					}
				}
				logger.Warn("Release from an operation not holding the lease", "operationId", rel.WorkflowID)
				return
			}
			if rel.Next > st.Next {
				st.Next = rel.Next
			}
			st.Holder = nil
		})
		stopped := false
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) { stopped = true })
		sel.Select(ctx)
		if stopped {
			// Cancelled by an operator: operations waiting see their acquire fail to deliver.
			return temporal.NewCanceledError("nonce sequencer stopped")
		}
	}
}

// grant reads the address's nonces from the chain and answers req with the next nonce, or with
// the conflict it found.
func grant(ctx workflow.Context, st *SequencerState, req actevm.SequencerRequest) Grant {
	actx := workflow.WithActivityOptions(ctx, workflows.ReadOptions())
	var read any = ea.EVMReadNonces
	if st.Reader != "" {
		read = st.Reader
	}
	var n actevm.Nonces
	if err := workflow.ExecuteActivity(actx, read,
		actevm.NoncesInput{Network: st.Network, Address: st.Address}).Get(ctx, &n); err != nil {
		return Grant{Error: fmt.Sprintf("reading the nonces of %s: %v", st.Address, err)}
	}
	switch {
	case n.Pending > n.Latest:
		return Grant{Error: fmt.Sprintf("%s has %d transaction(s) pending that stakeflow did not send (nonces %d to %d): "+
			"let them land or replace them, then start again", st.Address, n.Pending-n.Latest, n.Latest, n.Pending-1)}
	case !st.Known:
		st.Next, st.Known = n.Latest, true
	case n.Latest > st.Next:
		from := st.Next
		st.Next = n.Latest
		return Grant{Error: fmt.Sprintf("nonces %d to %d of %s were used by transactions stakeflow did not send: "+
			"check who else signs for this address; the next operation starts at nonce %d", from, n.Latest-1, st.Address, n.Latest)}
	case n.Latest < st.Next:
		return Grant{Error: fmt.Sprintf("the chain counts %d transactions from %s but stakeflow handed out nonces up to %d: "+
			"a transaction it counted as landed is not on chain", n.Latest, st.Address, st.Next-1)}
	}
	return Grant{Nonce: st.Next}
}

// Lease is an operation's hold on its address's nonces.
type Lease struct {
	seqID      string
	workflowID string
	start      uint64
	// Next is the next nonce the operation may use.
	Next uint64
}

// AcquireLease asks the sequencer of address for its lease and waits for it, resting in
// StepWaitingNonce. A conflict on chain fails the operation with ErrNonceConflict.
func AcquireLease(ctx workflow.Context, o *workflows.Operation, network, address string) (*Lease, error) {
	return AcquireLeaseVia(ctx, o, network, address, ea.EVMRequestLease)
}

// AcquireLeaseVia is AcquireLease with the activity that signals (and starts) the sequencer
// named: another chain's, whose sequencer reads that chain's sequences (SequencerState.Reader).
func AcquireLeaseVia(ctx workflow.Context, o *workflows.Operation, network, address string, request any) (*Lease, error) {
	info := workflow.GetInfo(ctx)
	req := actevm.SequencerRequest{Network: network, Address: address,
		WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: time.Minute, NonRetryableErrorTypes: activities.NonRetryable},
	})
	if err := o.Get(ctx, workflow.ExecuteActivity(actx, request, req), nil); err != nil {
		return nil, err
	}
	o.SetStep(ctx, StepWaitingNonce)
	o.Flush(ctx)
	var g Grant
	granted := false
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(workflow.GetSignalChannel(ctx, SignalGrant), func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, &g)
		granted = true
	})
	sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(ctx)
	l := &Lease{seqID: SequencerID(network, address), workflowID: req.WorkflowID, start: g.Nonce, Next: g.Nonce}
	if !granted {
		// Leave the queue (or give back a lease granted meanwhile) with no nonce used.
		l.Next = 0
		_ = l.Release(ctx)
		return nil, temporal.NewCanceledError("cancelled while waiting for the address's nonce; nothing was sent")
	}
	if g.Error != "" {
		return nil, temporal.NewNonRetryableApplicationError(g.Error, ErrNonceConflict, nil)
	}
	return l, nil
}

// Release gives the lease back with the next unused nonce. It runs on a disconnected context: a
// cancelled operation still frees its address.
func (l *Lease) Release(ctx workflow.Context) error {
	if l == nil {
		return nil
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	return workflow.SignalExternalWorkflow(dctx, l.seqID, "", SignalRelease,
		Release{WorkflowID: l.workflowID, Next: l.Next}).Get(dctx, nil)
}
