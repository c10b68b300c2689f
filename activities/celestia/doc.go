// Package celestia holds the activities of Celestia staking operations: the policy check, reads
// of the delegator's position and unbonding queue from the worker's own Cosmos REST endpoint, the
// build of the transaction from the intent and the chain's account number and sequence, the
// verification and signature (signer/cosmos), the broadcast through the staking service's
// endpoint 3 and the confirmation by hash on the chain.
package celestia
