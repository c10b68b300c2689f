package solchain

import (
	"strconv"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	systemID = "11111111111111111111111111111111"
	stakeID  = "Stake11111111111111111111111111111111111111"
)

// The expected names come from the programs' own sources, not from the decoder's tables:
// SystemError in solana-program/system interface/src/error.rs and StakeError in
// solana-program/stake interface/src/error.rs, each an enum numbered from 0 in declaration order.
var (
	systemErrorNames = []string{
		"AccountAlreadyInUse", "ResultWithNegativeLamports", "InvalidProgramId", "InvalidAccountDataLength",
		"MaxSeedLengthExceeded", "AddressWithSeedMismatch", "NonceNoRecentBlockhashes",
		"NonceBlockhashNotExpired", "NonceUnexpectedBlockhashValue",
	}
	stakeErrorNames = []string{
		"NoCreditsToRedeem", "LockupInForce", "AlreadyDeactivated", "TooSoonToRedelegate", "InsufficientStake",
		"MergeTransientStake", "MergeMismatch", "CustodianMissing", "CustodianSignatureMissing",
		"InsufficientReferenceVotes", "VoteAddressMismatch", "MinimumDelinquentEpochsForDeactivationNotMet",
		"InsufficientDelegation", "RedelegateTransientOrInactiveStake", "RedelegateToSameVoteAccount",
		"RedelegatedStakeMustFullyActivateBeforeDeactivationIsPermitted", "EpochRewardsActive",
	}
)

// TestDecodeEveryProgramCode: every code of the System and Stake programs, in the text the runtime
// writes ("custom program error: 0x%x", InstructionError's Display) and in the JSON of a landed
// transaction's meta.err, decodes to the name the program's source gives it.
func TestDecodeEveryProgramCode(t *testing.T) {
	for _, p := range []struct {
		id, program string
		names       []string
	}{{systemID, "System", systemErrorNames}, {stakeID, "Stake", stakeErrorNames}} {
		for code, name := range p.names {
			progs := []string{solana.ComputeBudget.String(), p.id}
			for _, form := range []string{
				"Transaction simulation failed: Error processing Instruction 1: custom program error: 0x" + strconv.FormatInt(int64(code), 16),
				`{"InstructionError":[1,{"Custom":` + strconv.Itoa(code) + `}]}`,
			} {
				e, ok := DecodeTxError(form, progs)
				require.True(t, ok, form)
				assert.Equal(t, name, e.Name, form)
				assert.Equal(t, p.program, e.Program, form)
				assert.Equal(t, 1, e.Instruction, form)
				assert.True(t, e.Custom, form)
				assert.Equal(t, uint32(code), e.Code, form)
				assert.NotEmpty(t, e.Cause, form)
			}
		}
	}
}

// TestDecodeTxError: code -> name -> one-line message, for the texts an operator meets.
func TestDecodeTxError(t *testing.T) {
	transfer := []string{systemID}
	stake := []string{systemID, stakeID, stakeID}
	cases := []struct {
		name     string
		in       string
		programs []string
		want     string
	}{
		{"service refusal of a stake larger than the balance",
			"apiclient: POST /api/v1/solana/broadcast: status 400: TransactionRejectedException (code 100400): InstructionError: " +
				"Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1 [requestId 1f2e]",
			stake,
			"insufficient funds: the staker's balance does not cover the amount plus fees (System program error 1, ResultWithNegativeLamports)"},
		{"landed transfer without the funds", `{"InstructionError":[0,{"Custom":1}]}`, transfer,
			"insufficient funds: the staker's balance does not cover the amount plus fees (System program error 1, ResultWithNegativeLamports)"},
		{"stake below the minimum delegation", "Error processing Instruction 2: custom program error: 0xc", stake,
			"delegation too small: the amount is less than the stake program's minimum delegation (Stake program error 12, InsufficientDelegation)"},
		{"stake during the epoch rewards period", `{"InstructionError":[1,{"Custom":16}]}`, stake,
			"epoch rewards being paid: stake operations wait until the rewards period of the epoch ends (Stake program error 16, EpochRewardsActive)"},
		{"withdraw of active stake", "Transaction simulation failed: Error processing Instruction 0: insufficient funds for instruction",
			[]string{stakeID},
			"insufficient funds: the stake account cannot release that many lamports (its stake is still active or deactivating, " +
				"or the amount would dip into its rent-exempt reserve) (Stake program, InsufficientFunds)"},
		{"landed withdraw of active stake", `{"InstructionError":[0,"InsufficientFunds"]}`, []string{stakeID},
			"insufficient funds: the stake account cannot release that many lamports (its stake is still active or deactivating, " +
				"or the amount would dip into its rent-exempt reserve) (Stake program, InsufficientFunds)"},
		{"built-in error, program not known", "Error processing Instruction 3: missing required signature for instruction", nil,
			"missing signature: an account the instruction needs to sign did not (instruction 3, MissingRequiredSignature)"},
		{"built-in error with data", `{"InstructionError":[0,{"BorshIoError":"Unknown"}]}`, []string{stakeID},
			"Failed to serialize or deserialize account data (Stake program, BorshIoError)"},
		{"custom code, program not known", "Error processing Instruction 0: custom program error: 0x1", nil,
			"instruction 0 failed (custom program error 1, program not known)"},
		{"custom code, program not in the tables", `{"InstructionError":[0,{"Custom":6001}]}`, []string{"Vote111111111111111111111111111111111111111"},
			"instruction 0 failed (Vote program error 6001)"},
		{"custom code beyond the table", "Error processing Instruction 0: custom program error: 0x11", []string{stakeID},
			"instruction 0 failed (Stake program error 17)"},
		{"fee payer without an account", "Transaction simulation failed: Attempt to debit an account but found no record of a prior credit.", nil,
			"insufficient funds: the fee payer's account does not exist (it never received SOL) (AccountNotFound)"},
		{"fee payer without the fee", `"InsufficientFundsForFee"`, nil,
			"insufficient funds: the fee payer cannot pay the transaction fee (InsufficientFundsForFee)"},
		{"rent", "Transaction simulation failed: Transaction results in an account (1) with insufficient funds for rent", nil,
			"insufficient funds for rent: the transaction would leave account 1 below its rent-exempt minimum (InsufficientFundsForRent)"},
		{"landed rent", `{"InsufficientFundsForRent":{"account_index":2}}`, nil,
			"insufficient funds for rent: the transaction would leave account 2 below its rent-exempt minimum (InsufficientFundsForRent)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := DecodeTxError(tc.in, tc.programs)
			require.True(t, ok)
			assert.Equal(t, tc.want, e.String())
		})
	}
}

// TestDecodeTxErrorUnknown: text with no error the decoder knows is not decoded.
func TestDecodeTxErrorUnknown(t *testing.T) {
	for _, in := range []string{
		"", "status 500: internal error", "Error processing Instruction 0: something new",
		`{"InstructionError":[0,"SomethingNew"]}`, `{"InstructionError":[-1,{"Custom":1}]}`, `"SomethingNew"`, `{"Other":1}`,
	} {
		_, ok := DecodeTxError(in, nil)
		assert.False(t, ok, in)
	}
}

// TestTransactionPrograms: the program of each instruction of a transaction built with
// solana-go, in base64 and base58.
func TestTransactionPrograms(t *testing.T) {
	payer := solana.NewWallet().PublicKey()
	to := solana.NewWallet().PublicKey()
	ix := system.NewTransferInstruction(1, payer, to).Build()
	memo := solana.NewInstruction(solana.MemoProgramID, solana.AccountMetaSlice{}, []byte("x"))
	tx, err := solana.NewTransaction([]solana.Instruction{memo, ix}, solana.Hash{1}, solana.TransactionPayer(payer))
	require.NoError(t, err)
	tx.Signatures = make([]solana.Signature, tx.Message.Header.NumRequiredSignatures)
	raw, err := tx.MarshalBinary()
	require.NoError(t, err)
	want := []string{solana.MemoProgramID.String(), systemID}
	for _, enc := range []string{tx.MustToBase64(), solana.Base58(raw).String()} {
		got, err := TransactionPrograms(enc)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err = TransactionPrograms("not a transaction")
	assert.Error(t, err)
}
