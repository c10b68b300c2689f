//go:build integration

package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/gagliardetto/solana-go"
	computebudget "github.com/gagliardetto/solana-go/programs/compute-budget"
	"github.com/gagliardetto/solana-go/programs/stake"
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

// built is what stake, unstake and withdraw answered for one mode.
type built struct {
	stake, unstake, withdraw *apiclient.UnsignedTransaction
}

func (b built) each() []*apiclient.UnsignedTransaction {
	return []*apiclient.UnsignedTransaction{b.stake, b.unstake, b.withdraw}
}

// computeBudgetOf decodes the compute-budget instructions of ixs with
// solana-go: the unit limit and price they set (0 when absent).
func computeBudgetOf(t *testing.T, ixs []decodedIx) (limit uint32, price uint64) {
	t.Helper()
	for _, d := range ixs {
		if !d.program.Equals(solana.ComputeBudget) {
			continue
		}
		inst, err := computebudget.DecodeInstruction(nil, d.data)
		require.NoError(t, err)
		switch v := inst.Impl.(type) {
		case *computebudget.SetComputeUnitLimit:
			limit = v.Units
		case *computebudget.SetComputeUnitPrice:
			price = v.MicroLamports
		}
	}
	return limit, price
}

// validatorStatuses asks endpoint 7 about votes and decodes the answer.
func validatorStatuses(t *testing.T, cl *apiclient.Client, votes ...string) map[string]string {
	t.Helper()
	vs, err := cl.SolanaValidatorStatus(testCtx(t), "testnet", votes)
	require.NoError(t, err)
	var text string
	require.NoError(t, json.Unmarshal(vs.Statuses, &text))
	var m map[string]string
	require.NoError(t, json.Unmarshal([]byte(text), &m))
	return m
}

// delegatedTo is the vote account of the one DelegateStake of a stake
// transaction.
func delegatedTo(t *testing.T, unsigned string) solana.PublicKey {
	t.Helper()
	_, ixs := decodeIxs(t, unsigned)
	d := find(ixs, solana.StakeProgramID, tagStakeDelegate)
	require.Len(t, d, 1)
	return d[0].accounts[1]
}

// TestHostileModes shows that each hostile mode returns a transaction that
// does not match the request while extraData stays honest (but for the
// validator the validator modes choose, which extraData names).
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

	build := func(t *testing.T) built {
		t.Helper()
		var b built
		b.stake = stakeTx(t, cl, key, "2000000000")
		var err error
		b.unstake, err = cl.Unstake(ctx, apiclient.UnstakeRequest{Chain: "solana", Network: "testnet", StakerAddress: addr,
			Extra: apiclient.UnstakeExtra{Amount: "2000000000", StakeAccount: accB.String()}})
		require.NoError(t, err)
		b.withdraw, err = cl.Withdraw(ctx, apiclient.WithdrawRequest{Chain: "solana", Network: "testnet", StakerAddress: addr,
			Extra: apiclient.WithdrawExtra{Amount: "2000000000"}})
		require.NoError(t, err)
		return b
	}
	honest := build(t)
	vote := honest.stake.ExtraData.VoteAccount
	var previous built // what the mode before answered
	votes, err := shared.Runtime().RPC().GetVoteAccounts(ctx, nil)
	require.NoError(t, err)

	checks := map[HostileMode]func(t *testing.T, b built){
		HostileLamportsToStranger: func(t *testing.T, b built) {
			for _, u := range b.each() {
				_, ixs := decodeIxs(t, u.UnsignedTransactionData)
				tr := find(ixs, solana.SystemProgramID, tagSystemTransfer)
				require.Len(t, tr, 1)
				assert.True(t, tr[0].accounts[0].Equals(staker))
				assert.False(t, tr[0].accounts[1].Equals(staker), "the transfer goes to a stranger")
			}
		},
		HostileOtherVoteAccount: func(t *testing.T, b built) {
			assert.NotEqual(t, vote, delegatedTo(t, b.stake.UnsignedTransactionData).String())
		},
		HostileOtherFeePayer: func(t *testing.T, b built) {
			for _, u := range b.each() {
				tx, _ := decodeIxs(t, u.UnsignedTransactionData)
				assert.False(t, tx.Message.AccountKeys[0].Equals(staker))
			}
		},
		HostileOtherAmount: func(t *testing.T, b built) {
			_, ixs := decodeIxs(t, b.stake.UnsignedTransactionData)
			c := find(ixs, solana.SystemProgramID, tagSystemCreateWithSeed)
			require.Len(t, c, 1)
			seedLen := binary.LittleEndian.Uint64(c[0].data[36:44])
			assert.NotEqualValues(t, amount, binary.LittleEndian.Uint64(c[0].data[44+seedLen:52+seedLen]))
			_, ixs = decodeIxs(t, b.withdraw.UnsignedTransactionData)
			w := find(ixs, solana.StakeProgramID, tagStakeWithdraw)
			require.Len(t, w, 1)
			assert.NotEqualValues(t, amount, binary.LittleEndian.Uint64(w[0].data[4:12]))
		},
		HostileExtraInstruction: func(t *testing.T, b built) {
			for _, u := range b.each() {
				_, ixs := decodeIxs(t, u.UnsignedTransactionData)
				a := find(ixs, solana.StakeProgramID, tagStakeAuthorize)
				require.Len(t, a, 1)
				assert.False(t, solana.PublicKeyFromBytes(a[0].data[4:36]).Equals(staker), "authority goes to a stranger")
			}
		},
		HostileOtherStakeAccount: func(t *testing.T, b built) {
			_, ixs := decodeIxs(t, b.unstake.UnsignedTransactionData)
			d := find(ixs, solana.StakeProgramID, tagStakeDeactivate)
			require.Len(t, d, 1)
			assert.False(t, d[0].accounts[0].Equals(accB))
			_, ixs = decodeIxs(t, b.withdraw.UnsignedTransactionData)
			w := find(ixs, solana.StakeProgramID, tagStakeWithdraw)
			require.Len(t, w, 1)
			assert.False(t, w[0].accounts[0].Equals(accA))
		},
		HostileOtherRecipient: func(t *testing.T, b built) {
			_, ixs := decodeIxs(t, b.withdraw.UnsignedTransactionData)
			w := find(ixs, solana.StakeProgramID, tagStakeWithdraw)
			require.Len(t, w, 1)
			assert.False(t, w[0].accounts[1].Equals(staker))
		},
		HostileFeeHeavy: func(t *testing.T, b built) {
			for _, u := range b.each() {
				_, ixs := decodeIxs(t, u.UnsignedTransactionData)
				require.Greater(t, len(ixs), 2)
				assert.True(t, ixs[0].program.Equals(solana.ComputeBudget) && ixs[1].program.Equals(solana.ComputeBudget),
					"the compute budget comes before the staking instructions")
				limit, price := computeBudgetOf(t, ixs)
				assert.EqualValues(t, 1_400_000, limit)
				assert.EqualValues(t, 1_000_000, price, "micro-lamports: 1 lamport a unit")
			}
		},
		HostileReadonlyWritable: func(t *testing.T, b built) {
			for i, u := range b.each() {
				tx, ixs := decodeIxs(t, u.UnsignedTransactionData)
				acc := []solana.PublicKey{stakeAccountOf(t, tx), accB, accA}[i]
				// The instructions write the account ...
				found := false
				for _, d := range ixs {
					if d.program.Equals(solana.StakeProgramID) && d.accounts[0].Equals(acc) {
						found = true
					}
				}
				require.True(t, found, "a stake instruction works on %s", acc)
				// ... which the header lists read-only.
				writable, err := tx.Message.IsWritable(acc)
				require.NoError(t, err)
				assert.False(t, writable, "the stake account is read-only in the header")
				// The chain refuses it, and nothing changes.
				_, signed := signTx(t, u.UnsignedTransactionData, key)
				_, err = cl.Broadcast(ctx, broadcastReq(key, signed))
				requireRejected(t, err, "InstructionError")
			}
		},
		HostileLockup: func(t *testing.T, b built) {
			_, ixs := decodeIxs(t, b.stake.UnsignedTransactionData)
			var init *stake.Initialize
			for _, d := range ixs {
				if !d.program.Equals(solana.StakeProgramID) || d.tag() != stake.Instruction_Initialize {
					continue
				}
				inst, err := stake.DecodeInstruction(nil, d.data)
				require.NoError(t, err)
				init = inst.Impl.(*stake.Initialize)
			}
			require.NotNil(t, init, "stake Initialize")
			require.NotNil(t, init.Lockup)
			assert.EqualValues(t, 4_102_444_800, *init.Lockup.UnixTimestamp, "locked up until 2100")
			assert.EqualValues(t, 1_000_000, *init.Lockup.Epoch)
			assert.Equal(t, staker, *init.Lockup.Custodian, "custodian is the staker")
			assert.Equal(t, staker, *init.Authorized.Staker)
		},
		HostileReplay: func(t *testing.T, b built) {
			for i, u := range b.each() {
				assert.Equal(t, previous.each()[i].UnsignedTransactionData, u.UnsignedTransactionData, "served again byte for byte")
				assert.Equal(t, previous.each()[i].CreatedAt, u.CreatedAt)
			}
		},
		HostileDelinquentValidator: func(t *testing.T, b built) {
			got := delegatedTo(t, b.stake.UnsignedTransactionData)
			assert.Equal(t, got.String(), b.stake.ExtraData.VoteAccount, "extraData names the validator")
			require.Contains(t, shared.Runtime().DelinquentVoteAccounts(), got)
			assert.Equal(t, map[string]string{got.String(): "active"}, validatorStatuses(t, cl, got.String()),
				"the service answers active for it")
		},
		HostileUnlistedValidator: func(t *testing.T, b built) {
			got := delegatedTo(t, b.stake.UnsignedTransactionData)
			assert.Equal(t, got.String(), b.stake.ExtraData.VoteAccount, "extraData names the validator")
			assert.NotContains(t, shared.Runtime().VoteAccounts(), got, "not one of the sandbox's validators")
			now, err := shared.Runtime().RPC().GetVoteAccounts(ctx, nil)
			require.NoError(t, err)
			current := false
			for _, v := range now.Current {
				if v.VotePubkey.Equals(got) {
					current = true
					assert.LessOrEqual(t, v.Commission, uint8(10))
				}
			}
			assert.True(t, current, "a current validator")
			assert.Equal(t, "active", validatorStatuses(t, cl, got.String())[got.String()])
		},
	}
	t.Run("honest", func(t *testing.T) {
		_, ixs := decodeIxs(t, honest.stake.UnsignedTransactionData)
		assert.Len(t, ixs, 3)
		assert.Equal(t, vote, delegatedTo(t, honest.stake.UnsignedTransactionData).String())
		ok := false
		for _, v := range votes.Current {
			if v.VotePubkey.String() == vote {
				ok = v.Commission <= 10
			}
		}
		assert.True(t, ok, "a current validator with a sane commission")
		_, ixs = decodeIxs(t, honest.unstake.UnsignedTransactionData)
		require.Len(t, ixs, 1)
		assert.True(t, ixs[0].accounts[0].Equals(accB))
		_, ixs = decodeIxs(t, honest.withdraw.UnsignedTransactionData)
		require.Len(t, ixs, 1)
		assert.True(t, ixs[0].accounts[0].Equals(accA))
		assert.True(t, ixs[0].accounts[1].Equals(staker))
		for _, u := range honest.each() {
			tx, uixs := decodeIxs(t, u.UnsignedTransactionData)
			limit, price := computeBudgetOf(t, uixs)
			assert.Zero(t, limit+uint32(price), "no compute budget")
			for _, k := range tx.Message.AccountKeys {
				if k.Equals(accA) || k.Equals(accB) {
					writable, err := tx.Message.IsWritable(k)
					require.NoError(t, err)
					assert.True(t, writable)
				}
			}
		}
	})
	previous = honest
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
			b := build(t)
			wantStake := honest.stake.ExtraData
			if mode == HostileDelinquentValidator || mode == HostileUnlistedValidator {
				wantStake.VoteAccount = b.stake.ExtraData.VoteAccount
				assert.NotEqual(t, vote, wantStake.VoteAccount, "another validator than the honest one")
			}
			assert.Equal(t, wantStake, b.stake.ExtraData, "extraData stays honest")
			assert.Equal(t, honest.unstake.ExtraData, b.unstake.ExtraData)
			assert.Equal(t, honest.withdraw.ExtraData, b.withdraw.ExtraData)
			checks[mode](t, b)
			previous = b
		})
	}
	r := do(t, http.MethodPost, shared.URL()+"/sandbox/hostile", "", map[string]any{"mode": "polite"})
	requireErrorEnvelope(t, r, http.StatusBadRequest, nameValidation, codeValidation, typeClient)
}
