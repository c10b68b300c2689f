package polygon

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/sdk/temporal"

	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/amount"
	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/lease"
	"github.com/stakeflow/stakeflow/workflows"
)

// Chain is the chain name of every Polygon operation (StakeflowChain); Unit its amounts' unit.
const (
	Chain = actevm.ChainPolygon
	Unit  = actevm.Unit
	// Decimals: 1 POL = 10^18 wei, the decimals() of the POL ERC-20 token (PolygonEcosystemToken,
	// 0x455e53CBB86018Ac2B8092FdCd39d8444aFFC3F6 on Ethereum mainnet, OpenZeppelin's default 18).
	Decimals = 18
)

// Workflow types, as the worker registers them and the starter starts them.
const (
	DelegateWorkflowType        = "PolygonDelegateWorkflow"
	UnstakeWorkflowType         = "PolygonUnstakeWorkflow"
	WithdrawRewardsWorkflowType = "PolygonWithdrawRewardsWorkflow"
	RestakeWorkflowType         = "PolygonRestakeWorkflow"
)

// Operations, as StakeflowOperation and the status name them.
const (
	OpDelegate        = "delegate"
	OpUnstake         = "unstake"
	OpWithdrawRewards = "withdraw-rewards"
	OpRestake         = "restake"
)

// StepWaitingWithdrawal: an unbond waits for the StakeManager's withdrawal delay (days on
// mainnet) before it can be claimed.
const StepWaitingWithdrawal = "waiting-withdrawal-delay"

// RecordedSteps are the values a Polygon operation gives the StakeflowStep search attribute.
var RecordedSteps = append(append([]string{}, workflows.RecordedSteps...), lease.StepWaitingNonce, StepWaitingWithdrawal)

// DelegateInput starts a delegate: Amount wei of POL from Staker to the validator whose
// ValidatorShare contract is ValidatorShare.
type DelegateInput struct {
	Network        string `json:"network"`
	Staker         string `json:"staker"`
	ValidatorShare string `json:"validatorShare"`
	// Amount in wei (1 POL = 10^18 wei), a decimal integer.
	Amount string `json:"amount"`
	// RequestedBy names who started the operation; that identity cannot approve it.
	RequestedBy string            `json:"requestedBy,omitempty"`
	Options     workflows.Options `json:"options,omitempty"`
}

// UnstakeInput starts an unstake: Amount wei of POL unbonded from the validator, the withdrawal
// delay waited out, then claimed back to Staker.
type UnstakeInput = DelegateInput

// RewardsInput starts a withdraw-rewards or a restake of Staker's rewards with one validator.
type RewardsInput struct {
	Network        string            `json:"network"`
	Staker         string            `json:"staker"`
	ValidatorShare string            `json:"validatorShare"`
	RequestedBy    string            `json:"requestedBy,omitempty"`
	Options        workflows.Options `json:"options,omitempty"`
}

// Result is what a finished Polygon operation returns.
type Result struct {
	Operation      string `json:"operation"`
	Network        string `json:"network"`
	Staker         string `json:"staker"`
	ValidatorShare string `json:"validatorShare"`
	// Amount is the POL the operation moved, in wei (for rewards, what was withdrawn or restaked
	// as read before; the chain's events have the exact figure).
	Amount string `json:"amount,omitempty"`
	// UnbondNonce is an unstake's unbond, claimed at its end.
	UnbondNonce  uint64               `json:"unbondNonce,omitempty"`
	Transactions []workflows.TxRecord `json:"transactions"`
	// Fee is what the operation's transactions paid, in wei.
	Fee             string `json:"fee"`
	CancelRequested bool   `json:"cancelRequested,omitempty"`
}

// Validate checks a delegate or unstake input; the error names the first field that is wrong.
func (in DelegateInput) Validate() error {
	if err := validateCommon(in.Network, in.Staker, in.ValidatorShare); err != nil {
		return err
	}
	if _, err := ParseWei("amount", in.Amount); err != nil {
		return err
	}
	return in.Options.Validate()
}

// Validate checks a rewards input; the error names the first field that is wrong.
func (in RewardsInput) Validate() error {
	if err := validateCommon(in.Network, in.Staker, in.ValidatorShare); err != nil {
		return err
	}
	return in.Options.Validate()
}

func validateCommon(network, staker, share string) error {
	if !networks.EVM.Has(network) {
		return &workflows.InputError{Field: "network", Reason: fmt.Sprintf("%q is not one of %s", network, strings.Join(networks.EVM.Names(), ", "))}
	}
	if err := validateAddress("staker", staker); err != nil {
		return err
	}
	if err := validateAddress("validatorShare", share); err != nil {
		return err
	}
	if strings.EqualFold(staker, share) {
		return &workflows.InputError{Field: "validatorShare", Reason: "is the staker's own address, not a validator share contract"}
	}
	return nil
}

func validateAddress(field, addr string) error {
	if addr == "" {
		return &workflows.InputError{Field: field, Reason: "is required"}
	}
	if !common.IsHexAddress(addr) || !strings.HasPrefix(addr, "0x") {
		return &workflows.InputError{Field: field, Reason: fmt.Sprintf("%q is not a 0x-prefixed 20-byte hex address", addr)}
	}
	if common.HexToAddress(addr) == (common.Address{}) {
		return &workflows.InputError{Field: field, Reason: "is the zero address"}
	}
	return nil
}

// ParseWei reads a positive whole amount of wei written in decimal, at most a uint256 (all a
// contract takes), under the amount package's rule; the error names field.
func ParseWei(field, s string) (*big.Int, error) {
	if s == "" {
		return nil, &workflows.InputError{Field: field, Reason: "is required"}
	}
	a, err := amount.Parse(s)
	if err == nil {
		err = a.Positive()
	}
	if err == nil {
		err = a.AtMost(amount.MaxUint256, "a uint256")
	}
	if err != nil {
		return nil, &workflows.InputError{Field: field, Reason: err.Error()}
	}
	return a.Big(), nil
}

// FormatPOL renders an amount of wei as POL, exactly (no float rounding).
func FormatPOL(wei string) string {
	a, err := amount.Parse(wei)
	if err != nil {
		return wei + " wei"
	}
	return a.Format(Decimals) + " POL"
}

// Summary is the static one-line summary of a Polygon operation for the Web UI.
func Summary(op, network, staker, share, amount string) string {
	switch op {
	case OpDelegate:
		return fmt.Sprintf("delegate %s from %s to validator share %s (%s)", FormatPOL(amount), staker, share, network)
	case OpUnstake:
		return fmt.Sprintf("unstake %s from validator share %s, wait for the withdrawal delay, claim to %s (%s)", FormatPOL(amount), share, staker, network)
	case OpWithdrawRewards:
		return fmt.Sprintf("withdraw %s's rewards from validator share %s (%s)", staker, share, network)
	case OpRestake:
		return fmt.Sprintf("restake %s's rewards with validator share %s (%s)", staker, share, network)
	}
	return op
}

// Attributes are the search attributes of a Polygon operation known at start.
func Attributes(op, network, staker string) []temporal.SearchAttributeUpdate {
	return []temporal.SearchAttributeUpdate{
		workflows.SAChain.ValueSet(Chain), workflows.SANetwork.ValueSet(network),
		workflows.SAOperation.ValueSet(op), workflows.SAStaker.ValueSet(staker),
	}
}
