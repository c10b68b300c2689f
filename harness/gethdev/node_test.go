//go:build integration

package gethdev

import (
	"context"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startNode starts a node for one test and closes it when the test ends.
func startNode(t *testing.T, opts Options) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n, err := Start(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, n.Close()) })
	return n
}

func TestStartServesDevChain(t *testing.T) {
	n := startNode(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// Ask the node itself over a separate, raw JSON-RPC connection.
	c, err := rpc.DialContext(ctx, n.RPCURL())
	require.NoError(t, err)
	defer c.Close()
	var chainID string
	require.NoError(t, c.CallContext(ctx, &chainID, "eth_chainId"))
	assert.Equal(t, "0x539", chainID, "geth --dev serves chain id 1337")
	assert.Equal(t, int64(1337), n.ChainID().Int64())

	// The developer key is the account geth funded in its genesis (go-ethereum's published
	// development address).
	assert.Equal(t, common.HexToAddress("0x71562b71999873DB5b286dF957af199Ec94617F7"), n.DevAddress())
	assert.Equal(t, n.DevAddress(), crypto.PubkeyToAddress(n.DevKey().PublicKey))
	var accounts []common.Address
	require.NoError(t, c.CallContext(ctx, &accounts, "eth_accounts"))
	assert.Equal(t, []common.Address{n.DevAddress()}, accounts)
	bal, err := n.Client().BalanceAt(ctx, n.DevAddress(), nil)
	require.NoError(t, err)
	assert.Positive(t, bal.Sign())

	// Blocks are produced without transactions (--dev.period): the head moves.
	first, err := n.Client().BlockNumber(ctx)
	require.NoError(t, err)
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		now, err := n.Client().BlockNumber(ctx)
		assert.NoError(ct, err)
		assert.Greater(ct, now, first)
	}, 30*time.Second, 100*time.Millisecond)

	// The blocks between transactions carry the ticker's withdrawal of 0 gwei: nothing credited.
	head, err := n.Client().BlockByNumber(ctx, nil)
	require.NoError(t, err)
	if ws := head.Withdrawals(); assert.NotEmpty(t, ws, "block %d", head.NumberU64()) {
		assert.Equal(t, tickAddress, ws[0].Address)
		assert.Zero(t, ws[0].Amount)
	}
	tick, err := n.Client().BalanceAt(ctx, tickAddress, nil)
	require.NoError(t, err)
	assert.Zero(t, tick.Sign(), "the ticks credit nothing")

	// The gas limit option reaches the chain: the genesis block carries it.
	genesis, err := n.Client().HeaderByNumber(ctx, big.NewInt(0))
	require.NoError(t, err)
	assert.Equal(t, uint64(DefaultGasLimit), genesis.GasLimit)
}

func TestFund(t *testing.T) {
	n := startNode(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// Several concurrent fundings each land: Fund orders the developer account's nonces.
	const count = 3
	keys := make([]common.Address, count)
	for i := range keys {
		k, err := crypto.GenerateKey()
		require.NoError(t, err)
		keys[i] = crypto.PubkeyToAddress(k.PublicKey)
	}
	want := big.NewInt(1_234_567_890_123)
	var wg sync.WaitGroup
	errs := make([]error, count)
	for i, a := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rcpt, err := n.Fund(ctx, a, want)
			if err == nil && rcpt.Status != 1 {
				err = assert.AnError
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, a := range keys {
		require.NoError(t, errs[i])
		bal, err := n.Client().BalanceAt(ctx, a, nil)
		require.NoError(t, err)
		assert.Equal(t, want.String(), bal.String(), "balance of %s", a.Hex())
	}

	_, err := n.Fund(ctx, keys[0], big.NewInt(0))
	assert.ErrorContains(t, err, "not positive")
}

func TestCloseStopsGethAndRemovesTempDir(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n, err := Start(ctx, Options{})
	require.NoError(t, err)
	dir := n.tmpDir
	require.DirExists(t, dir)
	require.NoError(t, n.Close())
	select {
	case <-n.Done():
	default:
		t.Fatal("geth still running after Close")
	}
	assert.NoDirExists(t, dir)
	require.NoError(t, n.Close(), "Close is idempotent")
}

func TestKeepsGivenDataDirAndResumesChain(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n, err := Start(ctx, Options{DataDir: dir})
	require.NoError(t, err)
	a := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	_, err = n.Fund(ctx, a, big.NewInt(7))
	require.NoError(t, err)
	require.NoError(t, n.Close())
	assert.DirExists(t, filepath.Join(dir, "geth"))

	n2 := startNode(t, Options{DataDir: dir})
	bal, err := n2.Client().BalanceAt(ctx, a, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(7), bal.Int64(), "the chain in the data directory resumed")
}

// TestTransactionFinalizesWithoutOtherTraffic: a transaction is mined at once, and the blocks
// the node seals on its own carry it to finalized depth (32 blocks) with nothing else sent, at
// the busy rate: the idle rate here would take an hour a block. Once it is final, the node is
// idle and seals nothing more.
func TestTransactionFinalizesWithoutOtherTraffic(t *testing.T) {
	n := startNode(t, Options{Period: 20 * time.Millisecond, IdlePeriod: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rcpt, err := n.Fund(ctx, common.HexToAddress("0x00000000000000000000000000000000000f1a1e"), big.NewInt(1))
	require.NoError(t, err)
	fin, err := n.WaitFinalized(ctx, rcpt.BlockNumber.Uint64())
	require.NoError(t, err)
	h, err := n.Client().HeaderByNumber(ctx, rcpt.BlockNumber)
	require.NoError(t, err)
	assert.Equal(t, rcpt.BlockHash, h.Hash(), "the block that holds it is canonical below the finalized block %d", fin.Number)

	// Idle: a busy node would seal 50 blocks a second.
	var idleAt uint64
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		head, err := n.Client().BlockNumber(ctx)
		require.NoError(ct, err)
		f, err := n.Client().HeaderByNumber(ctx, big.NewInt(int64(rpc.FinalizedBlockNumber)))
		require.NoError(ct, err)
		require.GreaterOrEqual(ct, f.Number.Uint64(), rcpt.BlockNumber.Uint64())
		idleAt = head
	}, 30*time.Second, 20*time.Millisecond)
	assert.Never(t, func() bool {
		head, err := n.Client().BlockNumber(ctx)
		return err != nil || head > idleAt+1
	}, time.Second, 20*time.Millisecond, "an idle node seals no block at the busy rate (head was %d)", idleAt)
}

func TestRefusesBadOptions(t *testing.T) {
	_, err := Start(context.Background(), Options{Binary: "/bin/true", Period: time.Millisecond})
	assert.ErrorContains(t, err, "Period 1ms is below the minimum 10ms")
	_, err = Start(context.Background(), Options{Binary: "/bin/true", Period: time.Second, IdlePeriod: time.Millisecond * 500})
	assert.ErrorContains(t, err, "IdlePeriod 500ms is below Period 1s")

	_, err = Start(context.Background(), Options{Binary: filepath.Join(t.TempDir(), "no-such-geth")})
	assert.ErrorContains(t, err, "no-such-geth")
}

func TestReportsGethExitingEarly(t *testing.T) {
	// A binary that exits at once: Start names the exit instead of waiting forever.
	script := filepath.Join(t.TempDir(), "geth")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho 'Fatal: flag provided but not defined' >&2\nexit 1\n"), 0o755))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Start(ctx, Options{Binary: script})
	require.Error(t, err)
	assert.ErrorContains(t, err, "exited before serving HTTP")
	assert.ErrorContains(t, err, "flag provided but not defined")
}
