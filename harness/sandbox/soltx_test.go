package sandbox

import (
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenMeta is an account meta in a golden file.
type goldenMeta struct {
	Pubkey   string `json:"pubkey"`
	Signer   bool   `json:"signer"`
	Writable bool   `json:"writable"`
}

// goldenInstruction is an instruction in a golden file.
type goldenInstruction struct {
	Name     string       `json:"name"`
	Program  string       `json:"program"`
	Accounts []goldenMeta `json:"accounts"`
	Data     string       `json:"data"`
}

func toGolden(t *testing.T, name string, ix solana.Instruction) goldenInstruction {
	t.Helper()
	data, err := ix.Data()
	require.NoError(t, err)
	g := goldenInstruction{Name: name, Program: ix.ProgramID().String(), Data: hex.EncodeToString(data)}
	for _, m := range ix.Accounts() {
		g.Accounts = append(g.Accounts, goldenMeta{Pubkey: m.PublicKey.String(), Signer: m.IsSigner, Writable: m.IsWritable})
	}
	return g
}

// TestInstructionGolden pins the bytes and account metas of every
// instruction the sandbox builds; the stake account of a seed-derived stake
// is never a signer.
func TestInstructionGolden(t *testing.T) {
	staker := solana.MustPublicKeyFromBase58("7xLk17EQQ5KLDLDe44wCmupJKJjTGd8hs3eSVVhCx932")
	vote := solana.MustPublicKeyFromBase58("Vote111111111111111111111111111111111111112")
	other := solana.MustPublicKeyFromBase58("9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM")
	const seed = "sandbox-0011223344556677"
	stakeAcc, err := solana.CreateWithSeed(staker, seed, solana.StakeProgramID)
	require.NoError(t, err)

	must := func(ix solana.Instruction, err error) solana.Instruction {
		require.NoError(t, err)
		return ix
	}
	got := []goldenInstruction{
		toGolden(t, "CreateAccountWithSeed", must(createStakeAccountIx(staker, stakeAcc, seed, 2_000_000_000))),
		toGolden(t, "stake Initialize", must(initializeIx(stakeAcc, staker, staker, stakeLockup{}))),
		toGolden(t, "stake DelegateStake", must(delegateIx(stakeAcc, vote, staker))),
		toGolden(t, "stake Deactivate", must(deactivateIx(stakeAcc, staker))),
		toGolden(t, "stake Withdraw", must(withdrawIx(stakeAcc, staker, staker, 2_000_000_000))),
		toGolden(t, "stake Authorize", authorizeIx(stakeAcc, staker, other, stakeAuthorizeStaker)),
		toGolden(t, "System Transfer", must(transferIx(staker, other, hostileExtraLamports))),
		toGolden(t, "stake GetMinimumDelegation", getMinimumDelegationIx()),
		toGolden(t, "stake Initialize with lockup", must(initializeIx(stakeAcc, staker, staker,
			stakeLockup{UnixTimestamp: hostileLockupUnix, Epoch: hostileLockupEpoch, Custodian: staker}))),
		toGolden(t, "ComputeBudget SetComputeUnitLimit", must(computeUnitLimitIx(hostileComputeUnitLimit))),
		toGolden(t, "ComputeBudget SetComputeUnitPrice", must(computeUnitPriceIx(hostileComputeUnitPrice))),
	}
	for _, g := range got {
		for _, m := range g.Accounts {
			if m.Pubkey == stakeAcc.String() {
				assert.False(t, m.Signer, "%s: the seed-derived stake account must not be a signer", g.Name)
			}
		}
	}
	path := filepath.Join("testdata", "instructions.golden.json")
	b, err := json.MarshalIndent(got, "", "  ")
	require.NoError(t, err)
	b = append(b, '\n')
	if *update {
		require.NoError(t, os.WriteFile(path, b, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./sandbox -run TestInstructionGolden -update to create the golden file")
	assert.Equal(t, string(want), string(b))
}

// TestUnsignedTxHasEmptySignatureSlot checks the wire form of an unsigned
// transaction: one zeroed signature per required signer.
func TestUnsignedTxHasEmptySignatureSlot(t *testing.T) {
	staker := solana.MustPublicKeyFromBase58("7xLk17EQQ5KLDLDe44wCmupJKJjTGd8hs3eSVVhCx932")
	stakeAcc, err := solana.CreateWithSeed(staker, "s", solana.StakeProgramID)
	require.NoError(t, err)
	ix, err := deactivateIx(stakeAcc, staker)
	require.NoError(t, err)
	tx, raw, err := unsignedTx(staker, solana.Hash{1}, ix)
	require.NoError(t, err)
	require.EqualValues(t, 1, tx.Message.Header.NumRequiredSignatures)
	require.Equal(t, byte(1), raw[0], "compact-u16 signature count")
	assert.Equal(t, make([]byte, 64), raw[1:65], "the signature slot is zeroed")
	back, err := solana.TransactionFromBytes(raw)
	require.NoError(t, err)
	assert.True(t, back.Message.AccountKeys[0].Equals(staker))
}

// TestDemoteToReadonly: the account moves into the read-only accounts of the
// header while every instruction still names the same keys; signers,
// read-only and absent accounts are refused.
func TestDemoteToReadonly(t *testing.T) {
	staker := solana.MustPublicKeyFromBase58("7xLk17EQQ5KLDLDe44wCmupJKJjTGd8hs3eSVVhCx932")
	vote := solana.MustPublicKeyFromBase58("Vote111111111111111111111111111111111111112")
	const seed = "sandbox-0011223344556677"
	stakeAcc, err := solana.CreateWithSeed(staker, seed, solana.StakeProgramID)
	require.NoError(t, err)
	create, err := createStakeAccountIx(staker, stakeAcc, seed, 2_000_000_000)
	require.NoError(t, err)
	initialize, err := initializeIx(stakeAcc, staker, staker, stakeLockup{})
	require.NoError(t, err)
	delegate, err := delegateIx(stakeAcc, vote, staker)
	require.NoError(t, err)
	resolved := func(m solana.Message) [][]solana.PublicKey {
		var out [][]solana.PublicKey
		for _, ci := range m.Instructions {
			keys := []solana.PublicKey{m.AccountKeys[ci.ProgramIDIndex]}
			for _, a := range ci.Accounts {
				keys = append(keys, m.AccountKeys[a])
			}
			out = append(out, keys)
		}
		return out
	}
	// A second writable account after the stake account: the accounts between
	// its place and its new one move up.
	other := solana.MustPublicKeyFromBase58("9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM")
	pay, err := transferIx(staker, other, 1)
	require.NoError(t, err)
	tx, _, err := unsignedTx(staker, solana.Hash{1}, create, initialize, delegate, pay)
	require.NoError(t, err)
	idx := func(k solana.PublicKey) int {
		for i, a := range tx.Message.AccountKeys {
			if a.Equals(k) {
				return i
			}
		}
		t.Fatalf("%s is not in the message", k)
		return -1
	}
	require.Less(t, idx(stakeAcc), idx(other), "the stake account is not the last writable one")
	before := resolved(tx.Message)
	header := tx.Message.Header
	writable, err := tx.Message.IsWritable(stakeAcc)
	require.NoError(t, err)
	require.True(t, writable)

	require.NoError(t, demoteToReadonly(&tx.Message, stakeAcc))
	writable, err = tx.Message.IsWritable(stakeAcc)
	require.NoError(t, err)
	assert.False(t, writable)
	assert.Equal(t, before, resolved(tx.Message), "the instructions name the same keys")
	assert.Equal(t, header.NumReadonlyUnsignedAccounts+1, tx.Message.Header.NumReadonlyUnsignedAccounts)
	assert.Equal(t, header.NumRequiredSignatures, tx.Message.Header.NumRequiredSignatures)
	for _, k := range tx.Message.AccountKeys {
		if k.Equals(stakeAcc) {
			continue
		}
		w, err := tx.Message.IsWritable(k)
		require.NoError(t, err)
		assert.Equal(t, k.Equals(staker) || k.Equals(other), w, "%s keeps its access", k)
	}
	raw, err := tx.MarshalBinary()
	require.NoError(t, err)
	back, err := solana.TransactionFromBytes(raw)
	require.NoError(t, err)
	assert.Equal(t, before, resolved(back.Message), "the wire form holds it")

	for _, k := range []solana.PublicKey{staker, solana.SysVarRentPubkey, stakeAcc, vote, solana.NewWallet().PublicKey()} {
		assert.Error(t, demoteToReadonly(&tx.Message, k), "%s", k)
	}
}
