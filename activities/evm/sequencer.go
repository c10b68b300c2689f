package evm

import "strings"

// Names of the nonce sequencer (workflows/evm) that EVMRequestLease signals: defined here, where
// both the activity that starts it and the workflow that is it can import them.
const (
	// SequencerWorkflowType is the sequencer's workflow type.
	SequencerWorkflowType = "EVMNonceSequencerWorkflow"
	// SignalAcquire asks the sequencer for the lease (a SequencerRequest).
	SignalAcquire = "acquire"
	// ErrNonceConflict: the address's nonces on chain are not what stakeflow handed out or
	// expects: a transaction stakeflow did not send is pending or landed, or nonces were skipped
	// (a gap). Non-retryable.
	ErrNonceConflict = "NonceConflict"
)

// SequencerID is the workflow ID of the sequencer of address on network.
func SequencerID(network, address string) string {
	return "evm-nonces/" + network + "/" + strings.ToLower(address)
}

// SequencerState is the sequencer's input, carried over each continue-as-new. EVMRequestLease
// starts a sequencer with Network and Address only.
type SequencerState struct {
	Network string `json:"network"`
	Address string `json:"address"`
	// Next is the next nonce to hand out; Known is false until the chain was read once.
	Next  uint64 `json:"next"`
	Known bool   `json:"known"`
	// Holder is the operation holding the lease; Queue those waiting, in order.
	Holder *SequencerRequest  `json:"holder,omitempty"`
	Queue  []SequencerRequest `json:"queue,omitempty"`
	// Reader is the name of the activity that reads the address's nonces (NoncesInput to
	// Nonces) on a chain other than EVM's, whose sequences the same sequencer hands out (Cosmos
	// account sequences); empty: EVMReadNonces.
	Reader string `json:"reader,omitempty"`
}
