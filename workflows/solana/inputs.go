package solana

import (
	"fmt"
	"strings"

	sol "github.com/gagliardetto/solana-go"
	"go.temporal.io/sdk/temporal"

	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/workflows"
)

// Chain is the chain name of every Solana operation (StakeflowChain).
const Chain = "solana"

// Unit is the base unit of Solana amounts.
const Unit = "lamports"

// Decimals: 1 SOL = 10^9 lamports (activities/solana names the source).
const Decimals = actsolana.Decimals

// StepWaitingDeactivation: an unstaked account waits for the end of its deactivation epoch (days
// on mainnet) before its lamports can be withdrawn.
const StepWaitingDeactivation = "waiting-deactivation"

// RecordedSteps are the values a Solana operation gives the StakeflowStep search attribute.
var RecordedSteps = append(append([]string{}, workflows.RecordedSteps...), StepWaitingDeactivation)

// StakeInput starts a StakeWorkflow: stake Lamports from Staker, delegated to VoteAccount.
type StakeInput struct {
	Network string `json:"network"`
	Staker  string `json:"staker"`
	// Lamports funds the new stake account, exactly.
	Lamports uint64 `json:"lamports"`
	// VoteAccount is the validator asked for; empty lets the service choose one the policy allows.
	VoteAccount string `json:"voteAccount,omitempty"`
	// RequestedBy names who started the operation; that identity cannot approve it.
	RequestedBy string            `json:"requestedBy,omitempty"`
	Options     workflows.Options `json:"options,omitempty"`
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
	RequestedBy string            `json:"requestedBy,omitempty"`
	Options     workflows.Options `json:"options,omitempty"`
}

// WithdrawInput starts a WithdrawWorkflow: withdraw an inactive (or deactivating) stake account's
// lamports to Staker.
type WithdrawInput = UnstakeInput

// Result is what a finished operation returns.
type Result struct {
	Operation    actsolana.Operation  `json:"operation"`
	Network      string               `json:"network"`
	Staker       string               `json:"staker"`
	Lamports     uint64               `json:"lamports"`
	StakeAccount string               `json:"stakeAccount,omitempty"`
	VoteAccount  string               `json:"voteAccount,omitempty"`
	Transactions []workflows.TxRecord `json:"transactions"`
	// FeeLamports is the fees the operation's transactions paid, as the chain reports them.
	FeeLamports uint64 `json:"feeLamports"`
	// CancelRequested is true when a cancel arrived after the first broadcast: the workflow went on to
	// follow what it had sent.
	CancelRequested bool `json:"cancelRequested,omitempty"`
}

// Validate checks a stake input; the error names the first field that is wrong.
func (in StakeInput) Validate() error {
	if err := validateNetwork(in.Network); err != nil {
		return err
	}
	if err := validateAddress("staker", in.Staker, true); err != nil {
		return err
	}
	if in.Lamports == 0 {
		return &workflows.InputError{Field: "lamports", Reason: "must be a positive whole number of lamports"}
	}
	if in.Lamports > maxLamports {
		return &workflows.InputError{Field: "lamports", Reason: fmt.Sprintf("%d is more than the largest amount accepted (%d)", in.Lamports, uint64(maxLamports))}
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
		return &workflows.InputError{Field: "stakeAccount", Reason: "is the staker's own address, not a stake account"}
	}
	if in.Lamports > maxLamports {
		return &workflows.InputError{Field: "lamports", Reason: fmt.Sprintf("%d is more than the largest amount accepted (%d)", in.Lamports, uint64(maxLamports))}
	}
	return in.Options.Validate()
}

// maxLamports keeps amounts within the StakeflowAmount search attribute (int64).
const maxLamports = 1<<63 - 1

func validateNetwork(network string) error {
	if networks.Solana.Has(network) {
		return nil
	}
	return &workflows.InputError{Field: "network", Reason: fmt.Sprintf("%q is not one of %s", network, strings.Join(networks.Solana.Names(), ", "))}
}

func validateAddress(field, addr string, required bool) error {
	if addr == "" {
		if required {
			return &workflows.InputError{Field: field, Reason: "is required"}
		}
		return nil
	}
	pk, err := sol.PublicKeyFromBase58(addr)
	if err != nil {
		return &workflows.InputError{Field: field, Reason: fmt.Sprintf("%q is not a base58 Solana address: %v", addr, err)}
	}
	if pk.IsZero() {
		return &workflows.InputError{Field: field, Reason: "is the all-zero address"}
	}
	return nil
}

// StakeAttributes are the search attributes of a stake known at start.
func StakeAttributes(in StakeInput) []temporal.SearchAttributeUpdate {
	attrs := []temporal.SearchAttributeUpdate{
		workflows.SAChain.ValueSet(Chain), workflows.SANetwork.ValueSet(in.Network),
		workflows.SAOperation.ValueSet(string(actsolana.OpStake)), workflows.SAStaker.ValueSet(in.Staker),
	}
	if in.Lamports > 0 && in.Lamports <= maxLamports {
		attrs = append(attrs, workflows.SAAmount.ValueSet(int64(in.Lamports)))
	}
	return attrs
}

// UnstakeAttributes are the search attributes known at start of an unstake (op "unstake") or a
// withdraw (op "withdraw"); the amount when one was asked (otherwise the stake account's balance
// is recorded once read).
func UnstakeAttributes(op string, in UnstakeInput) []temporal.SearchAttributeUpdate {
	attrs := []temporal.SearchAttributeUpdate{
		workflows.SAChain.ValueSet(Chain), workflows.SANetwork.ValueSet(in.Network),
		workflows.SAOperation.ValueSet(op), workflows.SAStaker.ValueSet(in.Staker),
		workflows.SAStakeAccount.ValueSet(in.StakeAccount),
	}
	if in.Lamports > 0 && in.Lamports <= maxLamports {
		attrs = append(attrs, workflows.SAAmount.ValueSet(int64(in.Lamports)))
	}
	return attrs
}

// FormatSOL renders lamports as SOL for summaries, exactly (no float rounding).
func FormatSOL(lamports uint64) string { return actsolana.FormatSOL(lamports) }

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
