package hyperliquid

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/lease"
)

// One operation per delegator at a time: a withdrawal holds its delegator's lease from before its
// request is signed until its fate is final (the history shows it, or it is proven unable to
// land), so that the withdrawals the history shows before a signature are every earlier
// operation's, and a withdrawal never takes another's for its own. The lease is the one the nonce
// chains use (package lease), one per network and delegator, under the chain family
// lease.Hyperliquid (a Hyperliquid delegator is an EVM address: the EVM lease of the same address
// is another one). Hyperliquid's nonces are millisecond timestamps the service chooses, not a
// counter: the lease hands out none, and its reader (HLReadLease) counts none.

// HLRequestLease asks the lease of the delegator (the grant is signalled to the operation),
// starting the lease when it is not running.
func (a *Activities) HLRequestLease(ctx context.Context, in lease.Request) error {
	if _, err := a.api(in.Network); err != nil {
		return err
	}
	if !common.IsHexAddress(in.Address) {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("the lease request names %q, not a delegator address", in.Address), activities.ErrInvalidInput, nil)
	}
	return lease.Ask(ctx, a.Temporal, a.TaskQueue, lease.Hyperliquid, in)
}

// HLReadLease is the reader of a Hyperliquid delegator's lease (lease.Register): no nonce is
// counted (the lease's nonce stays 0, granted and released as 0), so the lease only orders the
// operations.
func (a *Activities) HLReadLease(_ context.Context, in lease.ReadInput) (lease.Nonces, error) {
	if !networks.Hyperliquid.Has(in.Network) {
		return lease.Nonces{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%q is not a Hyperliquid network (%v)", in.Network, networks.Hyperliquid.Names()), activities.ErrInvalidInput, nil)
	}
	return lease.Nonces{}, nil
}
