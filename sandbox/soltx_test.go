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
		toGolden(t, "stake Initialize", must(initializeIx(stakeAcc, staker, staker))),
		toGolden(t, "stake DelegateStake", must(delegateIx(stakeAcc, vote, staker))),
		toGolden(t, "stake Deactivate", must(deactivateIx(stakeAcc, staker))),
		toGolden(t, "stake Withdraw", must(withdrawIx(stakeAcc, staker, staker, 2_000_000_000))),
		toGolden(t, "stake Authorize", authorizeIx(stakeAcc, staker, other, stakeAuthorizeStaker)),
		toGolden(t, "System Transfer", must(transferIx(staker, other, hostileExtraLamports))),
		toGolden(t, "stake GetMinimumDelegation", getMinimumDelegationIx()),
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
