package celestia

import (
	"context"

	"github.com/stakeflow/stakeflow/lease"
	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
	"github.com/stakeflow/stakeflow/signer/cosmos/tx"
)

// A delegator's account sequences are handed out by the chain-neutral nonce lease (package
// lease), one per network and address, which reads them through CelestiaReadNonces (registered
// by workflows/celestia): one operation at a time per address, consecutive sequences, and a
// sequence used by a transaction stakeflow did not send reported, not passed over.

// CelestiaRequestLease asks the lease of the delegator for its sequences (the grant is signalled
// to the operation), starting the lease when it is not running.
func (a *Activities) CelestiaRequestLease(ctx context.Context, in lease.Request) error {
	if _, err := a.chain(in.Network); err != nil {
		return err
	}
	if _, err := tx.DecodeAddress(signercosmos.AccountPrefix, in.Address); err != nil {
		return invalid(err)
	}
	return lease.Ask(ctx, a.Temporal, a.TaskQueue, lease.Celestia, in)
}

// CelestiaReadNonces reads the delegator's account sequence as the lease counts nonces: the
// chain's committed sequence is the next one (a REST endpoint shows no mempool; a transaction
// pending there from elsewhere shows as a conflict once committed). It is the reader of
// Celestia's leases (lease.Register).
func (a *Activities) CelestiaReadNonces(ctx context.Context, in lease.ReadInput) (lease.Nonces, error) {
	c, err := a.chain(in.Network)
	if err != nil {
		return lease.Nonces{}, err
	}
	acc, err := c.Account(ctx, in.Address)
	if err != nil {
		return lease.Nonces{}, classify("reading the account", err)
	}
	var seq uint64
	if acc != nil {
		seq = acc.Sequence
	}
	return lease.Nonces{Latest: seq, Pending: seq, Finalized: seq}, nil
}
