package sandbox

import (
	"encoding/binary"
	"net/http"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/apiclient"
)

// decodedIx is a compiled instruction with its keys resolved.
type decodedIx struct {
	program  solana.PublicKey
	accounts []solana.PublicKey
	data     []byte
}

func (d decodedIx) tag() uint32 { return binary.LittleEndian.Uint32(d.data[:4]) }

func decodeIxs(t *testing.T, unsigned string) (*solana.Transaction, []decodedIx) {
	t.Helper()
	tx, err := solana.TransactionFromBase64(unsigned)
	require.NoError(t, err)
	var out []decodedIx
	for _, ci := range tx.Message.Instructions {
		d := decodedIx{program: tx.Message.AccountKeys[ci.ProgramIDIndex], data: ci.Data}
		for _, a := range ci.Accounts {
			d.accounts = append(d.accounts, tx.Message.AccountKeys[a])
		}
		out = append(out, d)
	}
	return tx, out
}

// find returns the instructions of program with tag.
func find(ixs []decodedIx, program solana.PublicKey, tag uint32) []decodedIx {
	var out []decodedIx
	for _, d := range ixs {
		if d.program.Equals(program) && len(d.data) >= 4 && d.tag() == tag {
			out = append(out, d)
		}
	}
	return out
}

const (
	tagSystemCreateWithSeed = 3
	tagSystemTransfer       = 2
	tagStakeAuthorize       = 1
	tagStakeDelegate        = 2
	tagStakeWithdraw        = 4
	tagStakeDeactivate      = 5
)

// TestHostileModes shows that each hostile mode returns a transaction that
// does not match the request while extraData stays honest.
func TestHostileModes(t *testing.T) {
	ctx := testCtx(t)
	cl := client(t, shared.URL(), "hostile")
	key := fundedStaker(t, shared, 20*solLamports)
	staker := key.PublicKey()
	addr := staker.String()
	const amount = 2 * solLamports

	// Two honest stakes: A gets unstaked and becomes inactive, B stays delegated.
	land := func(unsigned string) *solana.Transaction {
		tx, signed := signTx(t, unsigned, key)
		_, err := cl.Broadcast(ctx, broadcastReq(key, signed))
		require.NoError(t, err)
		return tx
	}
	stA := stakeTx(t, cl, key, "2000000000")
	accA := stakeAccountOf(t, land(stA.UnsignedTransactionData))
	stB := stakeTx(t, cl, key, "2000000000")
	accB := stakeAccountOf(t, land(stB.UnsignedTransactionData))
	un, err := cl.Unstake(ctx, apiclient.UnstakeRequest{Chain: "solana", Network: "testnet", StakerAddress: addr,
		Extra: apiclient.UnstakeExtra{Amount: "2000000000", StakeAccount: accA.String()}})
	require.NoError(t, err)
	land(un.UnsignedTransactionData)
	require.NoError(t, shared.Runtime().WarpEpochs(ctx, 1))

	build := func(t *testing.T) (stake, unstake, withdraw *apiclient.UnsignedTransaction) {
		t.Helper()
		stake = stakeTx(t, cl, key, "2000000000")
		var err error
		unstake, err = cl.Unstake(ctx, apiclient.UnstakeRequest{Chain: "solana", Network: "testnet", StakerAddress: addr,
			Extra: apiclient.UnstakeExtra{Amount: "2000000000", StakeAccount: accB.String()}})
		require.NoError(t, err)
		withdraw, err = cl.Withdraw(ctx, apiclient.WithdrawRequest{Chain: "solana", Network: "testnet", StakerAddress: addr,
			Extra: apiclient.WithdrawExtra{Amount: "2000000000"}})
		require.NoError(t, err)
		return stake, unstake, withdraw
	}
	honestStake, honestUnstake, honestWithdraw := build(t)
	vote := honestStake.ExtraData.VoteAccount

	checks := map[HostileMode]func(t *testing.T, stake, unstake, withdraw string){
		HostileLamportsToStranger: func(t *testing.T, stake, unstake, withdraw string) {
			for _, u := range []string{stake, unstake, withdraw} {
				_, ixs := decodeIxs(t, u)
				tr := find(ixs, solana.SystemProgramID, tagSystemTransfer)
				require.Len(t, tr, 1)
				assert.True(t, tr[0].accounts[0].Equals(staker))
				assert.False(t, tr[0].accounts[1].Equals(staker), "the transfer goes to a stranger")
			}
		},
		HostileOtherVoteAccount: func(t *testing.T, stake, _, _ string) {
			_, ixs := decodeIxs(t, stake)
			d := find(ixs, solana.StakeProgramID, tagStakeDelegate)
			require.Len(t, d, 1)
			assert.NotEqual(t, vote, d[0].accounts[1].String())
		},
		HostileOtherFeePayer: func(t *testing.T, stake, unstake, withdraw string) {
			for _, u := range []string{stake, unstake, withdraw} {
				tx, _ := decodeIxs(t, u)
				assert.False(t, tx.Message.AccountKeys[0].Equals(staker))
			}
		},
		HostileOtherAmount: func(t *testing.T, stake, _, withdraw string) {
			_, ixs := decodeIxs(t, stake)
			c := find(ixs, solana.SystemProgramID, tagSystemCreateWithSeed)
			require.Len(t, c, 1)
			seedLen := binary.LittleEndian.Uint64(c[0].data[36:44])
			assert.NotEqualValues(t, amount, binary.LittleEndian.Uint64(c[0].data[44+seedLen:52+seedLen]))
			_, ixs = decodeIxs(t, withdraw)
			w := find(ixs, solana.StakeProgramID, tagStakeWithdraw)
			require.Len(t, w, 1)
			assert.NotEqualValues(t, amount, binary.LittleEndian.Uint64(w[0].data[4:12]))
		},
		HostileExtraInstruction: func(t *testing.T, stake, unstake, withdraw string) {
			for _, u := range []string{stake, unstake, withdraw} {
				_, ixs := decodeIxs(t, u)
				a := find(ixs, solana.StakeProgramID, tagStakeAuthorize)
				require.Len(t, a, 1)
				assert.False(t, solana.PublicKeyFromBytes(a[0].data[4:36]).Equals(staker), "authority goes to a stranger")
			}
		},
		HostileOtherStakeAccount: func(t *testing.T, _, unstake, withdraw string) {
			_, ixs := decodeIxs(t, unstake)
			d := find(ixs, solana.StakeProgramID, tagStakeDeactivate)
			require.Len(t, d, 1)
			assert.False(t, d[0].accounts[0].Equals(accB))
			_, ixs = decodeIxs(t, withdraw)
			w := find(ixs, solana.StakeProgramID, tagStakeWithdraw)
			require.Len(t, w, 1)
			assert.False(t, w[0].accounts[0].Equals(accA))
		},
		HostileOtherRecipient: func(t *testing.T, _, _, withdraw string) {
			_, ixs := decodeIxs(t, withdraw)
			w := find(ixs, solana.StakeProgramID, tagStakeWithdraw)
			require.Len(t, w, 1)
			assert.False(t, w[0].accounts[1].Equals(staker))
		},
	}
	t.Run("honest", func(t *testing.T) {
		_, ixs := decodeIxs(t, honestStake.UnsignedTransactionData)
		assert.Len(t, ixs, 3)
		_, ixs = decodeIxs(t, honestUnstake.UnsignedTransactionData)
		require.Len(t, ixs, 1)
		assert.True(t, ixs[0].accounts[0].Equals(accB))
		_, ixs = decodeIxs(t, honestWithdraw.UnsignedTransactionData)
		require.Len(t, ixs, 1)
		assert.True(t, ixs[0].accounts[0].Equals(accA))
		assert.True(t, ixs[0].accounts[1].Equals(staker))
	})
	require.Len(t, checks, len(HostileModes))
	for i, mode := range HostileModes {
		t.Run(string(mode), func(t *testing.T) {
			if i%2 == 0 {
				r := do(t, http.MethodPost, shared.URL()+"/sandbox/hostile", "", map[string]any{"mode": mode})
				require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
			} else {
				require.NoError(t, shared.SetHostile(mode))
			}
			t.Cleanup(func() { require.NoError(t, shared.SetHostile(HostileNone)) })
			require.Equal(t, mode, shared.Hostile())
			stake, unstake, withdraw := build(t)
			assert.Equal(t, honestStake.ExtraData, stake.ExtraData, "extraData stays honest")
			assert.Equal(t, honestUnstake.ExtraData, unstake.ExtraData)
			assert.Equal(t, honestWithdraw.ExtraData, withdraw.ExtraData)
			checks[mode](t, stake.UnsignedTransactionData, unstake.UnsignedTransactionData, withdraw.UnsignedTransactionData)
		})
	}
	r := do(t, http.MethodPost, shared.URL()+"/sandbox/hostile", "", map[string]any{"mode": "polite"})
	requireErrorEnvelope(t, r, http.StatusBadRequest, nameValidation, codeValidation, typeClient)
}
