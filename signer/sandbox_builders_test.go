package signer

// The honest transactions of the local staking service (harness/sandbox/), built here the way it builds
// them, so that the verifier is held to accept them unchanged. The builders below are copies of
// the honest paths of harness/sandbox/soltx.go (unexported there, so a test here cannot call them).
// TestSandboxCopyMatchesSandboxGolden holds the copies to the instructions the sandbox pins in
// harness/sandbox/testdata/instructions.golden.json, and TestSandboxGoldenTransactionsVerify verifies
// transactions made of those pinned instructions themselves: a change of the sandbox's honest
// output fails here, whichever side changed.

import (
	"fmt"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/stake"
	"github.com/gagliardetto/solana-go/programs/system"
)

// stakeStateSize is the size in bytes of a stake account (StakeStateV2).
const stakeStateSize = 200

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

// initializeIx initialises stakeAcc with staker and withdrawer authorities
// and no lockup. The stake account is writable, not a signer: a
// seed-derived account has no key to sign with.
func initializeIx(stakeAcc, staker, withdrawer solana.PublicKey) (solana.Instruction, error) {
	b := stake.NewInitializeInstruction(staker, withdrawer, stakeAcc)
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
