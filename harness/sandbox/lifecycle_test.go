//go:build integration

package sandbox

import (
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/apiclient"
)

const solLamports = 1_000_000_000

// stakeAccountOf is the seed-derived account the stake transaction creates.
func stakeAccountOf(t *testing.T, tx *solana.Transaction) solana.PublicKey {
	t.Helper()
	require.NotEmpty(t, tx.Message.Instructions)
	create := tx.Message.Instructions[0]
	require.GreaterOrEqual(t, len(create.Accounts), 2)
	return tx.Message.AccountKeys[create.Accounts[1]]
}

func readStake(t *testing.T, sb *Sandbox, acc solana.PublicKey) (uint64, stakeState) {
	t.Helper()
	info, err := sb.Runtime().RPC().GetAccountInfoWithOpts(testCtx(t), acc, &rpc.GetAccountInfoOpts{Commitment: rpc.CommitmentProcessed})
	require.NoError(t, err)
	st, err := decodeStakeState(info.Value.Data.GetBinary())
	require.NoError(t, err)
	return info.Value.Lamports, st
}

// TestStakeUnstakeWithdrawLifecycle drives a whole Solana stake through the
// API client on the real runtime and checks every balance exactly.
func TestStakeUnstakeWithdrawLifecycle(t *testing.T) {
	for _, form := range []struct{ name, suffix string }{{"api-v1", ""}, {"api-api-v1", "/api"}} {
		t.Run(form.name, func(t *testing.T) {
			ctx := testCtx(t)
			sb := shared
			cl := client(t, sb.URL()+form.suffix, "lifecycle")
			const initial = 10 * solLamports
			const amount = 2 * solLamports
			key := fundedStaker(t, sb, initial)
			staker := key.PublicKey()
			common := func() (string, string, string) { return "solana", "testnet", staker.String() }
			chain, network, addr := common()

			// Stake.
			st, err := cl.Stake(ctx, apiclient.StakeRequest{Chain: chain, Network: network, StakerAddress: addr, Amount: "2000000000"})
			require.NoError(t, err)
			require.NotNil(t, st.Amount)
			assert.EqualValues(t, amount, *st.Amount)
			assert.Equal(t, addr, st.StakerAddress)
			vote := sb.Runtime().VoteAccounts()[0].String()
			assert.Equal(t, apiclient.UnsignedExtraData{Network: network, FeePayer: addr, FromPublicKey: addr,
				StakeAuthority: addr, WithdrawAuthority: addr, VoteAccount: vote}, st.ExtraData)
			tx, signed := signTx(t, st.UnsignedTransactionData, key)
			assert.True(t, tx.Message.AccountKeys[0].Equals(staker), "fee payer is the staker")
			assert.EqualValues(t, 1, tx.Message.Header.NumRequiredSignatures, "only the staker signs")
			stakeAcc := stakeAccountOf(t, tx)
			bc, err := cl.Broadcast(ctx, apiclient.BroadcastRequest{Chain: chain, Network: network, StakerAddress: addr, SignedTransaction: signed})
			require.NoError(t, err)
			assert.Equal(t, tx.Signatures[0].String(), bc.ExtraData.TransactionID)
			assert.Equal(t, []string{addr}, bc.ExtraData.SignerAccounts)
			assert.Equal(t, waitFinalized(t, sb, tx.Signatures[0]), bc.ExtraData.Slot, "the slot reported is the slot it landed in")
			assert.EqualValues(t, initial-amount-lamportsPerSignature, balance(t, sb, staker))
			lamports, state := readStake(t, sb, stakeAcc)
			assert.EqualValues(t, amount, lamports)
			assert.Equal(t, stakeStateStake, state.State)
			assert.Equal(t, vote, state.Voter.String())
			assert.True(t, state.Staker.Equals(staker) && state.Withdrawer.Equals(staker))
			assert.EqualValues(t, uint64(math.MaxUint64), state.DeactivationEpoch)

			// Unstake.
			un, err := cl.Unstake(ctx, apiclient.UnstakeRequest{Chain: chain, Network: network, StakerAddress: addr,
				Extra: apiclient.UnstakeExtra{Amount: "2000000000", StakeAccount: stakeAcc.String()}})
			require.NoError(t, err)
			assert.Nil(t, un.Amount, "unstake results carry no amount")
			assert.Equal(t, apiclient.UnsignedExtraData{Network: network, FeePayer: addr, StakeAuthority: addr}, un.ExtraData)
			utx, usigned := signTx(t, un.UnsignedTransactionData, key)
			_, err = cl.Broadcast(ctx, apiclient.BroadcastRequest{Chain: chain, Network: network, StakerAddress: addr, SignedTransaction: usigned})
			require.NoError(t, err)
			waitFinalized(t, sb, utx.Signatures[0])
			_, state = readStake(t, sb, stakeAcc)
			assert.NotEqualValues(t, uint64(math.MaxUint64), state.DeactivationEpoch, "stake is deactivating")

			// Withdraw once the deactivation epoch has passed.
			require.NoError(t, sb.Runtime().WarpEpochs(ctx, 1))
			wd, err := cl.Withdraw(ctx, apiclient.WithdrawRequest{Chain: chain, Network: network, StakerAddress: addr,
				Extra: apiclient.WithdrawExtra{Amount: "2000000000"}})
			require.NoError(t, err)
			require.NotNil(t, wd.Amount)
			assert.EqualValues(t, amount, *wd.Amount)
			assert.Equal(t, network, wd.ExtraData.Network)
			assert.Equal(t, addr, wd.ExtraData.FeePayer)
			assert.Equal(t, addr, wd.ExtraData.WithdrawAuthority)
			assert.Equal(t, addr, wd.ExtraData.Recipient)
			wtx, wsigned := signTx(t, wd.UnsignedTransactionData, key)
			_, err = cl.Broadcast(ctx, apiclient.BroadcastRequest{Chain: chain, Network: network, StakerAddress: addr, SignedTransaction: wsigned})
			require.NoError(t, err)
			waitFinalized(t, sb, wtx.Signatures[0])
			assert.EqualValues(t, initial-3*lamportsPerSignature, balance(t, sb, staker), "everything but three fees is back")

			// The ledger shows the three landed transactions and the closed account.
			l := ledger(t, sb)
			landed := map[string]bool{}
			for _, lt := range l.Transactions {
				landed[lt.Signature] = true
			}
			for _, sig := range []solana.Signature{tx.Signatures[0], utx.Signatures[0], wtx.Signatures[0]} {
				assert.True(t, landed[sig.String()], "ledger lists %s", sig)
			}
			var found bool
			for _, sa := range l.StakeAccounts {
				if sa.Address == stakeAcc.String() {
					found = true
					assert.False(t, sa.Exists, "a fully withdrawn stake account is gone")
					assert.EqualValues(t, amount, sa.RequestedLamports)
				}
			}
			assert.True(t, found)
			direct, err := sb.Ledger(ctx)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, len(direct.Transactions), len(l.Transactions), "Sandbox.Ledger answers what the control API does")
		})
	}
}

// TestStakeMinimum shows that the smallest amount the API accepts is the
// smallest the stake program delegates: it lands, and one lamport less is
// refused with a ValidationException on amount.
func TestStakeMinimum(t *testing.T) {
	ctx := testCtx(t)
	cl := client(t, shared.URL(), "minimum")
	key := fundedStaker(t, shared, 5*solLamports)
	rent, err := shared.Runtime().RPC().GetMinimumBalanceForRentExemption(ctx, stakeStateSize, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	minimum := rent + defaultMinDelegation
	_, err = cl.Stake(ctx, apiclient.StakeRequest{Chain: "solana", Network: "mainnet-beta", StakerAddress: key.PublicKey().String(), Amount: strconv.FormatUint(minimum-1, 10)})
	require.True(t, apiclient.IsValidation(err), "%v", err)
	var apiErr *apiclient.APIError
	require.True(t, errors.As(err, &apiErr))
	require.Len(t, apiErr.Errors, 1)
	assert.Equal(t, "amount", apiErr.Errors[0].Property)
	assert.Contains(t, apiErr.Errors[0].Constraints["min"], strconv.FormatUint(minimum, 10))

	st := stakeTx(t, cl, key, strconv.FormatUint(minimum, 10))
	tx, signed := signTx(t, st.UnsignedTransactionData, key)
	_, err = cl.Broadcast(ctx, broadcastReq(key, signed))
	require.NoError(t, err)
	lamports, state := readStake(t, shared, stakeAccountOf(t, tx))
	assert.EqualValues(t, minimum, lamports)
	assert.EqualValues(t, defaultMinDelegation, state.Stake)
}
