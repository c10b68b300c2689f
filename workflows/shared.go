package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gagliardetto/solana-go"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
)

// TaskQueue is the task queue the worker polls and operations are started on.
const TaskQueue = "stakeflow"

// Query and update names.
const (
	// QueryStatus returns the operation's Status.
	QueryStatus = "status"
	// UpdateApprove approves an operation waiting for approval. Argument: ApprovalInput.
	UpdateApprove = "approve"
	// UpdateReject rejects an operation waiting for approval. Argument: ApprovalInput.
	UpdateReject = "reject"
)

// Workflow-level error types (ApplicationError.Type) besides the activities' own.
const (
	// ErrRejected: an approver rejected the operation.
	ErrRejected = "Rejected"
	// ErrApprovalTimeout: no decision came before the approval timeout.
	ErrApprovalTimeout = "ApprovalTimeout"
	// ErrTooManyBuilds: every transaction built expired before landing, MaxBuilds times.
	ErrTooManyBuilds = "TooManyBuilds"
	// ErrTransactionFailed: the transaction landed with an on-chain error.
	ErrTransactionFailed = "TransactionFailed"
)

// Chain names.
const ChainSolana = "solana"

// Steps an operation goes through, as reported by the status query and the workflow's current
// details. The StakeflowStep search attribute records the RecordedSteps.
const (
	StepValidating          = "validating"
	StepAwaitingApproval    = "awaiting-approval"
	StepBuilding            = "building"
	StepCheckingValidator   = "checking-validator"
	StepSigning             = "signing"
	StepBroadcasting        = "broadcasting"
	StepConfirming          = "confirming"
	StepWaitingDeactivation = "waiting-deactivation"
	// StepStalled: the step named in Status.Stall cannot go on for a reason that does not heal by
	// retrying at once (an RPC or the service refusing the worker); it is tried again on a backoff.
	StepStalled   = "stalled"
	StepDone      = "done"
	StepFailed    = "failed"
	StepCancelled = "cancelled"
)

// RecordedSteps are the values the StakeflowStep search attribute takes. It is written where an
// operation comes to rest (awaiting-approval, confirming, waiting-deactivation), where it leaves
// one (the step it moves on to: checking-validator after an approval, building after a wait or an
// expired transaction), and at its end; it reads validating from the start until the first of
// these. Signing and broadcasting take milliseconds and are never recorded there: the status query
// and the current details carry every step.
var RecordedSteps = []string{StepValidating, StepAwaitingApproval, StepCheckingValidator, StepBuilding,
	StepConfirming, StepWaitingDeactivation, StepStalled, StepDone, StepFailed, StepCancelled}

// Search attributes, registered on the namespace by `starter setup` (and by the local stack).
var (
	SAChain        = temporal.NewSearchAttributeKeyKeyword("StakeflowChain")
	SANetwork      = temporal.NewSearchAttributeKeyKeyword("StakeflowNetwork")
	SAOperation    = temporal.NewSearchAttributeKeyKeyword("StakeflowOperation")
	SAStep         = temporal.NewSearchAttributeKeyKeyword("StakeflowStep")
	SAStaker       = temporal.NewSearchAttributeKeyKeyword("StakeflowStaker")
	SAStakeAccount = temporal.NewSearchAttributeKeyKeyword("StakeflowStakeAccount")
	SAAmount       = temporal.NewSearchAttributeKeyInt64("StakeflowAmount")
	SASignatures   = temporal.NewSearchAttributeKeyKeywordList("StakeflowSignatures")
)

// SearchAttributeTypes lists every search attribute with its type name as `temporal server
// start-dev --search-attribute` and `temporal operator search-attribute create` take them.
func SearchAttributeTypes() [][2]string {
	return [][2]string{
		{SAChain.GetName(), "Keyword"},
		{SANetwork.GetName(), "Keyword"},
		{SAOperation.GetName(), "Keyword"},
		{SAStep.GetName(), "Keyword"},
		{SAStaker.GetName(), "Keyword"},
		{SAStakeAccount.GetName(), "Keyword"},
		{SAAmount.GetName(), "Int"},
		{SASignatures.GetName(), "KeywordList"},
	}
}

// Options tune an operation. Zero values take the defaults below.
type Options struct {
	// MaxBuilds bounds how many transactions are built for one step when each expires unlanded. Default 3.
	MaxBuilds int `json:"maxBuilds,omitempty"`
	// ApprovalTimeout is how long an operation waits for approval. Default 24h.
	ApprovalTimeout time.Duration `json:"approvalTimeout,omitempty"`
	// ConfirmPollInterval is the pause between signature status reads. Default 1s.
	ConfirmPollInterval time.Duration `json:"confirmPollInterval,omitempty"`
	// BroadcastTimeout bounds the retries of one broadcast before the workflow checks the chain. Default 2m.
	BroadcastTimeout time.Duration `json:"broadcastTimeout,omitempty"`
	// BuildTimeout bounds the retries of one build while the service fails. Default 30m.
	BuildTimeout time.Duration `json:"buildTimeout,omitempty"`
	// SlotDuration sizes the wait for an epoch's end from the slots left in it when the worker
	// does not report its network's slot time. Default 400ms.
	SlotDuration time.Duration `json:"slotDuration,omitempty"`
	// MaxEpochWait is the longest single durable wait before the stake account is read again. Default 1h.
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

func (o Options) withDefaults() Options {
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

// StakeInput starts a StakeWorkflow: stake Lamports from Staker, delegated to VoteAccount.
type StakeInput struct {
	Network string `json:"network"`
	Staker  string `json:"staker"`
	// Lamports funds the new stake account, exactly.
	Lamports uint64 `json:"lamports"`
	// VoteAccount is the validator asked for; empty lets the service choose one the policy allows.
	VoteAccount string `json:"voteAccount,omitempty"`
	// RequestedBy names who started the operation; that identity cannot approve it.
	RequestedBy string  `json:"requestedBy,omitempty"`
	Options     Options `json:"options,omitempty"`
}

// UnstakeInput starts an UnstakeWorkflow: deactivate StakeAccount, wait until it is inactive,
// then withdraw its lamports to Staker.
type UnstakeInput struct {
	Network      string `json:"network"`
	Staker       string `json:"staker"`
	StakeAccount string `json:"stakeAccount"`
	// Lamports, when set, must equal the stake account's balance; zero takes the balance.
	Lamports uint64 `json:"lamports,omitempty"`
	// RequestedBy names who started the operation; that identity cannot approve it.
	RequestedBy string  `json:"requestedBy,omitempty"`
	Options     Options `json:"options,omitempty"`
}

// WithdrawInput starts a WithdrawWorkflow: withdraw an inactive (or deactivating) stake account's
// lamports to Staker.
type WithdrawInput = UnstakeInput

// ApprovalInput is the argument of the approve and reject updates.
type ApprovalInput struct {
	Approver string `json:"approver"`
	Reason   string `json:"reason,omitempty"`
}

// TxRecord is one transaction that reached its end.
type TxRecord struct {
	Kind      activities.Operation `json:"kind"`
	Signature string               `json:"signature"`
	Slot      uint64               `json:"slot"`
	// Builds is how many transactions were built for this step (more than one when earlier ones expired).
	Builds int `json:"builds"`
	// FeeLamports is the fee the transaction paid, as the chain reports it.
	FeeLamports uint64    `json:"feeLamports"`
	FinalizedAt time.Time `json:"finalizedAt"`
}

// Result is what a finished operation returns.
type Result struct {
	Operation    activities.Operation `json:"operation"`
	Network      string               `json:"network"`
	Staker       string               `json:"staker"`
	Lamports     uint64               `json:"lamports"`
	StakeAccount string               `json:"stakeAccount,omitempty"`
	VoteAccount  string               `json:"voteAccount,omitempty"`
	Transactions []TxRecord           `json:"transactions"`
	// FeeLamports is the fees the operation's transactions paid, as the chain reports them.
	FeeLamports uint64 `json:"feeLamports"`
	// CancelRequested is true when a cancel arrived after the first broadcast: the workflow went on to
	// follow what it had sent.
	CancelRequested bool `json:"cancelRequested,omitempty"`
}

// Attempt is one built transaction and how far it got.
type Attempt struct {
	Kind            activities.Operation `json:"kind"`
	Build           int                  `json:"build"`
	Signature       string               `json:"signature,omitempty"`
	RecentBlockhash string               `json:"recentBlockhash,omitempty"`
	BuiltAt         time.Time            `json:"builtAt"`
	SignedAt        time.Time            `json:"signedAt,omitzero"`
	BroadcastAt     time.Time            `json:"broadcastAt,omitzero"`
	ConfirmedAt     time.Time            `json:"confirmedAt,omitzero"`
	Outcome         string               `json:"outcome,omitempty"`
	Slot            uint64               `json:"slot,omitempty"`
	// MaxFeeLamports is the most the transaction pays if it lands (base and priority fee), as
	// verified before signing; FeeLamports is what it paid, from the chain.
	MaxFeeLamports uint64 `json:"maxFeeLamports,omitempty"`
	FeeLamports    uint64 `json:"feeLamports,omitempty"`
	Error          string `json:"error,omitempty"`
}

// Approval decisions.
const (
	DecisionApproved = "approved"
	DecisionRejected = "rejected"
	DecisionTimedOut = "timed-out"
)

// Approval records the approval gate of an operation.
type Approval struct {
	Required bool `json:"required"`
	// ApprovalsRequired is how many distinct approvers must approve (two at or above DualThreshold).
	ApprovalsRequired int    `json:"approvalsRequired,omitempty"`
	Threshold         uint64 `json:"threshold,omitempty"`
	DualThreshold     uint64 `json:"dualThreshold,omitempty"`
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
	Approver string    `json:"approver"`
	Decision string    `json:"decision"`
	Reason   string    `json:"reason,omitempty"`
	At       time.Time `json:"at"`
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
}

// Status is what the status query returns: where the operation stands.
type Status struct {
	OperationID  string               `json:"operationId"`
	Operation    activities.Operation `json:"operation"`
	Chain        string               `json:"chain"`
	Network      string               `json:"network"`
	Staker       string               `json:"staker"`
	Lamports     uint64               `json:"lamports"`
	VoteAccount  string               `json:"voteAccount,omitempty"`
	StakeAccount string               `json:"stakeAccount,omitempty"`
	RequestedBy  string               `json:"requestedBy,omitempty"`
	Step         string               `json:"step"`
	StepSince    time.Time            `json:"stepSince"`
	StartedAt    time.Time            `json:"startedAt"`
	WaitingUntil time.Time            `json:"waitingUntil,omitzero"`
	Approval     Approval             `json:"approval"`
	Attempts     []Attempt            `json:"attempts"`
	Transactions []TxRecord           `json:"transactions"`
	// Stall is set while a step is stalled and until it gets past what stalled it.
	Stall           *Stall `json:"stall,omitempty"`
	CancelRequested bool   `json:"cancelRequested,omitempty"`
	Error           string `json:"error,omitempty"`
}

// InputError names a field of an operation's input that is not valid.
type InputError struct {
	Field  string
	Reason string
}

func (e *InputError) Error() string { return fmt.Sprintf("invalid %s: %s", e.Field, e.Reason) }

// Validate checks a stake input; the error names the first field that is wrong.
func (in StakeInput) Validate() error {
	if err := validateNetwork(in.Network); err != nil {
		return err
	}
	if err := validateAddress("staker", in.Staker, true); err != nil {
		return err
	}
	if in.Lamports == 0 {
		return &InputError{Field: "lamports", Reason: "must be a positive whole number of lamports"}
	}
	if in.Lamports > maxLamports {
		return &InputError{Field: "lamports", Reason: fmt.Sprintf("%d is more than the largest amount accepted (%d)", in.Lamports, uint64(maxLamports))}
	}
	if err := validateAddress("voteAccount", in.VoteAccount, false); err != nil {
		return err
	}
	return in.Options.Validate()
}

// Validate checks an unstake or withdraw input; the error names the first field that is wrong.
func (in UnstakeInput) Validate() error {
	if err := validateNetwork(in.Network); err != nil {
		return err
	}
	if err := validateAddress("staker", in.Staker, true); err != nil {
		return err
	}
	if err := validateAddress("stakeAccount", in.StakeAccount, true); err != nil {
		return err
	}
	if in.StakeAccount == in.Staker {
		return &InputError{Field: "stakeAccount", Reason: "is the staker's own address, not a stake account"}
	}
	if in.Lamports > maxLamports {
		return &InputError{Field: "lamports", Reason: fmt.Sprintf("%d is more than the largest amount accepted (%d)", in.Lamports, uint64(maxLamports))}
	}
	return in.Options.Validate()
}

// maxLamports keeps amounts within the StakeflowAmount search attribute (int64).
const maxLamports = 1<<63 - 1

func validateNetwork(network string) error {
	for _, n := range activities.SolanaNetworks {
		if network == n {
			return nil
		}
	}
	return &InputError{Field: "network", Reason: fmt.Sprintf("%q is not one of %s", network, strings.Join(activities.SolanaNetworks, ", "))}
}

func validateAddress(field, addr string, required bool) error {
	if addr == "" {
		if required {
			return &InputError{Field: field, Reason: "is required"}
		}
		return nil
	}
	pk, err := solana.PublicKeyFromBase58(addr)
	if err != nil {
		return &InputError{Field: field, Reason: fmt.Sprintf("%q is not a base58 Solana address: %v", addr, err)}
	}
	if pk.IsZero() {
		return &InputError{Field: field, Reason: "is the all-zero address"}
	}
	return nil
}

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

// StakeAttributes are the search attributes of a stake known at start.
func StakeAttributes(in StakeInput) []temporal.SearchAttributeUpdate {
	attrs := []temporal.SearchAttributeUpdate{
		SAChain.ValueSet(ChainSolana), SANetwork.ValueSet(in.Network),
		SAOperation.ValueSet(string(activities.OpStake)), SAStaker.ValueSet(in.Staker),
	}
	if in.Lamports > 0 && in.Lamports <= maxLamports {
		attrs = append(attrs, SAAmount.ValueSet(int64(in.Lamports)))
	}
	return attrs
}

// UnstakeAttributes are the search attributes known at start of an unstake (op "unstake") or a
// withdraw (op "withdraw"); the amount when one was asked (otherwise the stake account's balance
// is recorded once read).
func UnstakeAttributes(op string, in UnstakeInput) []temporal.SearchAttributeUpdate {
	attrs := []temporal.SearchAttributeUpdate{
		SAChain.ValueSet(ChainSolana), SANetwork.ValueSet(in.Network),
		SAOperation.ValueSet(op), SAStaker.ValueSet(in.Staker),
		SAStakeAccount.ValueSet(in.StakeAccount),
	}
	if in.Lamports > 0 && in.Lamports <= maxLamports {
		attrs = append(attrs, SAAmount.ValueSet(int64(in.Lamports)))
	}
	return attrs
}

// ErrAlreadyStarted is returned by starters when the operation ID was used before.
var ErrAlreadyStarted = errors.New("operation ID already used")

// FormatSOL renders lamports as SOL for summaries, exactly (no float rounding).
func FormatSOL(lamports uint64) string {
	whole, frac := lamports/1_000_000_000, lamports%1_000_000_000
	if frac == 0 {
		return fmt.Sprintf("%d SOL", whole)
	}
	return strings.TrimRight(fmt.Sprintf("%d.%09d", whole, frac), "0") + " SOL"
}

// StakeSummary is the static one-line summary of a stake for the Web UI.
func StakeSummary(in StakeInput) string {
	to := in.VoteAccount
	if to == "" {
		to = "a validator chosen by the service"
	} else {
		to = "vote account " + to
	}
	return fmt.Sprintf("stake %s from %s to %s (%s)", FormatSOL(in.Lamports), in.Staker, to, in.Network)
}

// UnstakeSummary is the static one-line summary of an unstake then withdraw for the Web UI.
func UnstakeSummary(in UnstakeInput) string {
	return fmt.Sprintf("unstake %s, wait for deactivation, withdraw to %s (%s)", in.StakeAccount, in.Staker, in.Network)
}

// WithdrawSummary is the static one-line summary of a withdraw for the Web UI.
func WithdrawSummary(in WithdrawInput) string {
	return fmt.Sprintf("withdraw inactive stake account %s to %s (%s)", in.StakeAccount, in.Staker, in.Network)
}
