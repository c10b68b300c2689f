package lease

import (
	"context"
	"strings"
	"time"
)

// WorkflowType is the lease's workflow type: one workflow per (chain, network, address), ID.
const WorkflowType = "NonceLeaseWorkflow"

// Chain is the chain family a lease belongs to: it names the lease's workflow ID, so that the
// same address on two chains (a Hyperliquid delegator is an EVM address) has two leases.
type Chain string

// The chain families that lease their addresses.
const (
	// EVM: Polygon and EigenLayer transaction nonces.
	EVM Chain = "evm"
	// Celestia: Cosmos account sequences.
	Celestia Chain = "celestia"
	// Hyperliquid: no counter (the service chooses the actions' nonces); the lease only orders a
	// delegator's operations.
	Hyperliquid Chain = "hyperliquid"
)

// ID is the workflow ID of the lease of address on chain's network when the ID names the address
// (payloads not encrypted): IDOf the address in lower case.
func ID(chain Chain, network, address string) string {
	return IDOf(chain, network, strings.ToLower(address))
}

// IDOf is the workflow ID of the lease on chain's network of the address named by name: the
// address in lower case, or its search tag when payloads are encrypted (workflows.NameInID), as a
// workflow ID is never encrypted.
func IDOf(chain Chain, network, name string) string {
	return "nonce-lease/" + string(chain) + "/" + network + "/" + name
}

// Names of the lease's signals and query, and of what it reports.
const (
	// SignalAcquire asks for the lease (a Request); SignalRelease gives it back (a Release).
	SignalAcquire = "acquire"
	SignalRelease = "release"
	// SignalGrant carries a Grant to the operation that asked.
	SignalGrant = "nonce-grant"
	// SignalNotice tells a waiting operation what it waits on (a Notice).
	SignalNotice = "nonce-lease-notice"
	// SignalResync is an operator's way out of a lease that does not settle (a holder's release
	// the chain never agrees with): the lease takes the chain's count at final depth.
	SignalResync = "resync"
	// QueryState answers the lease's State.
	QueryState = "sequencer-state"
	// ErrNonceConflict: the address's nonces on chain are not what stakeflow handed out or
	// expects: a transaction stakeflow did not send is pending or landed, or nonces were skipped
	// (a gap). Non-retryable.
	ErrNonceConflict = "NonceConflict"
	// StepWaitingNonce: the operation waits for its address's lease, held by another operation.
	StepWaitingNonce = "waiting-nonce"
)

// Reader reads an address's nonces as its chain counts them: a chain's reader activity
// (EVMReadNonces, CelestiaReadNonces, HLReadLease), which the lease's workflow calls (Register).
type Reader func(context.Context, ReadInput) (Nonces, error)

// Requester asks for the lease of an address on an operation's behalf: a chain's request
// activity (EVMRequestLease, CelestiaRequestLease, HLRequestLease), which signals the lease and
// starts it when it is not running (Ask).
type Requester func(context.Context, Request) error

// ReadInput names an address on a network.
type ReadInput struct {
	Network string `json:"network"`
	Address string `json:"address"`
}

// Nonces are an address's next nonces as the chain counts them.
type Nonces struct {
	// Latest counts its transactions in the latest block; Pending adds those in the node's pool.
	Latest  uint64 `json:"latest"`
	Pending uint64 `json:"pending"`
	// Finalized counts its transactions at finalized depth.
	Finalized uint64 `json:"finalized"`
}

// Request asks the lease of (Chain, Network, Address) for the address's nonces, starting the
// lease when it is not running.
type Request struct {
	Chain   Chain  `json:"chain,omitempty"`
	Network string `json:"network"`
	Address string `json:"address"`
	// WorkflowID and RunID are the requesting operation's: the grant is signalled to it.
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId"`
	// Lease is the lease's workflow ID as the operation names it (IDOf); empty: ID of Address.
	Lease string `json:"lease,omitempty"`
}

// Grant is the lease's answer to an acquire: the first nonce the operation may use, or why it
// may use none.
type Grant struct {
	Nonce uint64 `json:"nonce"`
	Error string `json:"error,omitempty"`
}

// Release gives a lease back: Next is the first nonce the operation did not use.
type Release struct {
	WorkflowID string `json:"workflowId"`
	Next       uint64 `json:"next"`
}

// Notice tells a waiting operation which operation holds its address's lease and, when Stalled,
// why the lease does not come (its holder closed without releasing, the chain does not agree
// with a release).
type Notice struct {
	Holder  string `json:"holder"`
	Reason  string `json:"reason,omitempty"`
	Stalled bool   `json:"stalled,omitempty"`
}

// State is the lease's input, carried over each continue-as-new. Ask starts a lease with Chain,
// Network and Address only.
type State struct {
	Chain   Chain  `json:"chain,omitempty"`
	Network string `json:"network"`
	Address string `json:"address"`
	// Next is the next nonce to hand out; Known is false until the chain was read once.
	Next  uint64 `json:"next"`
	Known bool   `json:"known"`
	// Holder is the operation holding the lease; Queue those waiting, in order.
	Holder *Request  `json:"holder,omitempty"`
	Queue  []Request `json:"queue,omitempty"`
	// Settling is the lease given back and not yet agreed by the chain (nil: none).
	Settling *Settling `json:"settling,omitempty"`
	// CheckEvery is how often the lease asks whether its holder still runs, and the bound after
	// which the waiting operations are told of a lease that does not settle (0:
	// DefaultCheckEvery).
	CheckEvery time.Duration `json:"checkEvery,omitempty"`
	// Events are the last reconciliations with the chain, newest last (at most MaxEvents).
	Events []Event `json:"events,omitempty"`
}

// DefaultCheckEvery is State.CheckEvery's default; MaxEvents bounds State.Events.
const (
	DefaultCheckEvery = 3 * time.Minute
	MaxEvents         = 20
)

// Settling is a lease given back (or taken from a holder that closed without giving it back)
// while the lease waits for the chain to agree: no nonce is handed out until the nonce the chain
// has consumed at final depth reaches Claim.
type Settling struct {
	// WorkflowID and RunID are the operation that held the lease.
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId,omitempty"`
	// From is the nonce the holder was granted; Claim the first nonce it says it did not use
	// (From when it closed without saying).
	From  uint64 `json:"from"`
	Claim uint64 `json:"claim"`
	// Closed is the holder's close status when it closed without releasing (Terminated,
	// TimedOut, ...); empty when it released.
	Closed string `json:"closed,omitempty"`
	// Since is when the lease was given back or found abandoned; Reads counts the chain reads
	// that did not settle it; Told is the reason the waiting operations were last told of.
	Since time.Time `json:"since"`
	Reads int       `json:"reads,omitempty"`
	Told  string    `json:"told,omitempty"`
}

// Event records what the lease took from the chain rather than from a holder: a release the
// chain contradicted, a holder found closed, an operator's resync.
type Event struct {
	At time.Time `json:"at"`
	// Kind is one of the Event* constants; Holder the operation concerned.
	Kind   string `json:"kind"`
	Holder string `json:"holder,omitempty"`
	// Claimed is the nonce the holder gave back; Next the one the lease continued from.
	Claimed uint64 `json:"claimed"`
	Next    uint64 `json:"next"`
	Detail  string `json:"detail"`
}

// Kinds of Event.
const (
	// EventChainAhead: the chain had consumed more nonces at final depth than the holder gave
	// back (a transaction of the holder landed past what it said): the chain's count was taken.
	EventChainAhead = "chain-ahead"
	// EventHolderClosed: the holder closed without releasing; the lease was freed at the chain's
	// count once nothing of the address was pending.
	EventHolderClosed = "holder-closed"
	// EventResync: an operator told the lease to take the chain's count.
	EventResync = "resync"
)

// HolderInput names the operation holding a lease (its run, when known).
type HolderInput struct {
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId,omitempty"`
}

// HolderState is whether a lease holder still runs, and how it closed when not.
type HolderState struct {
	Running bool `json:"running"`
	// Status is the run's status as Temporal names it (Running, Completed, Failed, Canceled,
	// Terminated, TimedOut, ContinuedAsNew), or NotFound.
	Status string `json:"status"`
}
