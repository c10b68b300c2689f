//go:build integration

package sandbox

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/apiclient"
)

// stakeTx builds a stake transaction for key through the client.
func stakeTx(t *testing.T, cl *apiclient.Client, key solana.PrivateKey, amount string) *apiclient.UnsignedTransaction {
	t.Helper()
	st, err := cl.Stake(testCtx(t), apiclient.StakeRequest{Chain: "solana", Network: "testnet", StakerAddress: key.PublicKey().String(), Amount: amount})
	require.NoError(t, err)
	return st
}

func broadcastReq(key solana.PrivateKey, signed string) apiclient.BroadcastRequest {
	return apiclient.BroadcastRequest{Chain: "solana", Network: "testnet", StakerAddress: key.PublicKey().String(), SignedTransaction: signed}
}

// requireRejected checks a TransactionRejectedException with reason.
func requireRejected(t *testing.T, err error, reason string) {
	t.Helper()
	var apiErr *apiclient.APIError
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, 400, apiErr.StatusCode)
	assert.Equal(t, nameTxRejected, apiErr.Name)
	assert.EqualValues(t, codeTxRejected, apiErr.Code)
	assert.Equal(t, typeClient, apiErr.Type)
	assert.True(t, strings.HasPrefix(apiErr.Message, reason+": "), "message %q starts with %s", apiErr.Message, reason)
}

// TestBroadcastRejections covers every rejection reason of endpoint 13.
func TestBroadcastRejections(t *testing.T) {
	ctx := testCtx(t)
	cl := client(t, shared.URL(), "broadcaster")

	t.Run("InvalidTransaction for bytes that are no transaction", func(t *testing.T) {
		key := solana.NewWallet().PrivateKey
		_, err := cl.Broadcast(ctx, broadcastReq(key, "@@not a transaction@@"))
		requireRejected(t, err, "InvalidTransaction")
	})
	t.Run("SignatureFailure for an unsigned transaction", func(t *testing.T) {
		key := fundedStaker(t, shared, 5*solLamports)
		st := stakeTx(t, cl, key, "2000000000")
		_, err := cl.Broadcast(ctx, broadcastReq(key, st.UnsignedTransactionData))
		requireRejected(t, err, "SignatureFailure")
	})
	t.Run("SignatureFailure for a signature by another key", func(t *testing.T) {
		key := fundedStaker(t, shared, 5*solLamports)
		st := stakeTx(t, cl, key, "2000000000")
		tx, err := solana.TransactionFromBase64(st.UnsignedTransactionData)
		require.NoError(t, err)
		other := solana.NewWallet().PrivateKey
		msg, err := tx.Message.MarshalBinary()
		require.NoError(t, err)
		sig, err := other.Sign(msg)
		require.NoError(t, err)
		tx.Signatures[0] = sig
		raw, err := tx.MarshalBinary()
		require.NoError(t, err)
		_, err = cl.Broadcast(ctx, broadcastReq(key, base64.StdEncoding.EncodeToString(raw)))
		requireRejected(t, err, "SignatureFailure")
	})
	t.Run("AlreadyProcessed on a second broadcast, base58 accepted", func(t *testing.T) {
		key := fundedStaker(t, shared, 5*solLamports)
		st := stakeTx(t, cl, key, "2000000000")
		tx, signed := signTx(t, st.UnsignedTransactionData, key)
		res, err := cl.Broadcast(ctx, broadcastReq(key, signed))
		require.NoError(t, err)
		raw, err := tx.MarshalBinary()
		require.NoError(t, err)
		_, err = cl.Broadcast(ctx, broadcastReq(key, base58.Encode(raw)))
		requireRejected(t, err, "AlreadyProcessed")
		counts := map[string]int{}
		for _, b := range ledger(t, shared).Broadcasts {
			counts[b.Signature] = b.Count
		}
		assert.Equal(t, 2, counts[res.ExtraData.TransactionID], "the ledger counts both broadcasts")
	})
	t.Run("BlockhashNotFound once blockhashes expired", func(t *testing.T) {
		key := fundedStaker(t, shared, 5*solLamports)
		st := stakeTx(t, cl, key, "2000000000")
		_, signed := signTx(t, st.UnsignedTransactionData, key)
		require.NoError(t, shared.Runtime().ExpireBlockhashes(ctx))
		_, err := cl.Broadcast(ctx, broadcastReq(key, signed))
		requireRejected(t, err, "BlockhashNotFound")
	})
	t.Run("InstructionError when the staker cannot pay", func(t *testing.T) {
		key := fundedStaker(t, shared, 2*solLamports)
		st := stakeTx(t, cl, key, "3000000000")
		_, signed := signTx(t, st.UnsignedTransactionData, key)
		_, err := cl.Broadcast(ctx, broadcastReq(key, signed))
		requireRejected(t, err, "InstructionError")
	})
}

// TestUnstakeChecksTheStakeAccount covers the on-chain checks of endpoint 11.
func TestUnstakeChecksTheStakeAccount(t *testing.T) {
	ctx := testCtx(t)
	cl := client(t, shared.URL(), "unstaker")
	key := fundedStaker(t, shared, 10*solLamports)
	st := stakeTx(t, cl, key, "2000000000")
	tx, signed := signTx(t, st.UnsignedTransactionData, key)
	_, err := cl.Broadcast(ctx, broadcastReq(key, signed))
	require.NoError(t, err)
	stakeAcc := stakeAccountOf(t, tx).String()
	unstake := func(k solana.PrivateKey, amount, acc string) (*apiclient.UnsignedTransaction, error) {
		return cl.Unstake(ctx, apiclient.UnstakeRequest{Chain: "solana", Network: "testnet", StakerAddress: k.PublicKey().String(),
			Extra: apiclient.UnstakeExtra{Amount: amount, StakeAccount: acc}})
	}
	requireField := func(err error, prop, constraint string) {
		t.Helper()
		var apiErr *apiclient.APIError
		require.True(t, errors.As(err, &apiErr), "%v", err)
		require.Equal(t, nameValidation, apiErr.Name)
		require.Len(t, apiErr.Errors, 1)
		assert.Equal(t, prop, apiErr.Errors[0].Property)
		assert.Contains(t, apiErr.Errors[0].Constraints, constraint)
	}
	_, err = unstake(solana.NewWallet().PrivateKey, "2000000000", stakeAcc)
	requireField(err, "extra.stakeAccount", "stakeAuthority")
	_, err = unstake(key, "1000000000", stakeAcc)
	requireField(err, "extra.amount", "equals")
	_, err = unstake(key, "2000000000", key.PublicKey().String())
	requireField(err, "extra.stakeAccount", "isStakeAccount")

	un, err := unstake(key, "2000000000", stakeAcc)
	require.NoError(t, err)
	_, usigned := signTx(t, un.UnsignedTransactionData, key)
	_, err = cl.Broadcast(ctx, broadcastReq(key, usigned))
	require.NoError(t, err)
	_, err = unstake(key, "2000000000", stakeAcc)
	requireField(err, "extra.stakeAccount", "notDeactivating")
}
