package hyperliquid

import (
	"context"
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/chain/networks"
)

// One operation per delegator at a time: a withdrawal holds its delegator's lease from before its
// request is signed until its fate is final (the history shows it, or it is proven unable to
// land), so that the withdrawals the history shows before a signature are every earlier
// operation's, and a withdrawal never takes another's for its own. The lease is the one the nonce
// chains use: the same sequencer workflow (workflows/evm's NonceSequencerWorkflow), one per
// network and delegator, under the network name LeaseNetwork(network) (a Hyperliquid delegator is
// an EVM address: the EVM sequencer of the same address on the EVM network of the same name is
// another one). Hyperliquid's nonces are millisecond timestamps the service chooses, not a
// counter: the sequencer hands out none, and its reader (HLReadLease) counts none.

// ReadLeaseActivity is HLReadLease's registered name, the sequencer's Reader.
const ReadLeaseActivity = "HLReadLease"

// LeaseNetwork is the sequencer's network name of a Hyperliquid network.
func LeaseNetwork(network string) string { return "hyperliquid-" + network }

// WorkflowStarter signals the sequencer, starting it when it is not running (the Temporal client).
type WorkflowStarter interface {
	SignalWithStartWorkflow(ctx context.Context, workflowID string, signalName string, signalArg any,
		options client.StartWorkflowOptions, workflow any, workflowArgs ...any) (client.WorkflowRun, error)
}

// HLRequestLease asks the sequencer of the delegator for its lease (the grant is signalled to the
// operation), starting the sequencer when it is not running. in.Network is LeaseNetwork's.
func (a *Activities) HLRequestLease(ctx context.Context, in actevm.SequencerRequest) error {
	network, ok := networkOfLease(in.Network)
	if !ok {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the lease request names network %q, not a Hyperliquid network's lease (hyperliquid-mainnet, hyperliquid-testnet)", in.Network), activities.ErrInvalidInput, nil)
	}
	if _, err := a.api(network); err != nil {
		return err
	}
	if !common.IsHexAddress(in.Address) {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("the lease request names %q, not a delegator address", in.Address), activities.ErrInvalidInput, nil)
	}
	if in.WorkflowID == "" {
		return temporal.NewNonRetryableApplicationError("the lease request names no operation (workflow ID)", activities.ErrInvalidInput, nil)
	}
	if a.Temporal == nil || a.TaskQueue == "" {
		return temporal.NewNonRetryableApplicationError("this worker has no Temporal client or task queue for the delegators' leases", activities.ErrInvalidInput, nil)
	}
	id := actevm.SequencerID(in.Network, in.Address)
	_, err := a.Temporal.SignalWithStartWorkflow(ctx, id, actevm.SignalAcquire, in,
		client.StartWorkflowOptions{ID: id, TaskQueue: a.TaskQueue},
		actevm.SequencerWorkflowType, actevm.SequencerState{Network: in.Network, Address: in.Address, Reader: ReadLeaseActivity})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return temporal.NewApplicationError(fmt.Sprintf("signalling the lease of %s: %v", id, err), activities.ErrServiceUnavailable)
	}
	return nil
}

// HLReadLease is the sequencer's reader for a Hyperliquid delegator: no nonce is counted (the
// lease's nonce stays 0, granted and released as 0), so the sequencer only orders the operations.
func (a *Activities) HLReadLease(_ context.Context, in actevm.NoncesInput) (actevm.Nonces, error) {
	if _, ok := networkOfLease(in.Network); !ok {
		return actevm.Nonces{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%q is not a Hyperliquid network's lease", in.Network), activities.ErrInvalidInput, nil)
	}
	return actevm.Nonces{}, nil
}

func networkOfLease(leaseNetwork string) (string, bool) {
	for _, n := range networks.Hyperliquid.Names() {
		if LeaseNetwork(n) == leaseNetwork {
			return n, true
		}
	}
	return "", false
}
