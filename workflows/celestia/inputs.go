package celestia

import (
	"fmt"

	"go.temporal.io/sdk/temporal"

	actcelestia "github.com/stakeflow/stakeflow/activities/celestia"
	"github.com/stakeflow/stakeflow/amount"
	"github.com/stakeflow/stakeflow/lease"
	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
	"github.com/stakeflow/stakeflow/workflows"
)

// Chain is the chain name of every Celestia operation (StakeflowChain); Unit its amounts' unit.
const (
	Chain = actcelestia.ChainName
	Unit  = actcelestia.Unit
	// Decimals: 1 TIA = 10^6 utia (signer/cosmos names the source).
	Decimals = signercosmos.Decimals
)

// Workflow types, as the worker registers them and the starter starts them.
const (
	DelegateWorkflowType        = "CelestiaDelegateWorkflow"
	UndelegateWorkflowType      = "CelestiaUndelegateWorkflow"
	RedelegateWorkflowType      = "CelestiaRedelegateWorkflow"
	WithdrawRewardsWorkflowType = "CelestiaWithdrawRewardsWorkflow"
)

// Operations, as StakeflowOperation and the status name them.
const (
	OpDelegate        = signercosmos.OpDelegate
	OpUndelegate      = signercosmos.OpUndelegate
	OpRedelegate      = signercosmos.OpRedelegate
	OpWithdrawRewards = signercosmos.OpWithdrawRewards
)

// StepWaitingUnbonding: an undelegation waits for the unbonding period (21 days on Celestia).
const StepWaitingUnbonding = "waiting-unbonding"

// RecordedSteps are the values a Celestia operation gives the StakeflowStep search attribute.
var RecordedSteps = append(append([]string{}, workflows.RecordedSteps...), lease.StepWaitingNonce, StepWaitingUnbonding)

// Input starts a Celestia operation.
type Input struct {
	Network string `json:"network"`
	// Delegator is the staker's celestia1... address.
	Delegator string `json:"delegator"`
	// Validator is the celestiavaloper1... validator (the source of a redelegation).
	Validator string `json:"validator"`
	// DstValidator is a redelegation's destination validator.
	DstValidator string `json:"dstValidator,omitempty"`
	// Amount in utia (1 TIA = 10^6 utia), a decimal integer; empty for withdraw-rewards.
	Amount      string            `json:"amount,omitempty"`
	RequestedBy string            `json:"requestedBy,omitempty"`
	Options     workflows.Options `json:"options,omitempty"`
}

// Intent is the signer's intent of an operation's input.
func (in Input) Intent(op string) signercosmos.Intent {
	return signercosmos.Intent{Operation: op, Network: in.Network, Delegator: in.Delegator,
		Validator: in.Validator, DstValidator: in.DstValidator, Amount: in.Amount}
}

// Validate checks the input for the operation its fields imply: a redelegation with a
// destination, a reward withdrawal without an amount, else a delegation (or undelegation).
func (in Input) Validate() error {
	op := OpDelegate
	switch {
	case in.DstValidator != "":
		op = OpRedelegate
	case in.Amount == "":
		op = OpWithdrawRewards
	}
	return in.ValidateFor(op)
}

// ValidateFor checks the input for operation op: bech32 addresses with the right prefixes, a
// known network, a positive amount where the operation moves tokens.
func (in Input) ValidateFor(op string) error {
	if err := in.Intent(op).Validate(); err != nil {
		return &workflows.InputError{Field: "input", Reason: err.Error()}
	}
	return in.Options.Validate()
}

// Result is what a finished Celestia operation returns.
type Result struct {
	Operation    string `json:"operation"`
	Network      string `json:"network"`
	Delegator    string `json:"delegator"`
	Validator    string `json:"validator"`
	DstValidator string `json:"dstValidator,omitempty"`
	// Amount in utia (for withdraw-rewards, the rewards read before).
	Amount       string               `json:"amount,omitempty"`
	Transactions []workflows.TxRecord `json:"transactions"`
	// Fee is what the operation's transactions paid, in utia.
	Fee string `json:"fee"`
	// UnbondedAt is when an undelegation's tokens were back (chain time).
	UnbondedAt      string `json:"unbondedAt,omitempty"`
	CancelRequested bool   `json:"cancelRequested,omitempty"`
}

// FormatTIA renders utia as TIA, exactly; empty stays empty.
func FormatTIA(utia string) string {
	if utia == "" {
		return utia
	}
	a, err := amount.Parse(utia)
	if err != nil {
		return utia + " " + Unit
	}
	return a.Format(Decimals) + " TIA"
}

// Summary is the static one-line summary of a Celestia operation for the Web UI.
func Summary(op string, in Input) string {
	switch op {
	case OpDelegate:
		return fmt.Sprintf("delegate %s from %s to %s (%s)", FormatTIA(in.Amount), in.Delegator, in.Validator, in.Network)
	case OpUndelegate:
		return fmt.Sprintf("undelegate %s from %s, wait for the unbonding period, back to %s (%s)", FormatTIA(in.Amount), in.Validator, in.Delegator, in.Network)
	case OpRedelegate:
		return fmt.Sprintf("redelegate %s of %s from %s to %s (%s)", FormatTIA(in.Amount), in.Delegator, in.Validator, in.DstValidator, in.Network)
	case OpWithdrawRewards:
		return fmt.Sprintf("withdraw %s's rewards from %s (%s)", in.Delegator, in.Validator, in.Network)
	}
	return op
}

// Attributes are the search attributes of a Celestia operation known at start.
func Attributes(op, network, delegator string) []temporal.SearchAttributeUpdate {
	return []temporal.SearchAttributeUpdate{
		workflows.SAChain.ValueSet(Chain), workflows.SANetwork.ValueSet(network),
		workflows.SAOperation.ValueSet(op), workflows.SAStaker.ValueSet(delegator),
	}
}
