// Package hyperliquid holds Hyperliquid's workflows on the operation core (package workflows).
//
// Withdraw (HyperliquidWithdrawWorkflow) moves staking rewards to the spot balance. It first takes
// its delegator's lease (one operation per delegator at a time, the nonce lease the nonce chains
// use; a second operation waits in waiting-nonce) and holds it until its withdrawal's fate is
// final (the history shows it initiated, which no one can undo, or it is proven unable to land),
// giving it back on every exit: so the withdrawals the history shows before it signs are
// every earlier operation's, and it never takes another operation's withdrawal for its own. It
// refuses before anything is signed when the delegator has 5 withdrawals pending (naming them),
// asks the staking service for the request (endpoint 6), has the signer verify it against the
// intent and sign it (EIP-712; an answer whose echoed amount and action disagree is refused
// whole), submits it to the exchange (the same signed action at every retry; a resubmission the
// exchange already holds counts as sent), then follows it: until the delegator's history shows
// its withdrawal (then it is final: it reaches spot after the queue), or until the proof that it
// cannot land (its nonce left the exchange's window, acthl.Fate, and the history does not show
// it). A cancel, or a submission ended without the exchange's answer, does not stop that
// following. It then waits with durable timers until the withdrawal reaches spot (7 days on
// mainnet), re-reading the account after each wait, and reports the amount that reached spot. A
// new request is asked for only when the exchange refused the earlier nonce and does not hold the
// action, at most MaxBuilds times.
package hyperliquid

import (
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/sdk/temporal"

	acthl "github.com/stakeflow/stakeflow/activities/hyperliquid"
	"github.com/stakeflow/stakeflow/amount"
	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/lease"
	"github.com/stakeflow/stakeflow/workflows"
)

// Chain is the chain name of every Hyperliquid operation (StakeflowChain); Unit its amounts' unit
// (wei, 10^-8 HYPE).
const (
	Chain = acthl.Chain
	Unit  = acthl.Unit
	// Decimals: 1 HYPE = 10^8 wei (signer/hyperliquid names the source).
	Decimals = acthl.Decimals
)

// WithdrawWorkflowType is the withdrawal's workflow type.
const WithdrawWorkflowType = "HyperliquidWithdrawWorkflow"

// OpWithdraw is the withdrawal operation, as StakeflowOperation and the status name it.
const OpWithdraw = "withdraw"

// StepWaitingWithdrawal: the withdrawal waits in Hyperliquid's queue (7 days on mainnet) before it
// reaches spot.
const StepWaitingWithdrawal = "waiting-withdrawal"

// RecordedSteps are the values a Hyperliquid operation gives the StakeflowStep search attribute.
var RecordedSteps = append(append([]string{}, workflows.RecordedSteps...), lease.StepWaitingNonce, StepWaitingWithdrawal)

// WithdrawInput starts a withdrawal of Amount HYPE of Delegator's staking rewards to its spot
// balance.
type WithdrawInput struct {
	Network   string `json:"network"`
	Delegator string `json:"delegator"`
	// Amount in HYPE, a decimal number with at most 8 decimals ("12.5").
	Amount      string            `json:"amount"`
	RequestedBy string            `json:"requestedBy,omitempty"`
	Options     workflows.Options `json:"options,omitempty"`
}

// WithdrawResult is what a finished withdrawal returns.
type WithdrawResult struct {
	Operation string `json:"operation"`
	Network   string `json:"network"`
	Delegator string `json:"delegator"`
	// Amount is what was asked, HYPE; Wei the same in 10^-8 HYPE.
	Amount string `json:"amount"`
	Wei    string `json:"wei"`
	// Nonce and Digest identify the signed action the exchange took.
	Nonce  uint64 `json:"nonce"`
	Digest string `json:"digest"`
	// Hash is the L1 transaction of the withdrawal, as the delegator's history shows it.
	Hash string `json:"hash"`
	// Requests counts the requests asked of the service (more than one when the exchange refused
	// an earlier nonce).
	Requests int `json:"requests"`
	// ReachedSpot is the amount that reached spot, wei; SpotBefore and SpotAfter the spot HYPE
	// balance read before and after, wei.
	ReachedSpot     string `json:"reachedSpot"`
	SpotBefore      string `json:"spotBefore"`
	SpotAfter       string `json:"spotAfter"`
	CancelRequested bool   `json:"cancelRequested,omitempty"`
}

// Validate checks the input; the error names the first field that is wrong.
func (in WithdrawInput) Validate() error {
	if !networks.Hyperliquid.Has(in.Network) {
		return &workflows.InputError{Field: "network", Reason: fmt.Sprintf("%q is not one of %s", in.Network, strings.Join(networks.Hyperliquid.Names(), ", "))}
	}
	if in.Delegator == "" {
		return &workflows.InputError{Field: "delegator", Reason: "is required"}
	}
	if !common.IsHexAddress(in.Delegator) || !strings.HasPrefix(in.Delegator, "0x") || common.HexToAddress(in.Delegator) == (common.Address{}) {
		return &workflows.InputError{Field: "delegator", Reason: fmt.Sprintf("%q is not a 0x-prefixed 20-byte hex address", in.Delegator)}
	}
	if _, err := WeiOf(in.Amount); err != nil {
		return err
	}
	return in.Options.Validate()
}

// WeiOf reads a HYPE amount (a decimal number of HYPE with at most Decimals decimals, more than
// zero, under the amount package's rule) exactly as wei; the error names the amount field.
func WeiOf(text string) (uint64, error) {
	if text == "" {
		return 0, &workflows.InputError{Field: "amount", Reason: "is required"}
	}
	a, err := amount.ParseDecimal(text, Decimals)
	if err == nil {
		err = a.Positive()
	}
	var w uint64
	if err == nil {
		w, err = a.Uint64()
	}
	if err != nil {
		return 0, &workflows.InputError{Field: "amount", Reason: err.Error()}
	}
	return w, nil
}

// FormatHYPE renders wei as HYPE, exactly.
func FormatHYPE(wei string) string {
	a, err := amount.Parse(wei)
	if err != nil {
		return wei + " wei"
	}
	return a.Format(Decimals) + " HYPE"
}

// Summary is the static one-line summary of a Hyperliquid operation for the Web UI.
func Summary(op, network, delegator, amount string) string {
	if op == OpWithdraw {
		return fmt.Sprintf("withdraw %s HYPE of %s's staking balance to spot, after Hyperliquid's queue (%s)", amount, delegator, network)
	}
	return op
}

// Attributes are the search attributes of a Hyperliquid operation known at start.
func Attributes(op, network, delegator string) []temporal.SearchAttributeUpdate {
	return []temporal.SearchAttributeUpdate{
		workflows.SAChain.ValueSet(Chain), workflows.SANetwork.ValueSet(network),
		workflows.SAOperation.ValueSet(op), workflows.SAStaker.ValueSet(delegator),
	}
}
