// Package cosmos is read-only access to a Cosmos SDK chain (Celestia) through its REST
// (gRPC-gateway) endpoint: node info (chain id), accounts (number, sequence), transactions by hash,
// staking params, delegations, unbonding delegations, rewards and balances. It never signs or
// builds. A Client is bound to the chain id it must serve: Verify proves it, and every read
// fails with ErrNetworkUnverified until it has.
package cosmos
