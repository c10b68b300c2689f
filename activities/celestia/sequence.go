package celestia

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
	"github.com/stakeflow/stakeflow/signer/cosmos/tx"
)

// A delegator's account sequences are handed out by the same sequencer workflow as EVM nonces
// (workflows/evm's NonceSequencerWorkflow), one per network and address, which reads them
// through CelestiaReadNonces: one operation at a time per address, consecutive sequences, and a
// sequence used by a transaction stakeflow did not send reported, not passed over.

// ReadNoncesActivity is CelestiaReadNonces's registered name, the sequencer's Reader.
const ReadNoncesActivity = "CelestiaReadNonces"

// WorkflowStarter signals the sequencer, starting it when it is not running (the Temporal client).
type WorkflowStarter interface {
	SignalWithStartWorkflow(ctx context.Context, workflowID string, signalName string, signalArg any,
		options client.StartWorkflowOptions, workflow any, workflowArgs ...any) (client.WorkflowRun, error)
}

// CelestiaRequestLease asks the sequencer of the delegator for its lease (the grant is signalled
// to the operation), starting the sequencer when it is not running.
func (a *Activities) CelestiaRequestLease(ctx context.Context, in actevm.SequencerRequest) error {
	if _, err := a.chain(in.Network); err != nil {
		return err
	}
	if _, err := tx.DecodeAddress(signercosmos.AccountPrefix, in.Address); err != nil {
		return invalid(err)
	}
	if in.WorkflowID == "" {
		return invalid(errors.New("the lease request names no operation (workflow ID)"))
	}
	if a.Temporal == nil || a.TaskQueue == "" {
		return invalid(errors.New("this worker has no Temporal client or task queue for the sequencers"))
	}
	id := actevm.SequencerID(in.Network, in.Address)
	_, err := a.Temporal.SignalWithStartWorkflow(ctx, id, actevm.SignalAcquire, in,
		client.StartWorkflowOptions{ID: id, TaskQueue: a.TaskQueue},
		actevm.SequencerWorkflowType, actevm.SequencerState{Network: in.Network, Address: in.Address, Reader: ReadNoncesActivity})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return temporal.NewApplicationError(fmt.Sprintf("signalling sequencer %s: %v", id, err), activities.ErrServiceUnavailable)
	}
	return nil
}

// CelestiaReadNonces reads the delegator's account sequence as the sequencer counts nonces: the
// chain's committed sequence is the next one (a REST endpoint shows no mempool; a transaction
// pending there from elsewhere shows as a conflict once committed).
func (a *Activities) CelestiaReadNonces(ctx context.Context, in actevm.NoncesInput) (actevm.Nonces, error) {
	c, err := a.chain(in.Network)
	if err != nil {
		return actevm.Nonces{}, err
	}
	acc, err := c.Account(ctx, in.Address)
	if err != nil {
		return actevm.Nonces{}, classify("reading the account", err)
	}
	var seq uint64
	if acc != nil {
		seq = acc.Sequence
	}
	return actevm.Nonces{Latest: seq, Pending: seq, Finalized: seq}, nil
}
