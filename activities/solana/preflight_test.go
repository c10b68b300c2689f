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
