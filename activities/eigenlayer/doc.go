// Package eigenlayer holds the activities of EigenLayer checkpoints on an EigenPod: reading the
// pod's checkpoint from the chain, building the owner's startCheckpoint locally, asking the
// staking service (endpoint 5) for each proofs transaction, simulating it, and verifying and
// signing both with signer/evm's CheckpointSigner. Sending and confirming are the EVM
// activities' (activities/evm: EVMCheckFresh, EVMSendRPC, EVMConfirm with ResendRPC), under the
// address's nonce lease (workflows/evm): the signed bytes go through the worker's own RPC proven
// to serve the network, since the staking service has no broadcast endpoint for them (its
// endpoint 4 is Polygon's).
//
// Contract:
//
//   - EigenReadPod reads getPod(owner) on the worker's EigenPodManager, then the pod's
//     currentCheckpointTimestamp, lastCheckpointTimestamp, currentCheckpoint and
//     activeValidatorCount at one block, and the hash of the transaction that started the
//     active checkpoint (its CheckpointCreated log), when it finds it.
//   - EigenBuildStart refuses (ErrCheckpointActive) while a checkpoint is active: a second
//     startCheckpoint is never built.
//   - EigenBuildProofs sends endpoint 5 activateTx = the hash of the transaction that started
//     the checkpoint. The spec leaves activateTx undefined; this is our reading. It reads the
//     EigenPodManager's pectraForkTimestamp (zero, or for a catalogued network another fork than
//     signerevm.PectraForkTimestamps: ErrForkTimestamp) and has the answer verified
//     (VerifyProofs) with EigenLayer's proof geometry for the checkpoint's fork. An EigenPod
//     skips, without reverting, proofs of validators already proven in the checkpoint or no
//     longer active: a batch of only such proofs (read with validatorPubkeyHashToInfo) is
//     ErrAlreadyProven (re-read and ask again). The rest is simulated from the submitter: a
//     revert is ErrWouldRevert. Nothing is signed in any of these cases.
//   - Errors are application errors whose types are activities' Err* or this package's.
package eigenlayer
