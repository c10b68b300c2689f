package workflows

import (
	"fmt"
	"time"
)

// Options tune an operation. Zero values take the defaults below.
type Options struct {
	// MaxBuilds bounds how many transactions are built for one step when each is proven unable to
	// land. Default 3.
	MaxBuilds int `json:"maxBuilds,omitempty"`
	// ApprovalTimeout is how long an operation waits for approval. Default 24h.
	ApprovalTimeout time.Duration `json:"approvalTimeout,omitempty"`
	// ConfirmPollInterval is the pause between signature status reads. Default 1s.
	ConfirmPollInterval time.Duration `json:"confirmPollInterval,omitempty"`
	// BroadcastTimeout bounds the retries of one broadcast before the workflow checks the chain. Default 2m.
	BroadcastTimeout time.Duration `json:"broadcastTimeout,omitempty"`
	// BuildTimeout bounds the retries of one build while the service fails. Default 30m.
	BuildTimeout time.Duration `json:"buildTimeout,omitempty"`
	// SlotDuration sizes a wait measured in slots or blocks (the end of a Solana epoch, say) when
	// the worker does not report its network's block time. Default 400ms.
	SlotDuration time.Duration `json:"slotDuration,omitempty"`
	// MaxEpochWait is the longest single durable wait before the chain is read again. Default 1h.
	MaxEpochWait time.Duration `json:"maxEpochWait,omitempty"`
	// MaxStallWait is the longest wait between tries of a stalled step. Default 10m.
	MaxStallWait time.Duration `json:"maxStallWait,omitempty"`
}

// Bounds of Options, checked by Validate.
const (
	// MaxMaxBuilds bounds Options.MaxBuilds: each build is a new transaction for the same intent.
	MaxMaxBuilds = 10
	// ConfirmHeartbeatTimeout is the heartbeat timeout of Confirm; the poll interval must stay
	// well below it so that a live confirmation is never taken for a dead one.
	ConfirmHeartbeatTimeout = 30 * time.Second
)

// Validate checks the options; the error names the first one that is wrong. Zero values take
// the defaults.
func (o Options) Validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"approvalTimeout", o.ApprovalTimeout}, {"confirmPollInterval", o.ConfirmPollInterval}, {"broadcastTimeout", o.BroadcastTimeout},
		{"buildTimeout", o.BuildTimeout}, {"slotDuration", o.SlotDuration}, {"maxEpochWait", o.MaxEpochWait}, {"maxStallWait", o.MaxStallWait}} {
		if d.v < 0 {
			return &InputError{Field: "options." + d.name, Reason: fmt.Sprintf("%s is negative", d.v)}
		}
	}
	switch {
	case o.MaxBuilds < 0 || o.MaxBuilds > MaxMaxBuilds:
		return &InputError{Field: "options.maxBuilds", Reason: fmt.Sprintf("%d is not between 1 and %d (0 takes the default, 3)", o.MaxBuilds, MaxMaxBuilds)}
	case o.ConfirmPollInterval > ConfirmHeartbeatTimeout/3:
		return &InputError{Field: "options.confirmPollInterval", Reason: fmt.Sprintf("%s must be at most %s, a third of Confirm's heartbeat timeout", o.ConfirmPollInterval, ConfirmHeartbeatTimeout/3)}
	case o.BroadcastTimeout != 0 && o.BroadcastTimeout < 10*time.Second:
		return &InputError{Field: "options.broadcastTimeout", Reason: fmt.Sprintf("%s is shorter than 10s", o.BroadcastTimeout)}
	case o.BuildTimeout != 0 && o.BuildTimeout < 10*time.Second:
		return &InputError{Field: "options.buildTimeout", Reason: fmt.Sprintf("%s is shorter than 10s", o.BuildTimeout)}
	case o.SlotDuration > time.Minute:
		return &InputError{Field: "options.slotDuration", Reason: fmt.Sprintf("%s is longer than a minute", o.SlotDuration)}
	case o.MaxEpochWait != 0 && o.MaxEpochWait < time.Second:
		return &InputError{Field: "options.maxEpochWait", Reason: fmt.Sprintf("%s is shorter than a second", o.MaxEpochWait)}
	case o.MaxStallWait != 0 && o.MaxStallWait < time.Second:
		return &InputError{Field: "options.maxStallWait", Reason: fmt.Sprintf("%s is shorter than a second", o.MaxStallWait)}
	}
	return nil
}

// WithDefaults fills the zero options with their defaults.
func (o Options) WithDefaults() Options {
	if o.MaxBuilds <= 0 {
		o.MaxBuilds = 3
	}
	if o.ApprovalTimeout <= 0 {
		o.ApprovalTimeout = 24 * time.Hour
	}
	if o.ConfirmPollInterval <= 0 {
		o.ConfirmPollInterval = time.Second
	}
	if o.BroadcastTimeout <= 0 {
		o.BroadcastTimeout = 2 * time.Minute
	}
	if o.BuildTimeout <= 0 {
		o.BuildTimeout = 30 * time.Minute
	}
	if o.SlotDuration <= 0 {
		o.SlotDuration = 400 * time.Millisecond
	}
	if o.MaxEpochWait <= 0 {
		o.MaxEpochWait = time.Hour
	}
	if o.MaxStallWait <= 0 {
		o.MaxStallWait = 10 * time.Minute
	}
	return o
}

// ApprovalInput is the argument of the approve and reject updates. On a worker configured with
// approvers (signed mode) a decision carries a statement signed by a configured approver's key
// (package approval: the operation, the decision, the intent digest the status shows, a time),
// the key and the signature; Approver is then ignored, the configured name is recorded. Without
// approvers (named mode) Approver is a free-text name.
type ApprovalInput struct {
	Approver string `json:"approver"`
	Reason   string `json:"reason,omitempty"`
	// Statement is the signed statement's text; PublicKey the signer's Ed25519 key and Signature
	// the signature over Statement's bytes, both standard base64.
	Statement string `json:"statement,omitempty"`
	PublicKey string `json:"publicKey,omitempty"`
	Signature string `json:"signature,omitempty"`
}

// Amounts and fees are whole numbers of the chain's base unit (Status.Unit: lamports, wei, utia),
// written as decimal strings: no float, and no limit a chain's amounts could pass.

// TxRecord is one transaction that reached its end.
type TxRecord struct {
	// Kind is the step the transaction made (stake, unstake, withdraw, approve, delegate, ...).
	Kind string `json:"kind"`
	// TxID is the chain's ID of the transaction: a Solana signature, an EVM transaction hash.
	TxID string `json:"txId"`
	// Block is where it was finalized: a Solana slot, an EVM block number.
	Block uint64 `json:"block"`
	// Builds is how many transactions were built for this step (more than one when earlier ones
	// were proven unable to land).
	Builds int `json:"builds"`
	// Fee is what the transaction paid, as the chain reports it, in the chain's base unit.
	Fee         string    `json:"fee"`
	FinalizedAt time.Time `json:"finalizedAt"`
}

// Attempt is one built transaction and how far it got.
type Attempt struct {
	Kind  string `json:"kind"`
	Build int    `json:"build"`
	TxID  string `json:"txId,omitempty"`
	// Expiry is what bounds where the transaction can land: a Solana recent blockhash, an EVM
	// nonce.
	Expiry      string    `json:"expiry,omitempty"`
	BuiltAt     time.Time `json:"builtAt"`
	SignedAt    time.Time `json:"signedAt,omitzero"`
	BroadcastAt time.Time `json:"broadcastAt,omitzero"`
	ConfirmedAt time.Time `json:"confirmedAt,omitzero"`
	Outcome     string    `json:"outcome,omitempty"`
	Block       uint64    `json:"block,omitempty"`
	// MaxFee is the most the transaction pays if it lands, as verified before signing; Fee is what
	// it paid, from the chain. Both in the chain's base unit.
	MaxFee string `json:"maxFee,omitempty"`
	Fee    string `json:"fee,omitempty"`
	Error  string `json:"error,omitempty"`
	// BroadcastError is what the broadcast said when it did not succeed while the transaction
	// may still have reached the chain (a lost answer, a service answering another hash): the
	// chain decided where it ended, and this says why it had to.
	BroadcastError string `json:"broadcastError,omitempty"`
}

// Approval decisions.
const (
	DecisionApproved = "approved"
	DecisionRejected = "rejected"
	DecisionTimedOut = "timed-out"
)

// Approval modes.
const (
	// ModeNamed: the worker has no approvers configured; a decision names its approver in free
	// text. Anyone who can send updates can type any name: this is not separation of duties.
	ModeNamed = "named"
	// ModeSigned: every decision is a statement signed by a configured approver's key.
	ModeSigned = "signed"
)

// Approval records the approval gate of an operation.
type Approval struct {
	Required bool `json:"required"`
	// Mode is how decisions are bound to people (ModeNamed or ModeSigned); empty until the policy
	// answered, and no decision is taken before.
	Mode string `json:"mode,omitempty"`
	// ApprovalsRequired is how many distinct approvers must approve (two at or above DualThreshold).
	ApprovalsRequired int `json:"approvalsRequired,omitempty"`
	// Threshold and DualThreshold are the policy's amounts (in Status.Unit) at and above which one
	// and two approvals are required; empty when the policy sets none.
	Threshold     string `json:"threshold,omitempty"`
	DualThreshold string `json:"dualThreshold,omitempty"`
	// Decision is the gate's outcome: approved (enough approvals), rejected (any rejection) or
	// timed-out; empty while it waits.
	Decision string `json:"decision,omitempty"`
	// Approver, Reason and At are those of the latest decision.
	Approver string    `json:"approver,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	At       time.Time `json:"at,omitzero"`
	// Decisions lists every approve and reject accepted, with who and when.
	Decisions []ApprovalRecord `json:"decisions"`
}

// ApprovalRecord is one approve or reject decision.
type ApprovalRecord struct {
	// Approver is the configured approver's name in signed mode, the typed name in named mode.
	Approver string `json:"approver"`
	// Fingerprint is the OpenSSH SHA256 fingerprint of the key that signed the decision (signed
	// mode only).
	Fingerprint string    `json:"fingerprint,omitempty"`
	Decision    string    `json:"decision"`
	Reason      string    `json:"reason,omitempty"`
	At          time.Time `json:"at"`
}

// Stall records a step that cannot go on for now and is tried again on a backoff.
type Stall struct {
	// Step is the step that stalled.
	Step string `json:"step"`
	// Since is when it first stalled; Tries counts the tries that failed since.
	Since time.Time `json:"since"`
	Tries int       `json:"tries"`
	// LastError is the last failure, in one line.
	LastError string `json:"lastError"`
	// NextTryAt is when the step is tried again.
	NextTryAt time.Time `json:"nextTryAt"`
	// WaysOut names what the operator can do, when waiting is not the only way (a transaction
	// sent that the chain keeps waiting: wait, speed up, cancel).
	WaysOut string `json:"waysOut,omitempty"`
}

// Status is what the status query returns: where the operation stands. It is the same for every
// chain.
type Status struct {
	OperationID string `json:"operationId"`
	Operation   string `json:"operation"`
	Chain       string `json:"chain"`
	Network     string `json:"network"`
	Staker      string `json:"staker"`
	// Amount is in Unit, the chain's base unit; empty until known (an unstake of a whole account
	// learns it from the chain).
	Amount string `json:"amount,omitempty"`
	Unit   string `json:"unit"`
	// Validator is where the stake goes or comes from: a Solana vote account, a Polygon validator
	// share contract.
	Validator string `json:"validator,omitempty"`
	// Account is the on-chain account the operation acts on: a Solana stake account.
	Account     string `json:"account,omitempty"`
	RequestedBy string `json:"requestedBy,omitempty"`
	// InitiatorFingerprint is the fingerprint of the key that signed the start, when it was
	// signed: that key cannot approve or reject the operation.
	InitiatorFingerprint string `json:"initiatorFingerprint,omitempty"`
	// IntentDigest is the SHA-256 (hex) of what the operation will do as fixed at its start
	// (approval.Intent): what an approver's statement names.
	IntentDigest string     `json:"intentDigest"`
	Step         string     `json:"step"`
	StepSince    time.Time  `json:"stepSince"`
	StartedAt    time.Time  `json:"startedAt"`
	WaitingUntil time.Time  `json:"waitingUntil,omitzero"`
	Approval     Approval   `json:"approval"`
	Attempts     []Attempt  `json:"attempts"`
	Transactions []TxRecord `json:"transactions"`
	// Checkpoint is an EigenLayer checkpoint's progress; nil for every other operation.
	Checkpoint *CheckpointProgress `json:"checkpoint,omitempty"`
	// Stall is set while a step is stalled and until it gets past what stalled it.
	Stall           *Stall `json:"stall,omitempty"`
	CancelRequested bool   `json:"cancelRequested,omitempty"`
	// Reason is why the operation failed, in one line, cause first (see Reason); Error is the
	// whole chain of causes.
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Continued is what an operation carries from one run to the next when it continues as new
// (workflow.NewContinueAsNewError): the workflow ID, and so the operation, stays the same.
type Continued struct {
	StartedAt time.Time `json:"startedAt"`
	// Transactions are those that landed in the earlier runs.
	Transactions []TxRecord `json:"transactions"`
}

// CheckpointProgress is where an EigenLayer checkpoint stands, as the pod's reads show it.
type CheckpointProgress struct {
	// Pod is the EigenPod checkpointed.
	Pod string `json:"pod"`
	// Timestamp is the checkpoint's (currentCheckpointTimestamp when it started); 0 until one
	// is started or found.
	Timestamp uint64 `json:"timestamp"`
	// ProofsRemaining are the validators still to prove, as last read.
	ProofsRemaining uint64 `json:"proofsRemaining"`
	// BatchesSent counts this operation's proofs transactions that landed.
	BatchesSent int `json:"batchesSent"`
	// StartTx is the transaction that started the checkpoint, when known.
	StartTx string `json:"startTx,omitempty"`
}

// InputError names a field of an operation's input that is not valid.
type InputError struct {
	Field  string
	Reason string
}

func (e *InputError) Error() string { return fmt.Sprintf("invalid %s: %s", e.Field, e.Reason) }

// ValidateOperationID checks an operation ID (the workflow ID).
func ValidateOperationID(id string) error {
	if id == "" {
		return &InputError{Field: "operation ID", Reason: "is required"}
	}
	if len(id) > 200 {
		return &InputError{Field: "operation ID", Reason: "is longer than 200 characters"}
	}
	for _, r := range id {
		if r < 0x21 || r > 0x7e {
			return &InputError{Field: "operation ID", Reason: fmt.Sprintf("contains %q: use printable ASCII without spaces", r)}
		}
	}
	return nil
}
