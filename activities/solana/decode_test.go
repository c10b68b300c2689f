package solana

import (
	"errors"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
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
