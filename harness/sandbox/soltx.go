package sandbox

import (
	"encoding/binary"
	"fmt"

	"github.com/gagliardetto/solana-go"
	computebudget "github.com/gagliardetto/solana-go/programs/compute-budget"
	"github.com/gagliardetto/solana-go/programs/stake"
	"github.com/gagliardetto/solana-go/programs/system"
)

// stakeStateSize is the size in bytes of a stake account (StakeStateV2).
const stakeStateSize = 200

// stakeAuthorizeStaker is the StakeAuthorize value of the staker role.
const stakeAuthorizeStaker uint32 = 0

// instructionBuildError names the instruction that could not be built.
func instructionBuildError(name string, err error) error {
	return fmt.Errorf("sandbox: build %s instruction: %w", name, err)
}

// generic copies the program, accounts and data of ix into a
// GenericInstruction, replacing the accounts with metas when non-nil.
func generic(name string, ix solana.Instruction, metas solana.AccountMetaSlice) (solana.Instruction, error) {
	data, err := ix.Data()
	if err != nil {
		return nil, instructionBuildError(name, err)
	}
	if metas == nil {
		metas = ix.Accounts()
	}
	return solana.NewInstruction(ix.ProgramID(), metas, data), nil
}

// createStakeAccountIx creates the seed-derived stake account stakeAcc
// (base = staker, funded by the staker) holding lamports.
func createStakeAccountIx(staker, stakeAcc solana.PublicKey, seed string, lamports uint64) (solana.Instruction, error) {
	ix, err := system.NewCreateAccountWithSeedInstruction(
		staker, seed, lamports, stakeStateSize, solana.StakeProgramID,
		staker, stakeAcc, staker,
	).ValidateAndBuild()
	if err != nil {
		return nil, instructionBuildError("CreateAccountWithSeed", err)
	}
	return generic("CreateAccountWithSeed", ix, nil)
}

// stakeLockup is the lockup of a stake account; the zero value is none
// (custodian the all-zero key, the system program's address).
type stakeLockup struct {
	UnixTimestamp int64
	Epoch         uint64
	Custodian     solana.PublicKey
}

// initializeIx initialises stakeAcc with staker and withdrawer authorities
// and lockup. The stake account is writable, not a signer: a seed-derived
// account has no key to sign with.
func initializeIx(stakeAcc, staker, withdrawer solana.PublicKey, lockup stakeLockup) (solana.Instruction, error) {
	b := stake.NewInitializeInstruction(staker, withdrawer, stakeAcc).
		SetLockupTimestamp(lockup.UnixTimestamp).SetLockupEpoch(lockup.Epoch).SetCustodian(lockup.Custodian)
	if err := b.Validate(); err != nil {
		return nil, instructionBuildError("stake Initialize", err)
	}
	ix := b.Build()
	return generic("stake Initialize", ix, solana.AccountMetaSlice{
		solana.Meta(stakeAcc).WRITE(),
		solana.Meta(solana.SysVarRentPubkey),
	})
}

// delegateIx delegates stakeAcc to vote. Only the stake authority signs;
// the stake account is writable, not a signer.
func delegateIx(stakeAcc, vote, authority solana.PublicKey) (solana.Instruction, error) {
	b := stake.NewDelegateStakeInstruction(vote, authority, stakeAcc)
	if err := b.Validate(); err != nil {
		return nil, instructionBuildError("stake DelegateStake", err)
	}
	ix := b.Build()
	return generic("stake DelegateStake", ix, solana.AccountMetaSlice{
		solana.Meta(stakeAcc).WRITE(),
		solana.Meta(vote),
		solana.Meta(solana.SysVarClockPubkey),
		solana.Meta(solana.SysVarStakeHistoryPubkey),
		solana.Meta(solana.SysVarStakeConfigPubkey),
		solana.Meta(authority).SIGNER(),
	})
}

// deactivateIx deactivates stakeAcc, signed by its stake authority.
func deactivateIx(stakeAcc, authority solana.PublicKey) (solana.Instruction, error) {
	b := stake.NewDeactivateInstruction(stakeAcc, authority)
	if err := b.Validate(); err != nil {
		return nil, instructionBuildError("stake Deactivate", err)
	}
	ix := b.Build()
	return generic("stake Deactivate", ix, solana.AccountMetaSlice{
		solana.Meta(stakeAcc).WRITE(),
		solana.Meta(solana.SysVarClockPubkey),
		solana.Meta(authority).SIGNER(),
	})
}

// withdrawIx withdraws lamports from stakeAcc to recipient, signed by the
// withdraw authority.
func withdrawIx(stakeAcc, recipient, authority solana.PublicKey, lamports uint64) (solana.Instruction, error) {
	b := stake.NewWithdrawInstruction(lamports, stakeAcc, recipient, authority)
	if err := b.Validate(); err != nil {
		return nil, instructionBuildError("stake Withdraw", err)
	}
	ix := b.Build()
	return generic("stake Withdraw", ix, solana.AccountMetaSlice{
		solana.Meta(stakeAcc).WRITE(),
		solana.Meta(recipient).WRITE(),
		solana.Meta(solana.SysVarClockPubkey),
		solana.Meta(solana.SysVarStakeHistoryPubkey),
		solana.Meta(authority).SIGNER(),
	})
}

// authorizeIx hands the role of stakeAcc (0 staker, 1 withdrawer) to
// newAuthority, signed by the current authority.
func authorizeIx(stakeAcc, authority, newAuthority solana.PublicKey, role uint32) solana.Instruction {
	data := make([]byte, 4+32+4)
	binary.LittleEndian.PutUint32(data[0:4], stake.Instruction_Authorize)
	copy(data[4:36], newAuthority[:])
	binary.LittleEndian.PutUint32(data[36:40], role)
	return solana.NewInstruction(solana.StakeProgramID, solana.AccountMetaSlice{
		solana.Meta(stakeAcc).WRITE(),
		solana.Meta(solana.SysVarClockPubkey),
		solana.Meta(authority).SIGNER(),
	}, data)
}

// transferIx moves lamports from one system account to another.
func transferIx(from, to solana.PublicKey, lamports uint64) (solana.Instruction, error) {
	ix, err := system.NewTransferInstruction(lamports, from, to).ValidateAndBuild()
	if err != nil {
		return nil, instructionBuildError("System Transfer", err)
	}
	return generic("System Transfer", ix, nil)
}

// computeUnitLimitIx sets the transaction's compute-unit limit.
func computeUnitLimitIx(units uint32) (solana.Instruction, error) {
	ix, err := computebudget.NewSetComputeUnitLimitInstruction(units).ValidateAndBuild()
	if err != nil {
		return nil, instructionBuildError("ComputeBudget SetComputeUnitLimit", err)
	}
	return generic("ComputeBudget SetComputeUnitLimit", ix, nil)
}

// computeUnitPriceIx sets the transaction's compute-unit price in
// micro-lamports.
func computeUnitPriceIx(microLamports uint64) (solana.Instruction, error) {
	ix, err := computebudget.NewSetComputeUnitPriceInstruction(microLamports).ValidateAndBuild()
	if err != nil {
		return nil, instructionBuildError("ComputeBudget SetComputeUnitPrice", err)
	}
	return generic("ComputeBudget SetComputeUnitPrice", ix, nil)
}

// getMinimumDelegationIx asks the stake program for its minimum delegation
// (answered through the transaction's return data).
func getMinimumDelegationIx() solana.Instruction {
	data := make([]byte, 4)
	binary.LittleEndian.PutUint32(data, 13)
	return solana.NewInstruction(solana.StakeProgramID, solana.AccountMetaSlice{}, data)
}

// unsignedTx assembles a legacy transaction paid by feePayer with one
// zeroed signature slot per required signer, and returns its wire bytes.
func unsignedTx(feePayer solana.PublicKey, blockhash solana.Hash, ixs ...solana.Instruction) (*solana.Transaction, []byte, error) {
	tx, err := solana.NewTransaction(ixs, blockhash, solana.TransactionPayer(feePayer))
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: assemble transaction: %w", err)
	}
	tx.Signatures = make([]solana.Signature, tx.Message.Header.NumRequiredSignatures)
	raw, err := tx.MarshalBinary()
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: encode transaction: %w", err)
	}
	return tx, raw, nil
}

// demoteToReadonly moves key, a writable account that does not sign, into
// the read-only accounts of msg's header and renumbers the instructions'
// account indexes to match.
func demoteToReadonly(msg *solana.Message, key solana.PublicKey) error {
	h := msg.Header
	n := len(msg.AccountKeys)
	from := -1
	for i, k := range msg.AccountKeys {
		if k.Equals(key) {
			from = i
		}
	}
	firstReadonly := n - int(h.NumReadonlyUnsignedAccounts)
	if from < int(h.NumRequiredSignatures) || from >= firstReadonly {
		return fmt.Errorf("sandbox: %s is not a writable unsigned account of the message", key)
	}
	// Move the key to the end of the writable unsigned accounts, which then
	// become the first of the read-only ones.
	to := firstReadonly - 1
	keys := make(solana.PublicKeySlice, 0, n)
	keys = append(keys, msg.AccountKeys[:from]...)
	keys = append(keys, msg.AccountKeys[from+1:to+1]...)
	keys = append(keys, key)
	keys = append(keys, msg.AccountKeys[to+1:]...)
	renumber := func(i uint16) uint16 {
		switch {
		case int(i) == from:
			return uint16(to)
		case int(i) > from && int(i) <= to:
			return i - 1
		}
		return i
	}
	for j := range msg.Instructions {
		ci := &msg.Instructions[j]
		ci.ProgramIDIndex = renumber(ci.ProgramIDIndex)
		for a := range ci.Accounts {
			ci.Accounts[a] = renumber(ci.Accounts[a])
		}
	}
	msg.AccountKeys = keys
	msg.Header.NumReadonlyUnsignedAccounts++
	return nil
}
