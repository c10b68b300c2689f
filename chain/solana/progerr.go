package solchain

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/gagliardetto/solana-go"
)

// TxError is a Solana transaction error decoded to names: which instruction failed, in which
// program, with which error, and what that means in one line.
type TxError struct {
	// Instruction is the index of the failing instruction; -1 for an error of the whole
	// transaction (such as a fee payer that cannot pay the fee).
	Instruction int
	// ProgramID is the address of the program instruction Instruction calls; empty when the
	// transaction was not known to the decoder.
	ProgramID string
	// Program names that program ("System", "Stake", ...); empty when unknown.
	Program string
	// Custom is true for a program's own error code, Code.
	Custom bool
	// Code is the program's error code when Custom.
	Code uint32
	// Name is the error's variant name: the program's error enum for a custom code
	// (ResultWithNegativeLamports), the runtime's InstructionError or TransactionError otherwise
	// (InsufficientFunds, InsufficientFundsForFee); empty for a code the program's table lacks.
	Name string
	// Cause says what went wrong, in a few words, cause first.
	Cause string
}

// String is the error in one line, cause first, naming the program and the error, such as
// "insufficient funds: the staker's balance does not cover the amount plus fees (System program
// error 1, ResultWithNegativeLamports)".
func (e *TxError) String() string {
	var where string
	switch {
	case e.Custom && e.Program != "":
		where = fmt.Sprintf("%s program error %d", e.Program, e.Code)
	case e.Custom:
		where = fmt.Sprintf("custom program error %d, program not known", e.Code)
	case e.Program != "":
		where = e.Program + " program"
	case e.Instruction >= 0:
		where = fmt.Sprintf("instruction %d", e.Instruction)
	}
	switch {
	case where == "" && e.Name == "":
		return e.Cause
	case where == "":
		return fmt.Sprintf("%s (%s)", e.Cause, e.Name)
	case e.Name == "":
		return fmt.Sprintf("%s (%s)", e.Cause, where)
	}
	return fmt.Sprintf("%s (%s, %s)", e.Cause, where, e.Name)
}

// programError is one entry of a program's error table: its variant name and what it means.
type programError struct {
	name, cause string
}

// programTable is the error table of one program.
type programTable struct {
	name   string
	errors []programError
	// builtin overrides the cause of a runtime InstructionError (by name) raised by this program,
	// where the program gives it a more precise meaning.
	builtin map[string]string
}

// insufficientFunds is the cause of the System program's ResultWithNegativeLamports: in
// stakeflow's transactions the System program moves the staker's lamports (creating and funding
// the stake account), and the fee was taken first.
const insufficientFunds = "insufficient funds: the staker's balance does not cover the amount plus fees"

// programTables maps the program ids whose errors are decoded to their tables.
//
// The System table is the SystemError enum, in order from 0, of solana-program/system
// (interface/src/error.rs; previously solana-program's system_instruction.rs); the Stake table is
// the StakeError enum, in order from 0, of solana-program/stake (interface/src/error.rs;
// previously solana-program's stake/instruction.rs). The causes paraphrase those enums' doc
// comments.
var programTables = map[string]programTable{
	solana.SystemProgramID.String(): {name: "System", errors: []programError{
		{"AccountAlreadyInUse", "account already in use: an account already exists at the address to create"},
		{"ResultWithNegativeLamports", insufficientFunds},
		{"InvalidProgramId", "invalid program id: the account cannot be assigned to this program"},
		{"InvalidAccountDataLength", "invalid account data length: the account's data cannot be allocated at this length"},
		{"MaxSeedLengthExceeded", "seed too long: the seed of the derived address exceeds the maximum length"},
		{"AddressWithSeedMismatch", "address mismatch: the address does not match the one derived from the seed"},
		{"NonceNoRecentBlockhashes", "nonce not advanced: the recent blockhashes sysvar is empty"},
		{"NonceBlockhashNotExpired", "nonce not advanced: the stored nonce is still a recent blockhash"},
		{"NonceUnexpectedBlockhashValue", "nonce mismatch: the transaction's nonce does not match the stored nonce"},
	}},
	solana.StakeProgramID.String(): {name: "Stake", errors: []programError{
		{"NoCreditsToRedeem", "no credits to redeem"},
		{"LockupInForce", "lockup in force: the stake account's lockup has not expired"},
		{"AlreadyDeactivated", "already deactivated: the stake is already deactivated"},
		{"TooSoonToRedelegate", "too soon to redelegate: one redelegation is permitted per epoch"},
		{"InsufficientStake", "insufficient stake: the split amount is more than is staked"},
		{"MergeTransientStake", "cannot merge: a stake account with activating or deactivating stake cannot be merged"},
		{"MergeMismatch", "cannot merge: the stake accounts differ in authority, lockup or state"},
		{"CustodianMissing", "custodian missing: the lockup custodian's address is not present"},
		{"CustodianSignatureMissing", "custodian signature missing: the lockup custodian did not sign"},
		{"InsufficientReferenceVotes", "insufficient reference votes: the reference vote account has too little voting activity"},
		{"VoteAddressMismatch", "vote account mismatch: the stake account is not delegated to the given vote account"},
		{"MinimumDelinquentEpochsForDeactivationNotMet", "validator not delinquent long enough: the stake cannot be deactivated for delinquency yet"},
		{"InsufficientDelegation", "delegation too small: the amount is less than the stake program's minimum delegation"},
		{"RedelegateTransientOrInactiveStake", "cannot redelegate: the stake is activating, deactivating or inactive"},
		{"RedelegateToSameVoteAccount", "cannot redelegate: the stake is already delegated to that vote account"},
		{"RedelegatedStakeMustFullyActivateBeforeDeactivationIsPermitted", "cannot deactivate yet: redelegated stake must be fully active first"},
		{"EpochRewardsActive", "epoch rewards being paid: stake operations wait until the rewards period of the epoch ends"},
	}, builtin: map[string]string{
		"InsufficientFunds": "insufficient funds: the stake account cannot release that many lamports " +
			"(its stake is still active or deactivating, or the amount would dip into its rent-exempt reserve)",
		"MissingRequiredSignature": "missing signature: the stake or withdraw authority of the stake account did not sign",
	}},
	solana.VoteProgramID.String(): {name: "Vote"},
	solana.ComputeBudget.String(): {name: "Compute Budget"},
}

// instructionErrors are the runtime's InstructionError variants (other than Custom) with the text
// the runtime writes for each, as InstructionError's Display in anza-xyz/solana-sdk
// (instruction-error/src/lib.rs) renders it. The text is what "Error processing Instruction N:"
// is followed by; it doubles as the cause.
var instructionErrors = []struct{ name, text string }{
	{"GenericError", "generic instruction error"},
	{"InvalidArgument", "invalid program argument"},
	{"InvalidInstructionData", "invalid instruction data"},
	{"InvalidAccountData", "invalid account data for instruction"},
	{"AccountDataTooSmall", "account data too small for instruction"},
	{"InsufficientFunds", "insufficient funds for instruction"},
	{"IncorrectProgramId", "incorrect program id for instruction"},
	{"MissingRequiredSignature", "missing required signature for instruction"},
	{"AccountAlreadyInitialized", "instruction requires an uninitialized account"},
	{"UninitializedAccount", "instruction requires an initialized account"},
	{"UnbalancedInstruction", "sum of account balances before and after instruction do not match"},
	{"ModifiedProgramId", "instruction illegally modified the program id of an account"},
	{"ExternalAccountLamportSpend", "instruction spent from the balance of an account it does not own"},
	{"ExternalAccountDataModified", "instruction modified data of an account it does not own"},
	{"ReadonlyLamportChange", "instruction changed the balance of a read-only account"},
	{"ReadonlyDataModified", "instruction modified data of a read-only account"},
	{"DuplicateAccountIndex", "instruction contains duplicate accounts"},
	{"ExecutableModified", "instruction changed executable bit of an account"},
	{"RentEpochModified", "instruction modified rent epoch of an account"},
	{"NotEnoughAccountKeys", "insufficient account keys for instruction"},
	{"AccountDataSizeChanged", "program other than the account's owner changed the size of the account data"},
	{"AccountNotExecutable", "instruction expected an executable account"},
	{"AccountBorrowFailed", "instruction tries to borrow reference for an account which is already borrowed"},
	{"AccountBorrowOutstanding", "instruction left account with an outstanding borrowed reference"},
	{"DuplicateAccountOutOfSync", "instruction modifications of multiply-passed account differ"},
	{"InvalidError", "program returned invalid error code"},
	{"ExecutableDataModified", "instruction changed executable accounts data"},
	{"ExecutableLamportChange", "instruction changed the balance of an executable account"},
	{"ExecutableAccountNotRentExempt", "executable accounts must be rent exempt"},
	{"UnsupportedProgramId", "Unsupported program id"},
	{"CallDepth", "Cross-program invocation call depth too deep"},
	{"MissingAccount", "An account required by the instruction is missing"},
	{"ReentrancyNotAllowed", "Cross-program invocation reentrancy not allowed for this instruction"},
	{"MaxSeedLengthExceeded", "Length of the seed is too long for address generation"},
	{"InvalidSeeds", "Provided seeds do not result in a valid address"},
	{"InvalidRealloc", "Failed to reallocate account data"},
	{"ComputationalBudgetExceeded", "Computational budget exceeded"},
	{"PrivilegeEscalation", "Cross-program invocation with unauthorized signer or writable account"},
	{"ProgramEnvironmentSetupFailure", "Failed to create program execution environment"},
	{"ProgramFailedToComplete", "Program failed to complete"},
	{"ProgramFailedToCompile", "Program failed to compile"},
	{"Immutable", "Account is immutable"},
	{"IncorrectAuthority", "Incorrect authority provided"},
	{"BorshIoError", "Failed to serialize or deserialize account data"},
	{"AccountNotRentExempt", "An account does not have enough lamports to be rent-exempt"},
	{"InvalidAccountOwner", "Invalid account owner"},
	{"ArithmeticOverflow", "Program arithmetic overflowed"},
	{"UnsupportedSysvar", "Unsupported sysvar"},
	{"IllegalOwner", "Provided owner is not allowed"},
	{"MaxAccountsDataAllocationsExceeded", "Accounts data allocations exceeded the maximum allowed per transaction"},
	{"MaxAccountsExceeded", "Max accounts exceeded"},
	{"MaxInstructionTraceLengthExceeded", "Max instruction trace length exceeded"},
	{"BuiltinProgramsMustConsumeComputeUnits", "Builtin programs must consume compute units"},
}

// builtinCauses gives some InstructionErrors a cause that says more than the runtime's text.
var builtinCauses = map[string]string{
	"InsufficientFunds":        "insufficient funds: an account the instruction debits holds too few lamports",
	"MissingRequiredSignature": "missing signature: an account the instruction needs to sign did not",
	"AccountNotRentExempt":     "below rent exemption: an account would hold fewer lamports than its rent-exempt minimum",
}

// txErrors are the TransactionError variants that concern a staking transaction's sender, with
// the text the runtime writes for each (TransactionError's Display in anza-xyz/solana-sdk,
// transaction-error/src/lib.rs) and their cause. InsufficientFundsForRent's text carries an
// account index and is matched apart.
var txErrors = []struct{ name, text, cause string }{
	{"AccountNotFound", "Attempt to debit an account but found no record of a prior credit",
		"insufficient funds: the fee payer's account does not exist (it never received SOL)"},
	{"InsufficientFundsForFee", "Insufficient funds for fee",
		"insufficient funds: the fee payer cannot pay the transaction fee"},
	{"InvalidAccountForFee", "This account may not be used to pay transaction fees",
		"invalid fee payer: this account may not pay transaction fees"},
	{"InvalidRentPayingAccount", "Transaction leaves an account with a lower balance than rent-exempt minimum",
		"below rent exemption: the transaction would leave an account below its rent-exempt minimum"},
	{"SignatureFailure", "Transaction did not pass signature verification",
		"bad signature: the transaction did not pass signature verification"},
	{"BlockhashNotFound", "Blockhash not found",
		"blockhash not found: the transaction's blockhash is unknown or expired"},
	{"AlreadyProcessed", "This transaction has already been processed",
		"already processed: the chain has already seen this transaction"},
}

var (
	instructionText = regexp.MustCompile(`Error processing Instruction (\d+): (.*)`)
	customText      = regexp.MustCompile(`^custom program error: 0x([0-9a-fA-F]+)`)
	rentText        = regexp.MustCompile(`Transaction results in an account \((\d+)\) with insufficient funds for rent`)
)

// DecodeTxError decodes a transaction error, in either of the forms the RPC gives it: the text of
// a refused send or simulation ("Transaction simulation failed: Error processing Instruction 0:
// custom program error: 0x1", possibly inside a longer message) or the JSON of a landed
// transaction's meta.err ({"InstructionError":[0,{"Custom":1}]}, "InsufficientFundsForFee").
// programs are the program ids of the transaction's instructions, in order (see
// [TransactionPrograms]); nil when the transaction is not known, and then a custom code names no
// error, since its meaning depends on the program. ok is false when s holds no error the decoder
// knows.
func DecodeTxError(s string, programs []string) (e *TxError, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, false
	}
	if s[0] == '{' || s[0] == '"' {
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			return decodeJSON(v, programs)
		}
	}
	return decodeText(s, programs)
}

func decodeText(s string, programs []string) (*TxError, bool) {
	if m := instructionText.FindStringSubmatch(s); m != nil {
		idx, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, false
		}
		if c := customText.FindStringSubmatch(m[2]); c != nil {
			code, err := strconv.ParseUint(c[1], 16, 32)
			if err != nil {
				return nil, false
			}
			return custom(idx, uint32(code), programs), true
		}
		for _, b := range instructionErrors {
			if strings.HasPrefix(m[2], b.text) {
				return builtin(idx, b.name, programs), true
			}
		}
		return nil, false
	}
	if m := rentText.FindStringSubmatch(s); m != nil {
		return rentError(m[1]), true
	}
	for _, t := range txErrors {
		if strings.Contains(s, t.text) {
			return &TxError{Instruction: -1, Name: t.name, Cause: t.cause}, true
		}
	}
	return nil, false
}

// decodeJSON decodes the JSON of a TransactionError as serde writes it: a unit variant is a
// string, any other an object of one key.
func decodeJSON(v any, programs []string) (*TxError, bool) {
	switch v := v.(type) {
	case string:
		for _, t := range txErrors {
			if t.name == v {
				return &TxError{Instruction: -1, Name: t.name, Cause: t.cause}, true
			}
		}
		return nil, false
	case map[string]any:
		if ie, ok := v["InstructionError"].([]any); ok && len(ie) == 2 {
			idx, ok := ie[0].(float64)
			if !ok || idx < 0 || idx != float64(int(idx)) {
				return nil, false
			}
			switch inner := ie[1].(type) {
			case string:
				return builtinByName(int(idx), inner, programs)
			case map[string]any:
				if code, ok := inner["Custom"].(float64); ok && code >= 0 && code <= 1<<32-1 && code == float64(uint32(code)) {
					return custom(int(idx), uint32(code), programs), true
				}
				if len(inner) == 1 {
					// A variant with data, such as BorshIoError(String) of older runtimes.
					var name string
					for k := range inner {
						name = k
					}
					return builtinByName(int(idx), name, programs)
				}
			}
			return nil, false
		}
		if r, ok := v["InsufficientFundsForRent"].(map[string]any); ok {
			if i, ok := r["account_index"].(float64); ok {
				return rentError(strconv.Itoa(int(i))), true
			}
		}
	}
	return nil, false
}

func rentError(account string) *TxError {
	return &TxError{Instruction: -1, Name: "InsufficientFundsForRent",
		Cause: "insufficient funds for rent: the transaction would leave account " + account + " below its rent-exempt minimum"}
}

// programOf names the program instruction idx calls, if known.
func programOf(idx int, programs []string) (id string, t programTable) {
	if idx < 0 || idx >= len(programs) {
		return "", programTable{}
	}
	id = programs[idx]
	return id, programTables[id]
}

func custom(idx int, code uint32, progs []string) *TxError {
	id, t := programOf(idx, progs)
	e := &TxError{Instruction: idx, ProgramID: id, Program: t.name, Custom: true, Code: code}
	if t.name == "" && id != "" {
		e.Program = id
	}
	if int64(code) < int64(len(t.errors)) {
		e.Name, e.Cause = t.errors[code].name, t.errors[code].cause
		return e
	}
	e.Cause = fmt.Sprintf("instruction %d failed", idx)
	return e
}

func builtinByName(idx int, name string, progs []string) (*TxError, bool) {
	for _, b := range instructionErrors {
		if b.name == name {
			return builtin(idx, name, progs), true
		}
	}
	return nil, false
}

func builtin(idx int, name string, progs []string) *TxError {
	id, t := programOf(idx, progs)
	e := &TxError{Instruction: idx, ProgramID: id, Program: t.name, Name: name}
	if t.name == "" && id != "" {
		e.Program = id
	}
	switch {
	case t.builtin[name] != "":
		e.Cause = t.builtin[name]
	case builtinCauses[name] != "":
		e.Cause = builtinCauses[name]
	default:
		for _, b := range instructionErrors {
			if b.name == name {
				e.Cause = b.text
			}
		}
	}
	return e
}

// TransactionPrograms returns the program ids of a serialized transaction's instructions, in
// order. encoded is the transaction in base64 (as the signer and the staking service carry it)
// or base58.
func TransactionPrograms(encoded string) ([]string, error) {
	tx, err := solana.TransactionFromBase64(encoded)
	if err != nil {
		var err58 error
		if tx, err58 = solana.TransactionFromBase58(encoded); err58 != nil {
			return nil, fmt.Errorf("transaction is neither base64 (%v) nor base58 (%v)", err, err58)
		}
	}
	return instructionPrograms(tx)
}

// instructionPrograms resolves the program id of each of tx's instructions. A program is always
// one of the message's static keys (lookup tables cannot hold invoked programs).
func instructionPrograms(tx *solana.Transaction) ([]string, error) {
	out := make([]string, len(tx.Message.Instructions))
	for i, ix := range tx.Message.Instructions {
		k := int(ix.ProgramIDIndex)
		if k >= len(tx.Message.AccountKeys) {
			return nil, fmt.Errorf("instruction %d calls account %d of %d", i, k, len(tx.Message.AccountKeys))
		}
		out[i] = tx.Message.AccountKeys[k].String()
	}
	return out, nil
}
