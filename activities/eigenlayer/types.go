package eigenlayer

import (
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// Chain, unit and error types of the checkpoint activities.
const (
	// ChainEigenLayer is the StakeflowChain of checkpoint operations (on Ethereum L1).
	ChainEigenLayer = "eigenlayer"
	// ErrNoPod: the owner has no EigenPod.
	ErrNoPod = "EigenLayerNoPod"
	// ErrCheckpointActive: a checkpoint is active; no second startCheckpoint is built.
	ErrCheckpointActive = "EigenLayerCheckpointActive"
	// ErrNoCheckpoint: no checkpoint is active (it completed): no proofs to send.
	ErrNoCheckpoint = "EigenLayerNoCheckpoint"
	// ErrAlreadyProven: every proof of the batch is of a validator already proven in this
	// checkpoint (another party sent their proofs first) or no longer active: the EigenPod would
	// skip them all (it skips such proofs, it does not revert). Nothing was signed; re-read and
	// ask again.
	ErrAlreadyProven = "EigenLayerAlreadyProven"
	// ErrBatchChanged: a batch named by its digest is no longer in the worker's cache, and the
	// service now serves another one (the pod moved on). Nothing was signed; re-read and ask again.
	ErrBatchChanged = "EigenLayerBatchChanged"
	// ErrForkTimestamp: the EigenPodManager's pectraForkTimestamp is zero, or disagrees with the
	// network's Pectra fork (signerevm.PectraForkTimestamps). Nothing was signed.
	ErrForkTimestamp = "EigenLayerForkTimestamp"
)

// PodInput names an owner's pod on a network.
type PodInput struct {
	Network string `json:"network"`
	Owner   string `json:"owner"`
}

// Pod is an owner's EigenPod and its checkpoint, read at one block.
type Pod struct {
	// Pod is the pod's address; empty when the owner has none.
	Pod   string `json:"pod,omitempty"`
	Block uint64 `json:"block"`
	// CheckpointTimestamp is currentCheckpointTimestamp(): 0 when no checkpoint is active.
	CheckpointTimestamp uint64 `json:"checkpointTimestamp"`
	// LastCheckpointTimestamp is lastCheckpointTimestamp(): the last completed checkpoint's.
	LastCheckpointTimestamp uint64 `json:"lastCheckpointTimestamp"`
	// BeaconBlockRoot and ProofsRemaining are the active checkpoint's.
	BeaconBlockRoot string `json:"beaconBlockRoot,omitempty"`
	ProofsRemaining uint64 `json:"proofsRemaining"`
	// ActiveValidators is activeValidatorCount().
	ActiveValidators uint64 `json:"activeValidators"`
	// StartTx is the transaction that started the active checkpoint, when its log was found.
	StartTx string `json:"startTx,omitempty"`
}

// StartBuildInput asks for the owner's startCheckpoint under the lease's nonce.
type StartBuildInput struct {
	Network string                `json:"network"`
	Intent  signerevm.StartIntent `json:"intent"`
	// Build counts from 1; a later build replaces the previous under the same nonce, its fees
	// bumped over Prev*.
	Build                    int    `json:"build"`
	PrevMaxFeePerGas         string `json:"prevMaxFeePerGas,omitempty"`
	PrevMaxPriorityFeePerGas string `json:"prevMaxPriorityFeePerGas,omitempty"`
}

// StartBuildResult is the unsigned startCheckpoint and the intent with stakeflow's choices.
type StartBuildResult struct {
	UnsignedTransaction string                `json:"unsignedTransaction"`
	Intent              signerevm.StartIntent `json:"intent"`
}

// StartSignInput is a startCheckpoint to verify and sign.
type StartSignInput struct {
	Network             string                `json:"network"`
	Intent              signerevm.StartIntent `json:"intent"`
	UnsignedTransaction string                `json:"unsignedTransaction"`
}

// ProofsBuildInput asks the service for the next proofs transaction of the owner's pod.
type ProofsBuildInput struct {
	Network   string `json:"network"`
	Owner     string `json:"owner"`
	Submitter string `json:"submitter"`
	Pod       string `json:"pod"`
	// ActivateTx is the hash of the transaction that started the checkpoint (endpoint 5's
	// activateTx, as we read it).
	ActivateTx string `json:"activateTx"`
	// CheckpointTimestamp is the checkpoint the operation proves.
	CheckpointTimestamp uint64 `json:"checkpointTimestamp"`
	// Nonce is the submitter's lease nonce; Build and Prev* as StartBuildInput's.
	Nonce                    uint64 `json:"nonce"`
	Build                    int    `json:"build"`
	PrevMaxFeePerGas         string `json:"prevMaxFeePerGas,omitempty"`
	PrevMaxPriorityFeePerGas string `json:"prevMaxPriorityFeePerGas,omitempty"`
}

// ProofsBuildResult is the service's proofs transaction, verified and simulated, named by its
// digest (its bytes stay in the worker's RawCache), and the intent (with stakeflow's nonce, gas
// and fees) the signer holds it to.
type ProofsBuildResult struct {
	// Batch names the served transaction.
	Batch BatchRef `json:"batch"`
	// ServedTransaction is endpoint 5's serializeTx, only when the worker has no RawCache.
	ServedTransaction string                 `json:"servedTransaction,omitempty"`
	Intent            signerevm.ProofsIntent `json:"intent"`
	// Proofs is how many validators the batch proves.
	Proofs int `json:"proofs"`
}

// BatchRef is what a workflow holds of one proofs batch instead of its bytes (tens of kilobytes
// each): what to ask the service for it again and the digest the answer must have.
type BatchRef struct {
	// Owner and ActivateTx are endpoint 5's request.
	Owner      string `json:"owner"`
	ActivateTx string `json:"activateTx"`
	// Digest is the Keccak-256 of the served transaction's calldata (verifyCheckpointProofs and
	// its proofs: the batch's proof set, against its checkpoint's root), 0x hex. The signed
	// transaction is the intent's nonce, gas and fees over this calldata.
	Digest string `json:"digest"`
}

// ProofsSignInput is a proofs transaction to verify and sign: ServedTransaction, or (empty) the
// one Batch names, from the worker's RawCache or asked of the service again.
type ProofsSignInput struct {
	Network           string                 `json:"network"`
	Intent            signerevm.ProofsIntent `json:"intent"`
	Batch             BatchRef               `json:"batch"`
	ServedTransaction string                 `json:"servedTransaction,omitempty"`
}

// SignResult is the EVM activities' (a signed transaction, its hash, nonce and fees).
type SignResult = actevm.SignResult
