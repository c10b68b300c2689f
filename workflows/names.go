package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
)

// DefaultTaskQueuePrefix begins every module's task queue unless --task-queue-prefix names
// another (a second deployment sharing a namespace).
const DefaultTaskQueuePrefix = "stakeflow"

// TaskQueueOf is the task queue of a module (a chain family, or the data jobs) under prefix:
// "stakeflow-celestia". Each module's operations are started on its queue and only a worker
// serving that module polls it, with that module's keys.
func TaskQueueOf(prefix, module string) string { return prefix + "-" + module }

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

// Steps an operation goes through, as reported by the status query and the workflow's current
// details. The StakeflowStep search attribute records the RecordedSteps.
const (
	StepValidating        = "validating"
	StepAwaitingApproval  = "awaiting-approval"
	StepBuilding          = "building"
	StepCheckingValidator = "checking-validator"
	StepSigning           = "signing"
	StepBroadcasting      = "broadcasting"
	StepConfirming        = "confirming"
	// StepStalled: the step named in Status.Stall cannot go on for a reason that does not heal by
	// retrying at once (an RPC or the service refusing the worker); it is tried again on a backoff.
	StepStalled   = "stalled"
	StepDone      = "done"
	StepFailed    = "failed"
	StepCancelled = "cancelled"
)

// RecordedSteps are the values every operation may give the StakeflowStep search attribute; a
// chain's own waits add theirs (Setup.Waits). It is written where an operation comes to rest
// (awaiting-approval, confirming, a chain's wait, stalled), where it leaves one (the step it moves
// on to: checking-validator after an approval, building after a wait or a transaction proven
// unable to land), and at its end; it reads validating from the start until the first of these.
// Signing and broadcasting take milliseconds and are never recorded there: the status query and the
// current details carry every step.
var RecordedSteps = []string{StepValidating, StepAwaitingApproval, StepCheckingValidator, StepBuilding,
	StepConfirming, StepStalled, StepDone, StepFailed, StepCancelled}

// Search attributes, registered on the namespace by `starter setup` (and by the local stack).
var (
	SAChain     = temporal.NewSearchAttributeKeyKeyword("StakeflowChain")
	SANetwork   = temporal.NewSearchAttributeKeyKeyword("StakeflowNetwork")
	SAOperation = temporal.NewSearchAttributeKeyKeyword("StakeflowOperation")
	SAStep      = temporal.NewSearchAttributeKeyKeyword("StakeflowStep")
	SAStaker    = temporal.NewSearchAttributeKeyKeyword("StakeflowStaker")
	// SAStakeAccount is the on-chain account the operation acts on (Status.Account): a Solana stake
	// account, say.
	SAStakeAccount = temporal.NewSearchAttributeKeyKeyword("StakeflowStakeAccount")
	// SAAmount is the amount in the chain's base unit, when it fits an int64 (lamports always do).
	SAAmount = temporal.NewSearchAttributeKeyInt64("StakeflowAmount")
	// SASignatures lists every transaction ID (Solana signature, EVM hash) the operation's run has
	// sent or may have sent, the newest MaxSignaturesAttribute of them.
	SASignatures = temporal.NewSearchAttributeKeyKeywordList("StakeflowSignatures")
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

// ErrAlreadyStarted is returned by starters when the operation ID was used before.
var ErrAlreadyStarted = errors.New("operation ID already used")
