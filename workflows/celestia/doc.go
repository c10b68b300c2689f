// Package celestia holds the Celestia staking workflows: delegate, undelegate (then wait the
// unbonding period, read from the chain's staking params, with durable timers re-checked against
// the unbonding queue, and confirm the tokens back), redelegate and withdraw rewards. Each runs on
// the chain-neutral core (workflows.Operation and Transact); the account sequence is the step's
// nonce: a rebuild reuses it, so that at most one build can land.
package celestia
