// Package networks is the network catalogue: one definition per chain of the networks stakeflow
// operates on that chain, each with its identity (the value an RPC is proven against, or the value
// a signed message carries), and the source of that identity named beside it.
//
// Every user reads the catalogue: the staking service client's argument checks (apiclient), the
// workflows' input checks, the starter's flag help, the worker's configuration checks and network
// proofs, the signers and internal/contract. It imports nothing, so every layer (workflows
// included) may import it without pulling in an RPC client or an upward dependency; that is why it
// is one small package rather than a file in each chain/<chain> package (chain/solana and
// chain/evm carry solana-go and go-ethereum, which apiclient, the signers and workflows must not
// need for a list of names).
//
// The lists are in a fixed order (the order of messages and flag help). Names returns a copy.
package networks
