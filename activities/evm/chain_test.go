//go:build integration

package evm

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/apiclient"
	evmchain "github.com/stakeflow/stakeflow/chain/evm"
	"github.com/stakeflow/stakeflow/harness/gethdev"
	"github.com/stakeflow/stakeflow/harness/sandbox"
	sbevm "github.com/stakeflow/stakeflow/harness/sandbox/evmchain"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/lease"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// realChain is a geth --dev node with the Polygon stand-in contracts, a staker holding ether and
// 1000 POL, a sandbox whose endpoint 4 forwards to the node, and the activities wired to them as
// a worker wires them: chain/evm's proven Network, signer/evm over a keystore, the real apiclient.
type realChain struct {
	node   *gethdev.Node
	d      *sbevm.Deployment
	sb     *sandbox.Sandbox
	key    *ecdsa.PrivateKey
	staker common.Address
	a      *Activities
	env    *testsuite.TestActivityEnvironment
}

func startRealChain(t *testing.T) *realChain {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	node, err := gethdev.Start(ctx, gethdev.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = node.Close() })
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	staker := crypto.PubkeyToAddress(key.PublicKey)
	_, err = node.Fund(ctx, staker, new(big.Int).Mul(big.NewInt(10), sbevm.POL))
	require.NoError(t, err)
	d, err := sbevm.Deploy(ctx, node.RPCURL(), node.DevKey(), sbevm.WithStaker(staker, new(big.Int).Mul(big.NewInt(1000), sbevm.POL)))
	require.NoError(t, err)
	t.Cleanup(d.Close)
	secret := []byte("activities-evm-test-secret")
	sb, err := sandbox.Start(ctx, sandbox.Config{TokenSecret: secret, EVMRPC: node.RPCURL(),
		Runtime: solanart.Options{SlotDuration: 50 * time.Millisecond, SlotsPerEpoch: 32, FinalizationDepth: 4, VoteAccounts: 1}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sb.Close() })
	token, err := sandbox.MintToken(secret, "activities-evm", time.Hour)
	require.NoError(t, err)
	svc, err := apiclient.New(sb.URL(), apiclient.WithToken(token))
	require.NoError(t, err)

	c, err := evmchain.Dial(ctx, node.RPCURL())
	require.NoError(t, err)
	t.Cleanup(c.Close)
	network := evmchain.NewNetwork("dev", gethdev.ChainID, c, evmchain.NetworkOptions{})
	require.NoError(t, network.Verify(ctx))

	kr, err := makeKeyring(t.TempDir(), key)
	require.NoError(t, err)
	shares := make([]signerevm.ValidatorShare, len(d.Validators))
	for i, v := range d.Validators {
		shares[i] = signerevm.ValidatorShare{ValidatorID: v.ID, Address: v.Share}
	}
	s, err := signerevm.New(kr, signerevm.Policy{ChainID: gethdev.ChainID, POLToken: d.Token, StakeManager: d.StakeManager,
		ValidatorShares: shares, SlippageBps: 10, MaxGasLimit: 2_000_000}) // this geth prices new storage slots high
	require.NoError(t, err)
	a := &Activities{Networks: map[string]Network{"dev": {Chain: network, Signer: s, EventsHub: d.EventsHub}}, Keys: kr, Service: svc,
		ResendEvery: time.Second}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	return &realChain{node: node, d: d, sb: sb, key: key, staker: staker, a: a, env: env}
}

func (c *realChain) run(t *testing.T, activity, in, out any) error {
	t.Helper()
	v, err := c.env.ExecuteActivity(activity, in)
	if err != nil {
		return err
	}
	if out != nil {
		require.NoError(t, v.Get(out))
	}
	return nil
}

func (c *realChain) nonce(t *testing.T) uint64 {
	t.Helper()
	var n lease.Nonces
	require.NoError(t, c.run(t, c.a.EVMReadNonces, lease.ReadInput{Network: "dev", Address: c.staker.Hex()}, &n))
	return n.Latest
}

// signed builds and signs one step's build.
func (c *realChain) signed(t *testing.T, intent Intent, build int, prev *SignResult) SignResult {
	t.Helper()
	in := BuildInput{Network: "dev", Intent: intent, Build: build}
	if prev != nil {
		in.PrevMaxFeePerGas, in.PrevMaxPriorityFeePerGas = prev.MaxFeePerGas, prev.MaxPriorityFeePerGas
	}
	var b BuildResult
	require.NoError(t, c.run(t, c.a.EVMBuild, in, &b))
	var s SignResult
	require.NoError(t, c.run(t, c.a.EVMSign, SignInput{Network: "dev", Intent: b.Intent, UnsignedTransaction: b.UnsignedTransaction}, &s))
	return s
}

// send checks the nonce is fresh and broadcasts through the sandbox's endpoint 4.
func (c *realChain) send(t *testing.T, s SignResult, hashes []string) {
	t.Helper()
	require.NoError(t, c.run(t, c.a.EVMCheckFresh, FreshInput{Network: "dev", Staker: c.staker.Hex(), Nonce: s.Nonce, Hashes: hashes}, nil))
	var br BroadcastResult
	require.NoError(t, c.run(t, c.a.EVMBroadcast, BroadcastInput{Network: "dev", Staker: c.staker.Hex(), Hash: s.Hash, SignedTransaction: s.SignedTransaction}, &br))
	assert.Equal(t, s.Hash, br.Hash)
}

func (c *realChain) confirm(t *testing.T, s SignResult, hashes []string, replaceAfter time.Duration) (ConfirmResult, error) {
	t.Helper()
	var r ConfirmResult
	err := c.run(t, c.a.EVMConfirm, ConfirmInput{Network: "dev", Staker: c.staker.Hex(), Nonce: s.Nonce, Hashes: hashes,
		SignedTransaction: s.SignedTransaction, PollInterval: 200 * time.Millisecond, ReplaceAfter: replaceAfter}, &r)
	return r, err
}

// chainFee is what the chain says hash paid (its receipt's gas used × effective gas price).
func (c *realChain) chainFee(t *testing.T, hash string) string {
	t.Helper()
	rcpt, err := c.d.Client().TransactionReceipt(context.Background(), common.HexToHash(hash))
	require.NoError(t, err)
	return new(big.Int).Mul(new(big.Int).SetUint64(rcpt.GasUsed), rcpt.EffectiveGasPrice).String()
}

// TestRealChain runs the activities against a real geth --dev chain and the sandbox's endpoint 4:
// a delegate (approve + buyVoucherPOL) built, signed, broadcast and confirmed final; a build the
// service answered but never forwarded replaced under the same nonce; a nonce taken by a
// transaction stakeflow did not send refused, naming it.
func TestRealChain(t *testing.T) {
	c := startRealChain(t)
	amount := new(big.Int).Mul(big.NewInt(10), sbevm.POL)

	// One validator below id 8 (precision 100) and one from 8 (10**29): on a fresh share the
	// rate is the precision, so each wei buys one share whatever the precision, and the
	// product's arithmetic must give exactly that.
	for i, v := range c.d.Validators {
		share := v.Share
		t.Run(fmt.Sprintf("delegate to validator %d", v.ID), func(t *testing.T) {
			var d Delegation
			require.NoError(t, c.run(t, c.a.EVMReadDelegation, DelegationInput{Network: "dev", Staker: c.staker.Hex(), ValidatorShare: share.Hex(), Amount: amount.String()}, &d))
			assert.Equal(t, new(big.Int).Sub(new(big.Int).Mul(big.NewInt(1000), sbevm.POL), new(big.Int).Mul(big.NewInt(int64(i)), amount)).String(), d.Balance)
			assert.Equal(t, "0", d.Allowance)
			assert.Equal(t, amount.String(), d.ExpectedShares, "one share a wei at a fresh share")
			nonce := c.nonce(t)
			approve := Intent{Operation: signerevm.OpApprove, ChainID: gethdev.ChainID, Staker: c.staker, Amount: amount, Nonce: nonce}
			s := c.signed(t, approve, 1, nil)
			c.send(t, s, []string{s.Hash})
			r, err := c.confirm(t, s, []string{s.Hash}, time.Minute)
			require.NoError(t, err)
			assert.Equal(t, activities.OutcomeFinalized, r.Outcome)
			assert.Equal(t, s.Hash, r.Hash)
			assert.Equal(t, c.chainFee(t, s.Hash), r.Fee)
			allowance, err := c.d.Allowance(context.Background(), c.staker, c.d.StakeManager)
			require.NoError(t, err)
			assert.Equal(t, amount.String(), allowance.String())

			require.NoError(t, c.run(t, c.a.EVMReadDelegation, DelegationInput{Network: "dev", Staker: c.staker.Hex(), ValidatorShare: share.Hex(), Amount: amount.String()}, &d))
			delegate := Intent{Operation: signerevm.OpDelegate, ChainID: gethdev.ChainID, Staker: c.staker, ValidatorShare: share,
				Amount: amount, ExpectedShares: wei(t, d.ExpectedShares), Nonce: nonce + 1}
			s = c.signed(t, delegate, 1, nil)
			c.send(t, s, []string{s.Hash})
			r, err = c.confirm(t, s, []string{s.Hash}, time.Minute)
			require.NoError(t, err)
			assert.Equal(t, activities.OutcomeFinalized, r.Outcome)
			assert.Equal(t, c.chainFee(t, s.Hash), r.Fee)
			rcpt, err := c.d.Client().TransactionReceipt(context.Background(), common.HexToHash(s.Hash))
			require.NoError(t, err)
			minted, err := c.d.ParseShareMinted(rcpt, share)
			require.NoError(t, err)
			assert.Equal(t, d.ExpectedShares, minted.Tokens.String(), "ExpectedShares is what the contract minted")
			require.NoError(t, c.run(t, c.a.EVMReadDelegation, DelegationInput{Network: "dev", Staker: c.staker.Hex(), ValidatorShare: share.Hex()}, &d))
			assert.Equal(t, minted.Tokens.String(), d.Shares)
			assert.Equal(t, amount.String(), d.Staked)
		})
	}

	share := c.d.Validators[0].Share
	t.Run("a delegate beyond the allowance would revert, its reason first", func(t *testing.T) {
		// The delegate above spent the whole allowance: the node's gas estimate reverts in the
		// POL token with its Error(string).
		delegate := Intent{Operation: signerevm.OpDelegate, ChainID: gethdev.ChainID, Staker: c.staker, ValidatorShare: share,
			Amount: amount, ExpectedShares: big.NewInt(1), Nonce: c.nonce(t)}
		err := c.run(t, c.a.EVMBuild, BuildInput{Network: "dev", Intent: delegate, Build: 1}, nil)
		var ae *temporal.ApplicationError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, ErrWouldRevert, ae.Type())
		assert.True(t, strings.HasPrefix(ae.Message(), "ERC20: insufficient allowance (execution reverted); estimating the gas of delegate"), ae.Message())
		assert.ErrorContains(t, errors.Unwrap(ae), "eth_estimateGas", "the node's answer is the cause")
	})

	t.Run("dropped build replaced under the same nonce", func(t *testing.T) {
		require.NoError(t, c.sb.SetFaults(sandbox.FaultConfig{PolygonSendDropped: sandbox.LostResponse{Next: 1000}}))
		nonce := c.nonce(t)
		approve := Intent{Operation: signerevm.OpApprove, ChainID: gethdev.ChainID, Staker: c.staker, Amount: big.NewInt(1), Nonce: nonce}
		first := c.signed(t, approve, 1, nil)
		c.send(t, first, []string{first.Hash})
		r, err := c.confirm(t, first, []string{first.Hash}, 3*time.Second)
		require.NoError(t, err)
		assert.Equal(t, activities.OutcomeReplace, r.Outcome, "answered as sent, never forwarded: to be replaced")

		require.NoError(t, c.sb.SetFaults(sandbox.FaultConfig{}))
		second := c.signed(t, approve, 2, &first)
		assert.Equal(t, first.Nonce, second.Nonce)
		assert.NotEqual(t, first.Hash, second.Hash)
		hashes := []string{first.Hash, second.Hash}
		c.send(t, second, hashes)
		r, err = c.confirm(t, second, hashes, time.Minute)
		require.NoError(t, err)
		assert.Equal(t, activities.OutcomeFinalized, r.Outcome)
		assert.Equal(t, second.Hash, r.Hash)
		_, err = c.d.Client().TransactionReceipt(context.Background(), common.HexToHash(first.Hash))
		assert.Error(t, err, "the dropped build never reached the chain")
	})

	t.Run("sent through the worker's RPC", func(t *testing.T) {
		nonce := c.nonce(t)
		approve := Intent{Operation: signerevm.OpApprove, ChainID: gethdev.ChainID, Staker: c.staker, Amount: big.NewInt(5), Nonce: nonce}
		s := c.signed(t, approve, 1, nil)
		require.NoError(t, c.run(t, c.a.EVMCheckFresh, FreshInput{Network: "dev", Staker: c.staker.Hex(), Nonce: s.Nonce, Hashes: []string{s.Hash}}, nil))
		in := BroadcastInput{Network: "dev", Staker: c.staker.Hex(), Hash: s.Hash, SignedTransaction: s.SignedTransaction, Chain: "eigenlayer"}
		var br BroadcastResult
		require.NoError(t, c.run(t, c.a.EVMSendRPC, in, &br))
		assert.Equal(t, s.Hash, br.Hash)
		var r ConfirmResult
		require.NoError(t, c.run(t, c.a.EVMConfirm, ConfirmInput{Network: "dev", Staker: c.staker.Hex(), Nonce: s.Nonce, Hashes: []string{s.Hash},
			SignedTransaction: s.SignedTransaction, ResendRPC: true, PollInterval: 200 * time.Millisecond, ReplaceAfter: time.Minute}, &r))
		assert.Equal(t, activities.OutcomeFinalized, r.Outcome)
		assert.Equal(t, s.Hash, r.Hash)
		allowance, err := c.d.Allowance(context.Background(), c.staker, c.d.StakeManager)
		require.NoError(t, err)
		assert.Equal(t, "5", allowance.String(), "the chain ran the bytes sent")

		err = c.run(t, c.a.EVMSendRPC, in, nil)
		typ, nonRetryable := appErr(t, err)
		assert.Equal(t, activities.ErrBroadcastUncertain, typ, "geth's own refusal of bytes whose nonce is used: the chain decides")
		assert.True(t, nonRetryable)
		assert.Contains(t, err.Error(), "nonce too low")
	})

	t.Run("nonce taken by a stranger", func(t *testing.T) {
		nonce := c.nonce(t)
		approve := Intent{Operation: signerevm.OpApprove, ChainID: gethdev.ChainID, Staker: c.staker, Amount: big.NewInt(2), Nonce: nonce}
		ours := c.signed(t, approve, 1, nil)
		data, err := c.d.Pack(sbevm.ContractToken, "approve", c.d.StakeManager, big.NewInt(3))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		rcpt, err := c.d.Send(ctx, c.key, c.d.Token, data) // the same key, outside stakeflow
		require.NoError(t, err)
		_, err = c.node.WaitFinalized(ctx, rcpt.BlockNumber.Uint64())
		require.NoError(t, err)

		err = c.run(t, c.a.EVMCheckFresh, FreshInput{Network: "dev", Staker: c.staker.Hex(), Nonce: ours.Nonce, Hashes: []string{ours.Hash}}, nil)
		typ, nonRetryable := appErr(t, err)
		assert.Equal(t, lease.ErrNonceConflict, typ)
		assert.True(t, nonRetryable)
		assert.Contains(t, err.Error(), rcpt.TxHash.Hex(), "the stranger's transaction is named")

		r, err := c.confirm(t, ours, []string{ours.Hash}, time.Minute)
		require.NoError(t, err)
		assert.Equal(t, activities.OutcomeCannotLand, r.Outcome, "the chain's proof that ours can never land")
		assert.Equal(t, rcpt.TxHash.Hex(), r.Other, "the transaction that took the nonce is named")
		assert.Empty(t, r.Hash)
		assert.Contains(t, r.Error, rcpt.TxHash.Hex())
	})
}

// TestUnstakeLandsAfterACheckpointItWasNotEstimatedFor: a staker who delegated all the POL it held,
// its rewards paid out at that, unstakes; a checkpoint lands between the build and the block. The
// unstake then pays out that checkpoint's rewards, which creates the staker's POL balance: on
// this geth, which prices new state by the byte (EIP-8037), more gas than the node estimated plus
// 25%. The gas headroom covers it, and the unstake lands.
func TestUnstakeLandsAfterACheckpointItWasNotEstimatedFor(t *testing.T) {
	c := startRealChain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	share := c.d.Validators[0].Share
	outside := func(to common.Address, contract, method string, args ...any) {
		t.Helper()
		data, err := c.d.Pack(contract, method, args...)
		require.NoError(t, err)
		_, err = c.d.Send(ctx, c.key, to, data)
		require.NoError(t, err, method)
	}
	// The validator has paid rewards before, as every validator of a live chain has, and the
	// staker has unstaked before.
	hundred, ten := new(big.Int).Mul(big.NewInt(100), sbevm.POL), new(big.Int).Mul(big.NewInt(10), sbevm.POL)
	outside(c.d.Token, sbevm.ContractToken, "approve", c.d.StakeManager, new(big.Int).Mul(big.NewInt(2000), sbevm.POL))
	outside(share, sbevm.ContractValidatorShare, "buyVoucherPOL", hundred, hundred)
	require.NoError(t, c.d.AdvanceEpochs(ctx, 1))
	outside(share, sbevm.ContractValidatorShare, "sellVoucher_newPOL", ten, ten)
	// Then the staker delegates all it holds and the rewards paid out with it.
	held, err := c.d.TokenBalance(ctx, c.staker)
	require.NoError(t, err)
	rewards, err := c.d.LiquidRewards(ctx, share, c.staker)
	require.NoError(t, err)
	all := new(big.Int).Add(held, rewards)
	outside(share, sbevm.ContractValidatorShare, "buyVoucherPOL", all, all)
	held, err = c.d.TokenBalance(ctx, c.staker)
	require.NoError(t, err)
	require.Zero(t, held.Sign(), "the staker holds no POL")

	amount := ten
	var d Delegation
	require.NoError(t, c.run(t, c.a.EVMReadDelegation, DelegationInput{Network: "dev", Staker: c.staker.Hex(), ValidatorShare: share.Hex(), Amount: amount.String()}, &d))
	unstake := Intent{Operation: signerevm.OpUnstake, ChainID: gethdev.ChainID, Staker: c.staker, ValidatorShare: share,
		Amount: amount, ExpectedShares: wei(t, d.ExpectedShares), Nonce: c.nonce(t)}
	s := c.signed(t, unstake, 1, nil)
	require.NoError(t, c.d.AdvanceEpochs(ctx, 1))
	rewards, err = c.d.LiquidRewards(ctx, share, c.staker)
	require.NoError(t, err)
	require.Positive(t, rewards.Sign(), "the checkpoint accrued rewards the unstake pays out")

	c.send(t, s, []string{s.Hash})
	r, err := c.confirm(t, s, []string{s.Hash}, time.Minute)
	require.NoError(t, err)
	require.Equal(t, activities.OutcomeFinalized, r.Outcome, r.Error)
	held, err = c.d.TokenBalance(ctx, c.staker)
	require.NoError(t, err)
	assert.Equal(t, rewards.String(), held.String(), "the rewards were paid out")
	rcpt, err := c.d.Client().TransactionReceipt(ctx, common.HexToHash(s.Hash))
	require.NoError(t, err)
	tx, _, err := c.d.Client().TransactionByHash(ctx, common.HexToHash(s.Hash))
	require.NoError(t, err)
	estimate := tx.Gas() - DefaultGasHeadroom
	t.Logf("estimated %d gas, used %d, limit %d", estimate, rcpt.GasUsed, tx.Gas())
	assert.Greater(t, rcpt.GasUsed, estimate*(100+DefaultGasMarginPercent)/100,
		"the unstake used more than the estimate (%d) and its margin in percent", estimate)
}

func wei(t *testing.T, s string) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(s, 10)
	require.True(t, ok, "%q is not a number", s)
	return v
}
