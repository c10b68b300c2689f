//go:build integration

package solana

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
)

// TestBroadcastRefusalOnRealRuntime: a stake of more SOL than the staker holds, built by the
// sandbox's staking service and refused by a real Solana runtime, fails the broadcast with the
// decoded cause first.
func TestBroadcastRefusalOnRealRuntime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	secret := []byte("activities-solana-decode-secret")
	sb, err := sandbox.Start(ctx, sandbox.Config{TokenSecret: secret,
		Runtime: solanart.Options{SlotDuration: 50 * time.Millisecond, SlotsPerEpoch: 32, FinalizationDepth: 4, VoteAccounts: 1}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sb.Close() })
	token, err := sandbox.MintToken(secret, "activities-solana", time.Hour)
	require.NoError(t, err)
	svc, err := apiclient.New(sb.URL(), apiclient.WithToken(token))
	require.NoError(t, err)

	key := solana.NewWallet().PrivateKey
	require.NoError(t, sb.Runtime().Airdrop(ctx, key.PublicKey(), 2*solana.LAMPORTS_PER_SOL))
	intent := Intent{Operation: OpStake, Chain: "solana", Network: "testnet", Staker: key.PublicKey().String(), Lamports: 3 * solana.LAMPORTS_PER_SOL}
	built, err := svc.Stake(ctx, apiclient.StakeRequest{Chain: "solana", Network: "testnet", StakerAddress: intent.Staker, Amount: strconv.FormatUint(intent.Lamports, 10)})
	require.NoError(t, err)
	tx, err := solana.TransactionFromBase64(built.UnsignedTransactionData)
	require.NoError(t, err)
	_, err = tx.PartialSign(func(pk solana.PublicKey) *solana.PrivateKey {
		if pk.Equals(key.PublicKey()) {
			return &key
		}
		return nil
	})
	require.NoError(t, err)
	raw, err := tx.MarshalBinary()
	require.NoError(t, err)

	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	acts := &Activities{Service: svc}
	env.RegisterActivity(acts)
	_, err = env.ExecuteActivity(acts.Broadcast, BroadcastInput{Intent: intent, Signature: tx.Signatures[0].String(),
		SignedTransaction: base64.StdEncoding.EncodeToString(raw)})
	ae := appErr(t, err)
	assert.Equal(t, activities.ErrTransactionRejected, ae.Type())
	assert.Equal(t, noFunds+"; broadcast "+tx.Signatures[0].String()+" refused", ae.Message())
	var cause *temporal.ApplicationError
	require.True(t, errors.As(errors.Unwrap(ae), &cause), "the service's answer is the cause")
	assert.Contains(t, cause.Error(), "custom program error: 0x1")
	t.Logf("%v", err)
}
