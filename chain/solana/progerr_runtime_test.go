//go:build integration

package solchain_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/stake"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
)

// TestDecodeRuntimeRefusals sends failing transactions to a real Solana runtime (the System and
// Stake programs executing) and decodes the error text it answers, with the programs of the
// transaction sent: the names must be the ones the programs raise for these failures.
func TestDecodeRuntimeRefusals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r, err := solanart.Start(ctx, solanart.Options{SlotDuration: 50 * time.Millisecond, SlotsPerEpoch: 32, ManualClock: true, VoteAccounts: 1})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, r.Close()) })
	c := r.RPC()

	staker := solana.NewWallet().PrivateKey
	require.NoError(t, r.Airdrop(ctx, staker.PublicKey(), solana.LAMPORTS_PER_SOL))
	rent, err := c.GetMinimumBalanceForRentExemption(ctx, 200, rpc.CommitmentConfirmed)
	require.NoError(t, err)

	// An initialized stake account holding rent + 0.1 SOL: too little to delegate, and nothing
	// to withdraw beyond what it holds.
	small := solana.NewWallet().PrivateKey
	create := system.NewCreateAccountInstruction(rent+solana.LAMPORTS_PER_SOL/10, 200, solana.StakeProgramID, staker.PublicKey(), small.PublicKey()).Build()
	init := stake.NewInitializeInstruction(staker.PublicKey(), staker.PublicKey(), small.PublicKey()).Build()
	setup := signed(t, ctx, c, []solana.PrivateKey{staker, small}, create, init)
	_, err = c.SendTransaction(ctx, setup)
	require.NoError(t, err)

	// The programs of a landed transaction, read back from the chain once it is finalized.
	require.NoError(t, r.AdvanceSlots(ctx, 64))
	progs, err := solchain.New(r.URL()).InstructionPrograms(ctx, setup.Signatures[0].String())
	require.NoError(t, err)
	assert.Equal(t, []string{solana.SystemProgramID.String(), solana.StakeProgramID.String()}, progs)

	cases := []struct {
		name    string
		signers []solana.PrivateKey
		ixs     func() []solana.Instruction
		program string
		errName string
	}{
		{"transfer of more than the balance", nil, func() []solana.Instruction {
			return []solana.Instruction{system.NewTransferInstruction(2*solana.LAMPORTS_PER_SOL, staker.PublicKey(), solana.NewWallet().PublicKey()).Build()}
		}, "System", "ResultWithNegativeLamports"},
		{"stake account created with more than the balance", []solana.PrivateKey{solana.NewWallet().PrivateKey}, nil, "System", "ResultWithNegativeLamports"},
		{"withdraw of more than the stake account holds", nil, func() []solana.Instruction {
			return []solana.Instruction{stake.NewWithdrawInstruction(rent+solana.LAMPORTS_PER_SOL, small.PublicKey(), staker.PublicKey(), staker.PublicKey()).Build()}
		}, "Stake", "InsufficientFunds"},
		{"delegation below the minimum", []solana.PrivateKey{small}, func() []solana.Instruction {
			return []solana.Instruction{stake.NewDelegateStakeInstruction(r.VoteAccounts()[0], staker.PublicKey(), small.PublicKey()).Build()}
		}, "Stake", "InsufficientDelegation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			signers := append([]solana.PrivateKey{staker}, tc.signers...)
			var ixs []solana.Instruction
			if tc.ixs != nil {
				ixs = tc.ixs()
			} else {
				acct := tc.signers[0].PublicKey()
				ixs = []solana.Instruction{
					system.NewCreateAccountInstruction(5*solana.LAMPORTS_PER_SOL, 200, solana.StakeProgramID, staker.PublicKey(), acct).Build(),
					stake.NewInitializeInstruction(staker.PublicKey(), staker.PublicKey(), acct).Build(),
				}
			}
			tx := signed(t, ctx, c, signers, ixs...)
			_, err := c.SendTransaction(ctx, tx)
			var rpcErr *jsonrpc.RPCError
			require.True(t, errors.As(err, &rpcErr), "not a JSON-RPC error: %v", err)
			raw, err := tx.MarshalBinary()
			require.NoError(t, err)
			progs, err := solchain.TransactionPrograms(solana.Base58(raw).String())
			require.NoError(t, err)

			e, ok := solchain.DecodeTxError(rpcErr.Message, progs)
			require.True(t, ok, "not decoded: %s", rpcErr.Message)
			assert.Equal(t, tc.program, e.Program, rpcErr.Message)
			assert.Equal(t, tc.errName, e.Name, rpcErr.Message)
			t.Logf("%s\n  -> %s", rpcErr.Message, e)
		})
	}
}

func signed(t *testing.T, ctx context.Context, c *rpc.Client, signers []solana.PrivateKey, ixs ...solana.Instruction) *solana.Transaction {
	t.Helper()
	bh, err := c.GetLatestBlockhash(ctx, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	tx, err := solana.NewTransaction(ixs, bh.Value.Blockhash, solana.TransactionPayer(signers[0].PublicKey()))
	require.NoError(t, err)
	_, err = tx.Sign(func(k solana.PublicKey) *solana.PrivateKey {
		for i := range signers {
			if signers[i].PublicKey().Equals(k) {
				return &signers[i]
			}
		}
		return nil
	})
	require.NoError(t, err)
	return tx
}
