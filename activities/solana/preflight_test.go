package solana

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
)

// rentStake is a stake account's rent-exempt minimum on every public cluster (0.00228288 SOL,
// `solana rent 200`).
const rentStake = 2_282_880

func TestPreflight(t *testing.T) {
	const staker = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
	const sol = 1_000_000_000
	for _, tt := range []struct {
		name    string
		balance uint64
		in      PreflightInput
		want    string // the refusal; empty when the balance pays
	}{
		{"stake paid to the lamport", 2*sol + rentStake + 5_000,
			PreflightInput{Operation: OpStake, Lamports: 2 * sol}, ""},
		{"stake one lamport short", 2*sol + rentStake + 4_999,
			PreflightInput{Operation: OpStake, Lamports: 2 * sol},
			"insufficient funds: staker " + staker + " holds 2.002287879 SOL, the stake needs 2 SOL plus 0.00228288 SOL rent for the stake account plus 0.000005 SOL in fees; nothing was signed"},
		{"stake of the whole balance", 100 * sol,
			PreflightInput{Operation: OpStake, Lamports: 100 * sol},
			"insufficient funds: staker " + staker + " holds 100 SOL, the stake needs 100 SOL plus 0.00228288 SOL rent for the stake account plus 0.000005 SOL in fees; nothing was signed"},
		{"stake whose sum overflows", 1 << 63,
			PreflightInput{Operation: OpStake, Lamports: 1<<64 - 1}, "insufficient funds"},
		{"a known fee counts instead of the base fee", 2*sol + rentStake + 5_000,
			PreflightInput{Operation: OpStake, Lamports: 2 * sol, FeeLamports: 15_000}, "plus 0.000015 SOL in fees"},
		{"withdraw pays only its fee", 5_000,
			PreflightInput{Operation: OpWithdraw, Lamports: 100 * sol}, ""},
		{"deactivation without a fee", 0,
			PreflightInput{Operation: OpUnstake},
			"insufficient funds: staker " + staker + " holds 0 SOL, the unstake needs 0.000005 SOL in fees; nothing was signed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.Network, in.Staker = "testnet", staker
			acts := &Activities{Chains: map[string]SolanaReader{"testnet": &fakeChain{balance: tt.balance, rent: rentStake}}}
			res, err := execute[PreflightResult](t, acts, "Preflight", in)
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.balance, res.Balance)
				assert.LessOrEqual(t, res.Needed, res.Balance)
				return
			}
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(err, &appErr), "%v", err)
			assert.Equal(t, activities.ErrInsufficientFunds, appErr.Type())
			assert.True(t, appErr.NonRetryable())
			assert.Contains(t, appErr.Message(), tt.want)
		})
	}
}

// TestPreflightReadFailureIsRetried: a balance the RPC cannot read is not a refusal.
func TestPreflightReadFailureIsRetried(t *testing.T) {
	acts := &Activities{Chains: map[string]SolanaReader{"testnet": &fakeChain{readErr: errors.New("connection refused")}}}
	_, err := execute[PreflightResult](t, acts, "Preflight", PreflightInput{Network: "testnet", Operation: OpStake, Staker: "x", Lamports: 1})
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	assert.Equal(t, activities.ErrChainUnavailable, appErr.Type())
	assert.False(t, appErr.NonRetryable())
}

// TestPreflightRefusesAStakeUnderTheChainsMinimumDelegation: the minimum is what the chain
// answers (getStakeMinimumDelegation), not a constant: 1 lamport while the stake program's
// stake_raise_minimum_delegation_to_1_sol feature is off, 1 SOL once it is on. The stake account
// holds the amount and delegates what is above its rent-exempt reserve, so a stake under the
// reserve plus the minimum is refused before anything is signed, naming the amount, the reserve
// and the minimum, whatever the balance.
func TestPreflightRefusesAStakeUnderTheChainsMinimumDelegation(t *testing.T) {
	const staker = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
	const sol = 1_000_000_000
	for _, tt := range []struct {
		name              string
		minimum, lamports uint64
		want              string // the refusal; empty when accepted
	}{
		{"1 SOL minimum, one lamport under", sol, sol + rentStake - 1,
			"stake of 1.002282879 SOL would delegate 0.999999999 SOL above the stake account's rent-exempt reserve of 0.00228288 SOL, under the chain's minimum delegation of 1 SOL (getStakeMinimumDelegation on testnet): stake at least 1.00228288 SOL; nothing was signed"},
		{"1 SOL minimum, exactly", sol, sol + rentStake, ""},
		{"1 SOL minimum, 1 SOL asked", sol, sol, "would delegate 0.99771712 SOL"},
		{"1 lamport minimum, the reserve plus one", 1, rentStake + 1, ""},
		{"1 lamport minimum, the reserve only", 1, rentStake, "would delegate 0 SOL"},
		{"under the reserve", 1, rentStake - 1, "stake of 0.002282879 SOL would delegate 0 SOL"},
		{"a raised minimum", 5 * sol, 4 * sol, "under the chain's minimum delegation of 5 SOL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			acts := &Activities{Chains: map[string]SolanaReader{"testnet": &fakeChain{balance: 100 * sol, rent: rentStake, minDelegation: tt.minimum}}}
			res, err := execute[PreflightResult](t, acts, "Preflight", PreflightInput{Network: "testnet", Operation: OpStake, Staker: staker, Lamports: tt.lamports})
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.minimum, res.MinimumDelegation)
				return
			}
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(err, &appErr), "%v", err)
			assert.Equal(t, activities.ErrInvalidInput, appErr.Type())
			assert.True(t, appErr.NonRetryable())
			assert.Contains(t, appErr.Message(), tt.want)
		})
	}
	// The other operations create no delegation: the minimum is not asked.
	acts := &Activities{Chains: map[string]SolanaReader{"testnet": &fakeChain{balance: sol, minDelegation: 10 * sol}}}
	_, err := execute[PreflightResult](t, acts, "Preflight", PreflightInput{Network: "testnet", Operation: OpWithdraw, Staker: staker, Lamports: sol})
	require.NoError(t, err)
}
