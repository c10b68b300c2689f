// Package evmchain deploys stand-ins of Polygon's staking contracts (POL token, StakeManager,
// one ValidatorShare per validator) and of EigenLayer's checkpoint contracts (EigenPodManager,
// EigenPod, and a beacon root oracle the sandbox posts its beacon-state model's roots to) on a
// real EVM chain, such as a geth --dev node, and drives them for tests and the sandbox.
//
// The contracts (contracts/*.sol) have Polygon's interface, so calldata, selectors and event
// signatures are those a client sends to and reads from Polygon on Ethereum, but not
// Polygon's code: the StakeManager's owner moves checkpoints on with [Deployment.AdvanceEpochs]
// instead of validators submitting them. See docs/evm-sandbox.md.
//
// Contract:
//
//   - The compiled contracts (artifacts/*.json: ABI and creation bytecode, from the pinned solc
//     0.8.30) are embedded; [Artifact] reads them. `go generate ./harness/sandbox/evmchain` recompiles
//     them, and a test checks that recompiling gives the committed bytes.
//   - [Deploy] deploys the token, the StakeManager (owner and token owner: the deployer),
//     the validators' shares (ids 1..n) and registers them, mints the reward reserve to the
//     StakeManager and POL to the stakers named, and returns once every transaction is mined
//     with success.
//   - Delegators approve the StakeManager (not the share) as spender of their POL, as on Polygon.
//   - [DeployEigenLayer] deploys the EigenLayer stand-ins with an admin key of their own;
//     [EigenLayer.ProofsTransaction] is the sandbox's endpoint 5: real SHA-256 balance proofs of a
//     pod's unproven validators against its active checkpoint's root, at most
//     [MaxProofsPerBatch], shaped by the pod's [EigenHostile] mode.
//   - Controls sign with the deployer key, which stays inside the Deployment and never appears
//     in errors.
package evmchain
