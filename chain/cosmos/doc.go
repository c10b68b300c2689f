// Package cosmos is read-only access to a Cosmos SDK chain (Celestia) through its REST
// (gRPC-gateway) endpoint: node info (chain id), the chain's parameters (staking params' bond
// denom and unbonding time, the bech32 account prefix, the node's minimum gas price), accounts
// (number, sequence), transactions by hash, delegations, unbonding delegations, rewards and
// balances. It never signs or builds. A Client is bound to the chain id it must serve and,
// with WithExpect, to the parameters it must answer: Verify proves them, and every read fails
// with ErrNetworkUnverified until it has. Routes a node does not serve (404, 501) other than
// the chain id and the staking params keep the catalogued values (Params.Unanswered).
package cosmos
