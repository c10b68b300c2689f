package solana

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/apiclient"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
)

// noFunds is what a System program error 1 reads as: cause first, then the program and the error
// as the System program's source (SystemError, solana-program/system) names code 1.
const noFunds = "insufficient funds: the staker's balance does not cover the amount plus fees (System program error 1, ResultWithNegativeLamports)"

// transferTx is a signed-shaped transaction (signatures zero) whose instruction 0 is a System
// transfer, in base64 as the signer carries it.
func transferTx(t *testing.T) string {
	t.Helper()
	from, to := solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey()
	tx, err := solana.NewTransaction([]solana.Instruction{system.NewTransferInstruction(1, from, to).Build()}, solana.Hash{1}, solana.TransactionPayer(from))
	require.NoError(t, err)
	tx.Signatures = make([]solana.Signature, 1)
	return tx.MustToBase64()
}

// TestBroadcastRefusalReadsCauseFirst: a refusal for a program error reads, in one line, what
// went wrong before where; the service's whole answer stays the error's cause, and the type is
// unchanged. A refusal the decoder does not know reads as before.
func TestBroadcastRefusalReadsCauseFirst(t *testing.T) {
	raw := "InstructionError: Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1"
	tests := []struct {
		name, msg, want string
		decoded         bool
	}{
		{"program error", raw, noFunds + "; broadcast " + sig + " refused", true},
		{"unknown refusal", "InstructionError: something new", "broadcast " + sig + " refused: ", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := service(t, 400, nil, errorEnvelope("TransactionRejectedException", 100400, "client", tt.msg))
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			acts := &Activities{Service: c}
			env.RegisterActivity(acts)
			_, err := env.ExecuteActivity(acts.Broadcast, BroadcastInput{
				Intent: Intent{Chain: "solana", Network: "testnet", Staker: staker}, Signature: sig, SignedTransaction: transferTx(t)})
			ae := appErr(t, err)
			assert.Equal(t, activities.ErrTransactionRejected, ae.Type())
			assert.True(t, ae.NonRetryable())
			if !tt.decoded {
				assert.Contains(t, ae.Message(), tt.want)
				return
			}
			assert.Equal(t, tt.want, ae.Message())
			require.NotNil(t, errors.Unwrap(ae), "the service's answer is the cause")
			assert.Contains(t, errors.Unwrap(ae).Error(), "custom program error: 0x1")
			assert.Contains(t, errors.Unwrap(ae).Error(), "req-1", "the request id stays in the chain")
		})
	}
}

// TestConfirmDecodesOnChainError: a transaction that landed with an error reports it cause first,
// with the program read from the chain, then the error as the RPC gave it.
func TestConfirmDecodesOnChainError(t *testing.T) {
	landed := `{"InstructionError":[0,{"Custom":1}]}`
	failed := &solchain.SignatureStatus{Found: true, Slot: 9, ConfirmationStatus: "finalized", Err: landed}
	tests := []struct {
		name  string
		chain *fakeChain
		want  string
	}{
		{"programs read", &fakeChain{statuses: []*solchain.SignatureStatus{failed}, fee: 5000, programs: []string{solana.SystemProgramID.String()}},
			noFunds + "; on-chain error " + landed},
		{"programs not readable", &fakeChain{statuses: []*solchain.SignatureStatus{failed}, fee: 5000, programsErr: solchain.ErrTransactionNotFound},
			"instruction 0 failed (custom program error 1, program not known); on-chain error " + landed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := confirm(t, tt.chain)
			require.NoError(t, err)
			assert.Equal(t, ConfirmResult{Outcome: activities.OutcomeFailed, Slot: 9, Error: tt.want, Fee: 5000}, res)
		})
	}
}

// TestBroadcastRefusalOnRealRuntime: a stake of more SOL than the staker holds, built by the
// sandbox's staking service and refused by a real Solana runtime, fails the broadcast with the
// decoded cause first.
func TestBroadcastRefusalOnRealRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Solana runtime")
	}
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
