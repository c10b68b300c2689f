//go:build integration

package solanart

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/stake"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/sandbox/npmcache"
)

const (
	testSlotDuration = 50 * time.Millisecond
	feePerSignature  = 5000
	stakeAccountSize = 200
	waitFor          = 20 * time.Second
	pollEvery        = 20 * time.Millisecond
)

// startRuntime starts a runtime that is closed when the test ends.
func startRuntime(t testing.TB, opts Options) *Runtime {
	t.Helper()
	if opts.SlotDuration == 0 {
		opts.SlotDuration = testSlotDuration
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r, err := Start(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, r.Close()) })
	return r
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// buildTx compiles instructions paid by payer on the latest blockhash and signs them.
func buildTx(t testing.TB, ctx context.Context, c *rpc.Client, payer solana.PrivateKey, ixs ...solana.Instruction) *solana.Transaction {
	t.Helper()
	bh, err := c.GetLatestBlockhash(ctx, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	return buildTxOn(t, bh.Value.Blockhash, payer, ixs...)
}

func buildTxOn(t testing.TB, blockhash solana.Hash, payer solana.PrivateKey, ixs ...solana.Instruction) *solana.Transaction {
	t.Helper()
	tx, err := solana.NewTransaction(ixs, blockhash, solana.TransactionPayer(payer.PublicKey()))
	require.NoError(t, err)
	_, err = tx.Sign(func(k solana.PublicKey) *solana.PrivateKey {
		if k.Equals(payer.PublicKey()) {
			return &payer
		}
		return nil
	})
	require.NoError(t, err)
	return tx
}

// requireRPCError asserts err is a JSON-RPC error with code and a message containing text.
func requireRPCError(t *testing.T, err error, code int, text string) *jsonrpc.RPCError {
	t.Helper()
	require.Error(t, err)
	var rpcErr *jsonrpc.RPCError
	require.True(t, errors.As(err, &rpcErr), "not a JSON-RPC error: %v", err)
	assert.Equal(t, code, rpcErr.Code, rpcErr.Message)
	assert.Contains(t, rpcErr.Message, text)
	return rpcErr
}

func balance(t testing.TB, ctx context.Context, c *rpc.Client, k solana.PublicKey) uint64 {
	t.Helper()
	b, err := c.GetBalance(ctx, k, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	return b.Value
}

func fundedWallet(t testing.TB, ctx context.Context, r *Runtime, lamports uint64) solana.PrivateKey {
	t.Helper()
	w := solana.NewWallet()
	require.NoError(t, r.Airdrop(ctx, w.PublicKey(), lamports))
	require.Equal(t, lamports, balance(t, ctx, r.RPC(), w.PublicKey()))
	return w.PrivateKey
}

func transfer(from solana.PrivateKey, to solana.PublicKey, lamports uint64) solana.Instruction {
	return system.NewTransferInstruction(lamports, from.PublicKey(), to).Build()
}

// seedStakeInstructions creates, initializes and delegates a stake account derived from
// the staker with a seed. solana-go marks the stake account as a signer in Initialize and
// DelegateStake; a seed-derived account has no key, so those metas are corrected here.
func seedStakeInstructions(t testing.TB, staker, stakeAccount, vote solana.PublicKey, seed string, lamports uint64) []solana.Instruction {
	t.Helper()
	create := system.NewCreateAccountWithSeedInstruction(staker, seed, lamports, stakeAccountSize, solana.StakeProgramID, staker, stakeAccount, staker).Build()
	initialize := stake.NewInitializeInstruction(staker, staker, stakeAccount)
	initialize.AccountMetaSlice[0].IsSigner = false
	delegate := stake.NewDelegateStakeInstruction(vote, staker, stakeAccount)
	delegate.AccountMetaSlice[0].IsSigner = false
	return []solana.Instruction{create, initialize.Build(), delegate.Build()}
}

func TestStakeLifecycle(t *testing.T) {
	// Long epochs: the chain must not cross an epoch boundary on its own between the
	// deactivation and the refused withdrawal; WarpEpochs moves epochs instead.
	r := startRuntime(t, Options{SlotsPerEpoch: 2048, FinalizationDepth: 8})
	ctx := testContext(t)
	c := r.RPC()

	const airdrop = 10 * solana.LAMPORTS_PER_SOL
	const delegated = 2 * solana.LAMPORTS_PER_SOL
	payer := fundedWallet(t, ctx, r, airdrop)
	staker := payer.PublicKey()
	vote := r.VoteAccounts()[0]

	const seed = "stake:0"
	stakeAccount, err := solana.CreateWithSeed(staker, seed, solana.StakeProgramID)
	require.NoError(t, err)
	rent, err := c.GetMinimumBalanceForRentExemption(ctx, stakeAccountSize, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	lamports := rent + delegated

	stakeTx := buildTx(t, ctx, c, payer, seedStakeInstructions(t, staker, stakeAccount, vote, seed, lamports)...)
	sig, err := c.SendTransaction(ctx, stakeTx)
	require.NoError(t, err)
	require.Equal(t, stakeTx.Signatures[0], sig)

	// Confirmed with confirmations = current slot - landing slot, then finalized.
	st, err := c.GetSignatureStatuses(ctx, false, sig)
	require.NoError(t, err)
	require.NotNil(t, st.Value[0])
	if st.Value[0].ConfirmationStatus == rpc.ConfirmationStatusConfirmed {
		require.NotNil(t, st.Value[0].Confirmations)
		assert.Equal(t, st.Context.Slot-st.Value[0].Slot, *st.Value[0].Confirmations)
	}
	assert.Nil(t, st.Value[0].Err)
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		st, err := c.GetSignatureStatuses(ctx, true, sig)
		if !assert.NoError(ct, err) || !assert.NotNil(ct, st.Value[0]) {
			return
		}
		assert.Equal(ct, rpc.ConfirmationStatusFinalized, st.Value[0].ConfirmationStatus)
		assert.Nil(ct, st.Value[0].Confirmations)
		assert.GreaterOrEqual(ct, st.Context.Slot-st.Value[0].Slot, uint64(8))
	}, waitFor, pollEvery)

	// Resending the same bytes is refused and the transaction is in the ledger once.
	_, err = c.SendTransaction(ctx, stakeTx)
	requireRPCError(t, err, -32002, "Transaction simulation failed: This transaction has already been processed")
	ledger, err := r.Ledger(ctx)
	require.NoError(t, err)
	count := 0
	for _, e := range ledger {
		if e.Signature == sig {
			count++
			assert.Equal(t, staker, e.FeePayer)
			assert.False(t, e.Airdrop)
			assert.Contains(t, e.Accounts, stakeAccount)
			assert.Contains(t, e.Accounts, vote)
		}
	}
	assert.Equal(t, 1, count)

	// Balances after staking are exact: the stake account holds rent + delegation, the
	// payer paid that plus one signature fee.
	info, err := c.GetAccountInfo(ctx, stakeAccount)
	require.NoError(t, err)
	assert.Equal(t, solana.StakeProgramID, info.Value.Owner)
	assert.Equal(t, lamports, info.Value.Lamports)
	assert.Equal(t, uint64(stakeAccountSize), uint64(len(info.Value.Data.GetBinary())))
	assert.Equal(t, airdrop-lamports-feePerSignature, balance(t, ctx, c, staker))

	// The delegation becomes active stake of the vote account at the next epoch.
	require.NoError(t, r.WarpEpochs(ctx, 1))
	votes, err := c.GetVoteAccounts(ctx, nil)
	require.NoError(t, err)
	found := false
	for _, v := range votes.Current {
		if v.VotePubkey == vote {
			found = true
			assert.Equal(t, delegated, v.ActivatedStake)
		}
	}
	assert.True(t, found, "vote account %s not listed as current", vote)

	// Deactivate; withdrawing in the deactivation epoch is refused by the stake program
	// and changes nothing.
	deactivate := buildTx(t, ctx, c, payer, stake.NewDeactivateInstruction(stakeAccount, staker).Build())
	_, err = c.SendTransaction(ctx, deactivate)
	require.NoError(t, err)
	before := balance(t, ctx, c, staker)
	assert.Equal(t, airdrop-lamports-2*feePerSignature, before)

	withdrawEarly := buildTx(t, ctx, c, payer, stake.NewWithdrawInstruction(lamports, stakeAccount, staker, staker).Build())
	_, err = c.SendTransaction(ctx, withdrawEarly)
	rpcErr := requireRPCError(t, err, -32002, "Transaction simulation failed: Error processing Instruction 0: insufficient funds for instruction")
	data, ok := rpcErr.Data.(map[string]any)
	require.True(t, ok, "error data is %T", rpcErr.Data)
	assert.NotEmpty(t, data["logs"])
	assert.Equal(t, before, balance(t, ctx, c, staker))
	st, err = c.GetSignatureStatuses(ctx, true, withdrawEarly.Signatures[0])
	require.NoError(t, err)
	assert.Nil(t, st.Value[0])

	// One epoch later the stake is inactive and everything can be withdrawn.
	require.NoError(t, r.WarpEpochs(ctx, 1))
	withdraw := buildTx(t, ctx, c, payer, stake.NewWithdrawInstruction(lamports, stakeAccount, staker, staker).Build())
	_, err = c.SendTransaction(ctx, withdraw)
	require.NoError(t, err)
	assert.Equal(t, before+lamports-feePerSignature, balance(t, ctx, c, staker))
	assert.Equal(t, airdrop-3*feePerSignature, balance(t, ctx, c, staker))
	_, err = c.GetAccountInfo(ctx, stakeAccount)
	assert.ErrorIs(t, err, rpc.ErrNotFound)
}

func TestRefusedTransactions(t *testing.T) {
	// A manual clock: a blockhash valid 20 slots (one second of wall time) stays valid while each
	// case builds and sends, however slow the machine; only ExpireBlockhashes moves the chain.
	r := startRuntime(t, Options{SlotsPerEpoch: 32, BlockhashValidity: 20, ManualClock: true})
	ctx := testContext(t)
	c := r.RPC()
	payer := fundedWallet(t, ctx, r, solana.LAMPORTS_PER_SOL)
	to := solana.NewWallet().PublicKey()

	t.Run("expired blockhash", func(t *testing.T) {
		bh, err := c.GetLatestBlockhash(ctx, rpc.CommitmentConfirmed)
		require.NoError(t, err)
		assert.Equal(t, bh.Context.Slot+20, bh.Value.LastValidBlockHeight)
		tx := buildTxOn(t, bh.Value.Blockhash, payer, transfer(payer, to, 1000))

		require.NoError(t, r.ExpireBlockhashes(ctx))
		height, err := c.GetBlockHeight(ctx, rpc.CommitmentConfirmed)
		require.NoError(t, err)
		assert.Greater(t, height, bh.Value.LastValidBlockHeight)
		valid, err := c.IsBlockhashValid(ctx, bh.Value.Blockhash, rpc.CommitmentConfirmed)
		require.NoError(t, err)
		assert.False(t, valid.Value)

		_, err = c.SendTransaction(ctx, tx)
		requireRPCError(t, err, -32002, "Transaction simulation failed: Blockhash not found")
		st, err := c.GetSignatureStatuses(ctx, true, tx.Signatures[0])
		require.NoError(t, err)
		assert.Nil(t, st.Value[0])
	})

	t.Run("unknown blockhash", func(t *testing.T) {
		tx := buildTxOn(t, solana.Hash{1, 2, 3}, payer, transfer(payer, to, 1000))
		_, err := c.SendTransaction(ctx, tx)
		requireRPCError(t, err, -32002, "Transaction simulation failed: Blockhash not found")
	})

	t.Run("bad signature", func(t *testing.T) {
		tx := buildTx(t, ctx, c, payer, transfer(payer, to, 1000))
		tx.Signatures[0][0] ^= 0xff
		_, err := c.SendTransaction(ctx, tx)
		requireRPCError(t, err, -32003, "Transaction signature verification failure")
	})

	t.Run("signed by another key", func(t *testing.T) {
		other := solana.NewWallet().PrivateKey
		tx := buildTx(t, ctx, c, payer, transfer(payer, to, 1000))
		sig, err := other.Sign(tx.Signatures[0][:]) // any signature not by the payer
		require.NoError(t, err)
		tx.Signatures[0] = sig
		_, err = c.SendTransaction(ctx, tx)
		requireRPCError(t, err, -32003, "Transaction signature verification failure")
	})

	t.Run("malformed bytes", func(t *testing.T) {
		_, err := c.SendRawTransaction(ctx, []byte{1, 2, 3})
		requireRPCError(t, err, -32602, "failed to deserialize transaction")
		health, err := c.GetHealth(ctx)
		require.NoError(t, err)
		assert.Equal(t, rpc.HealthOk, health)
	})

	t.Run("execution failure", func(t *testing.T) {
		before := balance(t, ctx, c, payer.PublicKey())
		tx := buildTx(t, ctx, c, payer, transfer(payer, to, 10*solana.LAMPORTS_PER_SOL))
		_, err := c.SendTransaction(ctx, tx)
		requireRPCError(t, err, -32002, "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1")
		assert.Equal(t, before, balance(t, ctx, c, payer.PublicKey()))
	})

	t.Run("base58 encoding lands", func(t *testing.T) {
		tx := buildTx(t, ctx, c, payer, transfer(payer, to, 1_000_000))
		raw, err := tx.MarshalBinary()
		require.NoError(t, err)
		var sig solana.Signature
		err = c.RPCCallForInto(ctx, &sig, "sendTransaction", []any{solana.Base58(raw).String(), map[string]any{"encoding": "base58"}})
		require.NoError(t, err)
		assert.Equal(t, tx.Signatures[0], sig)
		assert.Equal(t, uint64(1_000_000), balance(t, ctx, c, to))
	})
}

func TestAirdropLandsInLedger(t *testing.T) {
	r := startRuntime(t, Options{})
	ctx := testContext(t)
	to := solana.NewWallet().PublicKey()
	require.NoError(t, r.Airdrop(ctx, to, solana.LAMPORTS_PER_SOL))
	require.NoError(t, r.Airdrop(ctx, to, solana.LAMPORTS_PER_SOL)) // the same airdrop again is a new transaction
	assert.Equal(t, 2*solana.LAMPORTS_PER_SOL, balance(t, ctx, r.RPC(), to))

	ledger, err := r.Ledger(ctx)
	require.NoError(t, err)
	var airdrops []LedgerEntry
	for _, e := range ledger {
		if e.Airdrop {
			airdrops = append(airdrops, e)
		}
	}
	require.Len(t, airdrops, 2)
	assert.NotEqual(t, airdrops[0].Signature, airdrops[1].Signature)
	for _, e := range airdrops {
		assert.Contains(t, e.Accounts, to)
		st, err := r.RPC().GetSignatureStatuses(ctx, true, e.Signature)
		require.NoError(t, err)
		require.NotNil(t, st.Value[0])
		assert.Equal(t, e.Slot, st.Value[0].Slot)
	}
}

func TestVoteAccounts(t *testing.T) {
	r := startRuntime(t, Options{VoteAccounts: 2, DelinquentVoteAccounts: 1})
	ctx := testContext(t)
	require.Len(t, r.VoteAccounts(), 2)
	require.Len(t, r.DelinquentVoteAccounts(), 1)

	votes, err := r.RPC().GetVoteAccounts(ctx, nil)
	require.NoError(t, err)
	require.Len(t, votes.Current, 2)
	require.Len(t, votes.Delinquent, 1)
	for i, v := range votes.Current {
		assert.Equal(t, r.VoteAccounts()[i], v.VotePubkey)
		assert.False(t, v.NodePubkey.IsZero())
		assert.Equal(t, uint8(10), v.Commission)
	}
	assert.Equal(t, r.DelinquentVoteAccounts()[0], votes.Delinquent[0].VotePubkey)

	// Each is a real account of the vote program, initialised with its node identity.
	for _, v := range append(votes.Current, votes.Delinquent...) {
		info, err := r.RPC().GetAccountInfo(ctx, v.VotePubkey)
		require.NoError(t, err)
		assert.Equal(t, solana.VoteProgramID, info.Value.Owner)
		data := info.Value.Data.GetBinary()
		require.Greater(t, len(data), 36)
		assert.Equal(t, v.NodePubkey, solana.PublicKeyFromBytes(data[4:36]))
	}

	// The addresses are the same on every run.
	again := startRuntime(t, Options{VoteAccounts: 2, DelinquentVoteAccounts: 1})
	assert.Equal(t, r.VoteAccounts(), again.VoteAccounts())
	assert.Equal(t, r.DelinquentVoteAccounts(), again.DelinquentVoteAccounts())
}

// clockSysvar decodes the Clock sysvar account.
func clockSysvar(t *testing.T, ctx context.Context, c *rpc.Client) (slot, epoch uint64, unix int64) {
	t.Helper()
	info, err := c.GetAccountInfo(ctx, solana.SysVarClockPubkey)
	require.NoError(t, err)
	d := info.Value.Data.GetBinary()
	require.GreaterOrEqual(t, len(d), 40)
	return binary.LittleEndian.Uint64(d[0:]), binary.LittleEndian.Uint64(d[16:]), int64(binary.LittleEndian.Uint64(d[32:]))
}

func TestEpochsAndSlots(t *testing.T) {
	const slotsPerEpoch = 32
	r := startRuntime(t, Options{SlotsPerEpoch: slotsPerEpoch})
	ctx := testContext(t)
	c := r.RPC()

	sched, err := c.GetEpochSchedule(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(slotsPerEpoch), sched.SlotsPerEpoch)
	assert.False(t, sched.Warmup)

	// Slots advance with wall time, and block height equals the slot.
	first, err := c.GetSlot(ctx, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		s, err := c.GetSlot(ctx, rpc.CommitmentConfirmed)
		return err == nil && s >= first+3
	}, waitFor, pollEvery)
	bh1, err := c.GetLatestBlockhash(ctx, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	require.NoError(t, r.AdvanceSlots(ctx, 5))
	bh2, err := c.GetLatestBlockhash(ctx, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, bh2.Context.Slot, bh1.Context.Slot+5)
	assert.NotEqual(t, bh1.Value.Blockhash, bh2.Value.Blockhash)

	info, err := c.GetEpochInfo(ctx, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	assert.Equal(t, info.AbsoluteSlot, info.BlockHeight)
	assert.Equal(t, info.AbsoluteSlot/slotsPerEpoch, info.Epoch)
	assert.Equal(t, info.AbsoluteSlot%slotsPerEpoch, info.SlotIndex)
	assert.Equal(t, uint64(slotsPerEpoch), info.SlotsInEpoch)

	// WarpEpochs lands on the first slot of a later epoch; the Clock sysvar follows.
	require.NoError(t, r.WarpEpochs(ctx, 2))
	after, err := c.GetEpochInfo(ctx, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, after.Epoch, info.Epoch+2)
	assert.GreaterOrEqual(t, after.AbsoluteSlot, (info.Epoch+2)*slotsPerEpoch)
	slot, epoch, unix := clockSysvar(t, ctx, c)
	assert.Equal(t, slot/slotsPerEpoch, epoch)
	assert.GreaterOrEqual(t, epoch, info.Epoch+2)
	assert.Greater(t, unix, int64(0))

	// Wall time moves the clock on from where the warp left it, and a blockhash handed out
	// before the warp is still within its validity.
	require.Eventually(t, func() bool {
		s, err := c.GetSlot(ctx, rpc.CommitmentConfirmed)
		return err == nil && s >= after.AbsoluteSlot+3
	}, slotsPerEpoch*testSlotDuration, pollEvery)
	valid, err := c.IsBlockhashValid(ctx, bh2.Value.Blockhash, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	assert.True(t, valid.Value, "a blockhash %d slots old is valid", after.AbsoluteSlot-bh2.Context.Slot)

	genesis, err := c.GetGenesisHash(ctx)
	require.NoError(t, err)
	assert.False(t, genesis.IsZero())
	version, err := c.GetVersion(ctx)
	require.NoError(t, err)
	assert.NotEmpty(t, version.SolanaCore)
}

// TestManualClockMovesOnlyWhenAsked: with ManualClock the chain stays on its slot while wall time
// passes (many slot durations of requests), and moves exactly as far as it is asked.
func TestManualClockMovesOnlyWhenAsked(t *testing.T) {
	const slot, slotsPerEpoch = time.Millisecond, 64
	r := startRuntime(t, Options{SlotDuration: slot, SlotsPerEpoch: slotsPerEpoch, ManualClock: true})
	ctx := testContext(t)
	c := r.RPC()
	first, err := c.GetSlot(ctx, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	began := time.Now()
	for requests := 0; requests < 3 || time.Since(began) < 50*slot; requests++ {
		s, err := c.GetSlot(ctx, rpc.CommitmentConfirmed)
		require.NoError(t, err)
		require.Equal(t, first, s, "the slot moved with wall time after %s", time.Since(began))
	}
	require.NoError(t, r.AdvanceSlots(ctx, 5))
	s, err := c.GetSlot(ctx, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	require.Equal(t, first+5, s)
	require.NoError(t, r.WarpEpochs(ctx, 1))
	info, err := c.GetEpochInfo(ctx, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	require.Equal(t, ((first+5)/slotsPerEpoch+1)*slotsPerEpoch, info.AbsoluteSlot)
	require.Equal(t, uint64(0), info.SlotIndex)
}

func TestCloseIsIdempotent(t *testing.T) {
	ctx := testContext(t)
	r, err := Start(ctx, Options{SlotDuration: testSlotDuration})
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.NoError(t, r.Close())
	select {
	case <-r.done:
	default:
		t.Fatal("node not reaped after Close")
	}
	_, err = r.RPC().GetHealth(ctx)
	assert.Error(t, err)
}

func TestInstallIsIdempotent(t *testing.T) {
	ctx := testContext(t)
	dir, err := npmcache.DefaultCacheDir()
	require.NoError(t, err)
	first, err := install(ctx, dir)
	require.NoError(t, err)
	second, err := install(ctx, dir)
	require.NoError(t, err)
	assert.Equal(t, first, second)
	p, err := project()
	require.NoError(t, err)
	assert.True(t, p.Installed(first))
}

func TestReadCalls(t *testing.T) {
	r := startRuntime(t, Options{})
	ctx := testContext(t)
	c := r.RPC()
	payer := fundedWallet(t, ctx, r, solana.LAMPORTS_PER_SOL)
	missing := solana.NewWallet().PublicKey()

	t.Run("getMultipleAccounts", func(t *testing.T) {
		res, err := c.GetMultipleAccounts(ctx, payer.PublicKey(), missing)
		require.NoError(t, err)
		require.Len(t, res.Value, 2)
		require.NotNil(t, res.Value[0])
		assert.Equal(t, solana.LAMPORTS_PER_SOL, res.Value[0].Lamports)
		assert.Equal(t, solana.SystemProgramID, res.Value[0].Owner)
		assert.Nil(t, res.Value[1])
	})

	t.Run("getAccountInfo base58", func(t *testing.T) {
		res, err := c.GetAccountInfoWithOpts(ctx, r.VoteAccounts()[0], &rpc.GetAccountInfoOpts{Encoding: solana.EncodingBase58})
		require.NoError(t, err)
		assert.Equal(t, solana.VoteProgramID, res.Value.Owner)
		assert.NotEmpty(t, res.Value.Data.GetBinary())
	})

	t.Run("simulate and getTransaction", func(t *testing.T) {
		tx := buildTx(t, ctx, c, payer, transfer(payer, missing, solana.LAMPORTS_PER_SOL/2))
		sim, err := c.SimulateTransaction(ctx, tx)
		require.NoError(t, err)
		assert.Nil(t, sim.Value.Err)
		assert.NotEmpty(t, sim.Value.Logs)
		assert.Equal(t, solana.LAMPORTS_PER_SOL, balance(t, ctx, c, payer.PublicKey()), "simulation changed state")

		sig, err := c.SendTransaction(ctx, tx)
		require.NoError(t, err)
		got, err := c.GetTransaction(ctx, sig, &rpc.GetTransactionOpts{Encoding: solana.EncodingBase64})
		require.NoError(t, err)
		require.NotNil(t, got.Meta)
		assert.Nil(t, got.Meta.Err)
		assert.Equal(t, uint64(feePerSignature), got.Meta.Fee)
		decoded, err := got.Transaction.GetTransaction()
		require.NoError(t, err)
		assert.Equal(t, sig, decoded.Signatures[0])
	})

	t.Run("signature statuses honour searchTransactionHistory", func(t *testing.T) {
		ledger, err := r.Ledger(ctx)
		require.NoError(t, err)
		require.NotEmpty(t, ledger)
		sig := ledger[len(ledger)-1].Signature
		unknown := solana.Signature{1}
		require.NoError(t, r.AdvanceSlots(ctx, 301))

		recent, err := c.GetSignatureStatuses(ctx, false, sig, unknown)
		require.NoError(t, err)
		assert.Nil(t, recent.Value[0], "old signature outside the recent status cache")
		assert.Nil(t, recent.Value[1])

		history, err := c.GetSignatureStatuses(ctx, true, sig, unknown)
		require.NoError(t, err)
		require.NotNil(t, history.Value[0])
		assert.Equal(t, rpc.ConfirmationStatusFinalized, history.Value[0].ConfirmationStatus)
		assert.Nil(t, history.Value[1])
	})

	t.Run("sandbox_config", func(t *testing.T) {
		var cfg struct {
			SlotDurationMs    int64  `json:"slotDurationMs"`
			SlotsPerEpoch     uint64 `json:"slotsPerEpoch"`
			BlockhashValidity uint64 `json:"blockhashValidity"`
			FinalizationDepth uint64 `json:"finalizationDepth"`
		}
		require.NoError(t, c.RPCCallForInto(ctx, &cfg, "sandbox_config", nil))
		assert.Equal(t, testSlotDuration.Milliseconds(), cfg.SlotDurationMs)
		assert.Equal(t, uint64(DefaultSlotsPerEpoch), cfg.SlotsPerEpoch)
		assert.Equal(t, uint64(DefaultBlockhashValidity), cfg.BlockhashValidity)
		assert.Equal(t, uint64(DefaultFinalizationDepth), cfg.FinalizationDepth)
	})
}

func TestConcurrentStartsShareOneInstall(t *testing.T) {
	cache := t.TempDir()
	errs := make(chan error, 2)
	runtimes := make(chan *Runtime, 2)
	for range 2 {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			r, err := Start(ctx, Options{SlotDuration: testSlotDuration, CacheDir: cache})
			errs <- err
			runtimes <- r
		}()
	}
	for range 2 {
		require.NoError(t, <-errs)
		r := <-runtimes
		t.Cleanup(func() { assert.NoError(t, r.Close()) })
	}
	entries, err := os.ReadDir(cache)
	require.NoError(t, err)
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	require.Len(t, dirs, 1, "expected one install directory, found %v", dirs)
	p, err := project()
	require.NoError(t, err)
	assert.True(t, p.Installed(filepath.Join(cache, dirs[0])))
}

// stakeFromSeed creates, initializes and delegates the stake account derived from the
// payer and seed in one transaction, and returns the stake account and the transaction.
func stakeFromSeed(t testing.TB, ctx context.Context, c *rpc.Client, payer solana.PrivateKey, vote solana.PublicKey, seed string, delegated uint64) (solana.PublicKey, *solana.Transaction) {
	t.Helper()
	staker := payer.PublicKey()
	stakeAccount, err := solana.CreateWithSeed(staker, seed, solana.StakeProgramID)
	require.NoError(t, err)
	rent, err := c.GetMinimumBalanceForRentExemption(ctx, stakeAccountSize, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	tx := buildTx(t, ctx, c, payer, seedStakeInstructions(t, staker, stakeAccount, vote, seed, rent+delegated)...)
	_, err = c.SendTransaction(ctx, tx)
	require.NoError(t, err)
	return stakeAccount, tx
}
