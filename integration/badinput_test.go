//go:build integration

package integration

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/internal/starter"
	wfhyperliquid "github.com/stakeflow/stakeflow/workflows/hyperliquid"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
	wfton "github.com/stakeflow/stakeflow/workflows/ton"
)

// TestBadInputStartedDirectly starts workflows with malformed input straight through the Temporal
// client, past the admin tool's checks: each fails at once with an error naming the field, no
// workflow is left running, and nothing is sent.
func TestBadInputStartedDirectly(t *testing.T) {
	staker := st.Stakers[0].String()
	acct := st.Stakers[1].String()
	ledgerBefore, err := st.Sandbox.Runtime().Ledger(context.Background())
	require.NoError(t, err)
	hyperliquidSubmittedBefore := st.Sandbox.HyperliquidAccount("testnet", hyperliquidDelegator(0)).Submitted
	type start struct {
		wf    any
		in    any
		field string
	}
	for name, tc := range map[string]start{
		"bad base58 staker":      {wfsolana.StakeWorkflow, wfsolana.StakeInput{Network: "testnet", Staker: "0OIl0OIl", Lamports: 2 * sol}, "staker"},
		"short staker":           {wfsolana.StakeWorkflow, wfsolana.StakeInput{Network: "testnet", Staker: "abc", Lamports: 2 * sol}, "staker"},
		"zero amount":            {wfsolana.StakeWorkflow, wfsolana.StakeInput{Network: "testnet", Staker: staker}, "lamports"},
		"overflowing amount":     {wfsolana.StakeWorkflow, wfsolana.StakeInput{Network: "testnet", Staker: staker, Lamports: 1 << 63}, "lamports"},
		"unknown network":        {wfsolana.StakeWorkflow, wfsolana.StakeInput{Network: "devnet", Staker: staker, Lamports: 2 * sol}, "network"},
		"bad vote account":       {wfsolana.StakeWorkflow, wfsolana.StakeInput{Network: "testnet", Staker: staker, Lamports: 2 * sol, VoteAccount: "vote"}, "voteAccount"},
		"missing stake account":  {wfsolana.UnstakeWorkflow, wfsolana.UnstakeInput{Network: "testnet", Staker: staker}, "stakeAccount"},
		"stake account = staker": {wfsolana.UnstakeWorkflow, wfsolana.UnstakeInput{Network: "testnet", Staker: staker, StakeAccount: staker}, "stakeAccount"},
		"withdraw bad staker":    {wfsolana.WithdrawWorkflow, wfsolana.WithdrawInput{Network: "testnet", Staker: "x", StakeAccount: acct}, "staker"},
		"hyperliquid bad delegator": {wfhyperliquid.WithdrawWorkflowType,
			wfhyperliquid.WithdrawInput{Network: "testnet", Delegator: "0x12", Amount: "1"}, "delegator"},
		"hyperliquid unknown network": {wfhyperliquid.WithdrawWorkflowType,
			wfhyperliquid.WithdrawInput{Network: "devnet", Delegator: hyperliquidDelegator(0).Hex(), Amount: "1"}, "network"},
		"hyperliquid amount past 10^-8": {wfhyperliquid.WithdrawWorkflowType,
			wfhyperliquid.WithdrawInput{Network: "testnet", Delegator: hyperliquidDelegator(0).Hex(), Amount: "0.123456789"}, "amount"},
		"hyperliquid amount past uint64": {wfhyperliquid.WithdrawWorkflowType,
			wfhyperliquid.WithdrawInput{Network: "testnet", Delegator: hyperliquidDelegator(0).Hex(), Amount: "184467440737.09551616"}, "amount"},
		"hyperliquid amount not a number": {wfhyperliquid.WithdrawWorkflowType,
			wfhyperliquid.WithdrawInput{Network: "testnet", Delegator: hyperliquidDelegator(0).Hex(), Amount: "0x10"}, "amount"},
		"ton bad hash":          {wfton.WatchWorkflowType, wfton.WatchInput{Network: "testnet", Hash: "not-a-hash"}, "hash"},
		"ton short hash":        {wfton.WatchWorkflowType, wfton.WatchInput{Network: "testnet", Hash: strings.Repeat("ab", 31)}, "hash"},
		"ton negative deadline": {wfton.WatchWorkflowType, wfton.WatchInput{Network: "mainnet", Hash: strings.Repeat("ab", 32), Deadline: -time.Second}, "deadline"},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			id := operationID(t, "bad")
			run, err := st.Client.ExecuteWorkflow(ctx, starter.StartOptions(id, "bad input", queueOf(t, tc.wf)), tc.wf, tc.in)
			require.NoError(t, err)
			err = run.Get(ctx, nil)
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(err, &appErr), "got %v", err)
			require.Equal(t, activities.ErrInvalidInput, appErr.Type())
			require.Contains(t, appErr.Error(), "invalid "+tc.field)
			desc, err := st.Client.DescribeWorkflowExecution(ctx, id, "")
			require.NoError(t, err)
			require.Equal(t, "Failed", desc.GetWorkflowExecutionInfo().GetStatus().String())
		})
	}
	// A stake account that does not exist (a well-formed address with no account behind it).
	id := operationID(t, "bad")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := st.Client.ExecuteWorkflow(ctx, starter.StartOptions(id, "foreign", queueOf(t, wfsolana.UnstakeWorkflow)), wfsolana.UnstakeWorkflow,
		wfsolana.UnstakeInput{Network: "testnet", Staker: staker, StakeAccount: solana.NewWallet().PublicKey().String()})
	require.NoError(t, err)
	err = run.Get(ctx, nil)
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "got %v", err)
	require.Equal(t, activities.ErrStakeAccountState, appErr.Type())
	require.Contains(t, appErr.Error(), "account not found")

	ledgerAfter, err := st.Sandbox.Runtime().Ledger(context.Background())
	require.NoError(t, err)
	require.Equal(t, len(ledgerBefore), len(ledgerAfter), "bad input sent nothing")
	require.Zero(t, st.Sandbox.HyperliquidAccount("testnet", hyperliquidDelegator(0)).Submitted-hyperliquidSubmittedBefore, "nor to Hyperliquid")
}
