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
//   - Large data stays out of workflow history. A proofs transaction is tens of kilobytes (about
//     36 KB of calldata for 80 proofs), and a checkpoint of a large pod is hundreds of them: with
//     a RawCache (the worker's, shared with the EVM activities), EigenBuildProofs keeps the
//     served transaction in it under the Keccak-256 digest of its calldata (the batch's proof
//     set) and answers a BatchRef (owner, activateTx, digest) and the intent; EigenSignProofs
//     takes the bytes the digest names from the cache or, on a worker without them (restarted,
//     or another one), asks endpoint 5 again with the same request and signs only an answer
//     that verifies against the intent with calldata of that digest (another one is
//     ErrBatchChanged: nothing signed, the workflow re-reads the pod and asks again). Either way
//     the signer verifies the bytes against the intent exactly, as without a cache. It keeps the
//     signed transaction in the cache under its hash and answers the hash only: EVMSendRPC (a
//     local activity for these, like the signature: it runs in the worker that signed, whichever
//     of the replicas serving the queue that is) and EVMConfirm's re-sends read the bytes
//     there, else take the node's copy of the hash (a
//     transaction it has pending or mined, re-encoded and checked to hash to it). Neither (the
//     signing worker stopped before the bytes reached the node) is ErrSignedUnavailable: nothing
//     was sent from here, and the transact loop follows the hash on the chain, whose word
//     (landed, or the nonce free and the build replaced under the same nonce) ends the step as
//     for any broadcast that failed. A signed transaction is therefore recorded in history by its
//     hash only, and its bytes are in at most the cache's bound (DefaultRawCacheEntries) and the
//     node's pool.
//   - Errors are application errors whose types are activities' Err* or this package's.
package eigenlayer
