package evm

import (
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	evmchain "github.com/stakeflow/stakeflow/chain/evm"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// TestChooseFees checks the fee arithmetic against numbers computed by hand: 2 × base + tip on a
// first build, lowered to the caps; a replacement at least 12.5% (rounded up) over both of the
// replaced transaction's caps, refused when the caps stop the bump.
func TestChooseFees(t *testing.T) {
	caps := FeeCaps{MaxFeePerGas: gweis(200), MaxTotalFee: new(big.Int).Mul(big.NewInt(2), big.NewInt(1e16))} // 200 gwei, 0.02 ether
	tests := []struct {
		name             string
		base, tip        *big.Int
		gas              uint64
		prev             *Fees
		caps             FeeCaps
		wantFee, wantTip *big.Int
		wantErr          string
	}{
		{name: "first: 2 x 10 gwei + 2 gwei", base: gweis(10), tip: gweis(2), gas: 100_000, caps: caps,
			wantFee: gweis(22), wantTip: gweis(2)},
		{name: "first: lowered to the per-gas cap", base: gweis(120), tip: gweis(2), gas: 100_000, caps: caps,
			wantFee: gweis(200), wantTip: gweis(2)},
		{name: "first: lowered to the total cap over gas (1e15 / 100000 = 10 gwei)", base: gweis(6), tip: gweis(1), gas: 100_000,
			caps: FeeCaps{MaxFeePerGas: gweis(200), MaxTotalFee: big.NewInt(1e15)}, wantFee: gweis(10), wantTip: gweis(1)},
		{name: "first: base fee above the cap", base: gweis(201), tip: gweis(1), gas: 100_000, caps: caps,
			wantErr: "maxFeePerGas cap 200000000000 wei"},
		{name: "replacement: 22 gwei x 9/8 = 24.75 gwei, 2 gwei x 9/8 = 2.25 gwei", base: gweis(10), tip: gweis(2), gas: 100_000,
			prev: &Fees{MaxFeePerGas: gweis(22), MaxPriorityFeePerGas: gweis(2)}, caps: caps,
			wantFee: big.NewInt(24_750_000_000), wantTip: big.NewInt(2_250_000_000)},
		{name: "replacement: rounded up (100 -> 113, 1 -> 2)", base: big.NewInt(1), tip: big.NewInt(1), gas: 21_000,
			prev: &Fees{MaxFeePerGas: big.NewInt(100), MaxPriorityFeePerGas: big.NewInt(1)}, caps: caps,
			wantFee: big.NewInt(113), wantTip: big.NewInt(2)},
		{name: "replacement: the chain asks more than the bump", base: gweis(50), tip: gweis(3), gas: 100_000,
			prev: &Fees{MaxFeePerGas: gweis(22), MaxPriorityFeePerGas: gweis(2)}, caps: caps,
			wantFee: gweis(103), wantTip: gweis(3)},
		{name: "replacement: the bump is over the cap", base: gweis(10), tip: gweis(2), gas: 100_000,
			prev: &Fees{MaxFeePerGas: gweis(190), MaxPriorityFeePerGas: gweis(2)}, caps: caps,
			wantErr: "at least 213750000000 wei (12.5% over 190000000000 wei), above the policy's maxFeePerGas cap 200000000000 wei"},
		{name: "replacement: the bump is over the total cap", base: gweis(1), tip: gweis(1), gas: 100_000,
			prev: &Fees{MaxFeePerGas: gweis(10), MaxPriorityFeePerGas: gweis(1)}, caps: FeeCaps{MaxFeePerGas: gweis(200), MaxTotalFee: big.NewInt(1e15)},
			wantErr: "above the policy's max total fee 1000000000000000 wei over gas 100000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ChooseFees(tt.base, tt.tip, tt.gas, tt.prev, tt.caps)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantFee.String(), got.MaxFeePerGas.String(), "maxFeePerGas")
			assert.Equal(t, tt.wantTip.String(), got.MaxPriorityFeePerGas.String(), "maxPriorityFeePerGas")
			if tt.prev != nil {
				// What geth's pool requires of a replacement (legacypool: both caps >= old x 110 / 100).
				for _, pair := range [][2]*big.Int{{got.MaxFeePerGas, tt.prev.MaxFeePerGas}, {got.MaxPriorityFeePerGas, tt.prev.MaxPriorityFeePerGas}} {
					need := new(big.Int).Div(new(big.Int).Mul(pair[1], big.NewInt(110)), big.NewInt(100))
					assert.GreaterOrEqual(t, pair[0].Cmp(need), 0, "%s is not 10%% over %s", pair[0], pair[1])
				}
			}
		})
	}
}

// TestDefaultGasHeadroom: two new storage slots at EIP-8037's price (64 bytes a slot at 1,530 gas a
// byte, the EIP's numbers) and 50,000 gas of execution.
func TestDefaultGasHeadroom(t *testing.T) {
	assert.EqualValues(t, 245_840, DefaultGasHeadroom)
}

func TestGasLimit(t *testing.T) {
	got, err := GasLimit(100_000, 25, 10_000, 500_000)
	require.NoError(t, err)
	assert.EqualValues(t, 125_000, got)
	got, err = GasLimit(100_000, 25, 200_000, 500_000)
	require.NoError(t, err)
	assert.EqualValues(t, 300_000, got, "the headroom when it is more than the margin")
	got, err = GasLimit(450_000, 25, 10_000, 500_000)
	require.NoError(t, err)
	assert.EqualValues(t, 500_000, got, "the margin stops at the cap")
	_, err = GasLimit(500_001, 25, 10_000, 500_000)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "500001 gas, above the policy's gas limit cap 500000")
}

// TestSharesBounds: the bounds the signer accepts (slippage in basis points, rounded down).
func TestSharesBounds(t *testing.T) {
	lo, hi := SharesBounds(big.NewInt(1000), 50)
	assert.Equal(t, "995", lo.String())
	assert.Equal(t, "1005", hi.String())
	lo, hi = SharesBounds(big.NewInt(999), 1) // 999 x 1 / 10000 = 0.0999 -> 0
	assert.Equal(t, "999", lo.String())
	assert.Equal(t, "999", hi.String())
}

// TestExpectedShares: amount × precision / rate, rounded down, as ValidatorShare._buyShares does.
func TestExpectedShares(t *testing.T) {
	p29 := new(big.Int).Exp(big.NewInt(10), big.NewInt(29), nil)
	rate := new(big.Int).Mul(big.NewInt(15), new(big.Int).Exp(big.NewInt(10), big.NewInt(28), nil)) // 1.5
	assert.Equal(t, "666666666666666666", ExpectedShares(big.NewInt(1e18), rate, p29).String())
	assert.Equal(t, "1000000000000000000", ExpectedShares(big.NewInt(1e18), p29, p29).String())
	assert.Equal(t, "0", ExpectedShares(big.NewInt(1e18), new(big.Int), p29).String())
}

func decodeUnsigned(t *testing.T, s string) *types.Transaction {
	t.Helper()
	var tx types.Transaction
	require.NoError(t, tx.UnmarshalBinary(hexutil.MustDecode(s)))
	return &tx
}

func delegateIntent(staker common.Address) Intent {
	return Intent{Operation: signerevm.OpDelegate, ChainID: 1337, Staker: staker, ValidatorShare: shareA,
		Amount: big.NewInt(5e18), ExpectedShares: big.NewInt(5e18), Nonce: 7}
}

// TestBuildDelegateSignsUnderTheSigner builds a delegate from the chain's fees and estimate, checks
// every chosen field against hand-computed values, and has signer/evm (the exact-expectation
// verifier) accept and sign it.
func TestBuildDelegateSignsUnderTheSigner(t *testing.T) {
	h := newHarness(t, signerevm.Policy{SlippageBps: 50})
	h.chain.FeeQuote = &evmchain.Fees{BaseFee: gweis(10), Tip: gweis(2)}
	h.chain.Gas = 100_000
	v, err := h.env.ExecuteActivity(h.a.EVMBuild, BuildInput{Network: "dev", Intent: delegateIntent(h.staker), Build: 1})
	require.NoError(t, err)
	var b BuildResult
	require.NoError(t, v.Get(&b))
	tx := decodeUnsigned(t, b.UnsignedTransaction)
	assert.EqualValues(t, types.DynamicFeeTxType, tx.Type())
	assert.Equal(t, shareA, *tx.To())
	assert.EqualValues(t, 1337, tx.ChainId().Int64())
	assert.EqualValues(t, 7, tx.Nonce())
	// 100,000 estimated + DefaultGasHeadroom (2 x 64 x 1530 + 50,000 = 245,840), more than 25%.
	assert.EqualValues(t, 345_840, tx.Gas())
	assert.Equal(t, gweis(22).String(), tx.GasFeeCap().String())
	assert.Equal(t, gweis(2).String(), tx.GasTipCap().String())
	assert.Zero(t, tx.Value().Sign())
	// buyVoucherPOL(5e18, 5e18 - 5e18 x 50 / 10000 = 4975000000000000000): selector 0xe4457a8a.
	assert.Equal(t, "0xe4457a8a"+
		"0000000000000000000000000000000000000000000000004563918244f40000"+
		"000000000000000000000000000000000000000000000000450ac0242d918000", hexutil.Encode(tx.Data()))
	assert.Equal(t, "4975000000000000000", b.Intent.MinSharesToMint.String())
	assert.EqualValues(t, 345_840, b.Intent.GasLimit)
	require.Len(t, h.chain.Estimated, 1)
	assert.Equal(t, h.staker, h.chain.Estimated[0].From)

	v, err = h.env.ExecuteActivity(h.a.EVMSign, SignInput{Network: "dev", Intent: b.Intent, UnsignedTransaction: b.UnsignedTransaction})
	require.NoError(t, err)
	var s SignResult
	require.NoError(t, v.Get(&s))
	var signed types.Transaction
	require.NoError(t, signed.UnmarshalBinary(hexutil.MustDecode(s.SignedTransaction)))
	from, err := types.Sender(types.NewLondonSigner(big.NewInt(1337)), &signed)
	require.NoError(t, err)
	assert.Equal(t, h.staker, from)
	assert.Equal(t, signed.Hash().Hex(), s.Hash)
	assert.EqualValues(t, 7, s.Nonce)
	assert.Equal(t, "7608480000000000", s.MaxFee) // 22 gwei x 345840
	assert.Equal(t, "22000000000", s.MaxFeePerGas)
	assert.Equal(t, "2000000000", s.MaxPriorityFeePerGas)
}

// TestBuildApprove: an approve goes to the POL token with the StakeManager as spender.
func TestBuildApprove(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	h.chain.FeeQuote = &evmchain.Fees{BaseFee: gweis(1), Tip: gweis(1)}
	h.chain.Gas = 40_000
	in := Intent{Operation: signerevm.OpApprove, ChainID: 1337, Staker: h.staker, Amount: big.NewInt(3), Nonce: 0}
	v, err := h.env.ExecuteActivity(h.a.EVMBuild, BuildInput{Network: "dev", Intent: in, Build: 1})
	require.NoError(t, err)
	var b BuildResult
	require.NoError(t, v.Get(&b))
	tx := decodeUnsigned(t, b.UnsignedTransaction)
	assert.Equal(t, polToken, *tx.To())
	assert.Equal(t, "0x095ea7b3"+strings.Repeat("0", 24)+strings.TrimPrefix(strings.ToLower(stakeManager.Hex()), "0x")+strings.Repeat("0", 63)+"3", hexutil.Encode(tx.Data()))
	_, err = h.env.ExecuteActivity(h.a.EVMSign, SignInput{Network: "dev", Intent: b.Intent, UnsignedTransaction: b.UnsignedTransaction})
	require.NoError(t, err)
}

// TestRebuildBumpsFees: build 2 replaces build 1 with both caps 12.5% higher, and the signer
// signs it.
func TestRebuildBumpsFees(t *testing.T) {
	h := newHarness(t, signerevm.Policy{SlippageBps: 50})
	h.chain.FeeQuote = &evmchain.Fees{BaseFee: gweis(10), Tip: gweis(2)}
	h.chain.Gas = 100_000
	v, err := h.env.ExecuteActivity(h.a.EVMBuild, BuildInput{Network: "dev", Intent: delegateIntent(h.staker), Build: 2,
		PrevMaxFeePerGas: "22000000000", PrevMaxPriorityFeePerGas: "2000000000"})
	require.NoError(t, err)
	var b BuildResult
	require.NoError(t, v.Get(&b))
	tx := decodeUnsigned(t, b.UnsignedTransaction)
	assert.Equal(t, "24750000000", tx.GasFeeCap().String())
	assert.Equal(t, "2250000000", tx.GasTipCap().String())
	assert.EqualValues(t, 7, tx.Nonce(), "a replacement keeps the nonce")
	_, err = h.env.ExecuteActivity(h.a.EVMSign, SignInput{Network: "dev", Intent: b.Intent, UnsignedTransaction: b.UnsignedTransaction})
	require.NoError(t, err)
}

// TestBuildRefusals: the caps stopping a bump, a rebuild without the replaced fees, a call the
// node says reverts, a share off the allow-list: each non-retryable and named.
func TestBuildRefusals(t *testing.T) {
	h := newHarness(t, signerevm.Policy{MaxFeePerGas: gweis(23)})
	h.chain.FeeQuote = &evmchain.Fees{BaseFee: gweis(10), Tip: gweis(2)}
	h.chain.Gas = 100_000
	_, err := h.env.ExecuteActivity(h.a.EVMBuild, BuildInput{Network: "dev", Intent: delegateIntent(h.staker), Build: 2,
		PrevMaxFeePerGas: "22000000000", PrevMaxPriorityFeePerGas: "2000000000"})
	typ, nonRetryable := appErr(t, err)
	assert.Equal(t, ErrFeeCap, typ)
	assert.True(t, nonRetryable)
	assert.Contains(t, err.Error(), "maxFeePerGas cap 23000000000 wei")

	_, err = h.env.ExecuteActivity(h.a.EVMBuild, BuildInput{Network: "dev", Intent: delegateIntent(h.staker), Build: 2})
	typ, nonRetryable = appErr(t, err)
	assert.Equal(t, activities.ErrInvalidInput, typ)
	assert.True(t, nonRetryable)

	h.chain.GasErr = &evmchain.RPCError{Method: "eth_estimateGas", Err: &evmchain.RevertError{Reason: "Too much slippage", Replayed: true}}
	_, err = h.env.ExecuteActivity(h.a.EVMBuild, BuildInput{Network: "dev", Intent: delegateIntent(h.staker), Build: 1})
	typ, nonRetryable = appErr(t, err)
	assert.Equal(t, ErrWouldRevert, typ)
	assert.True(t, nonRetryable)
	assert.Contains(t, err.Error(), "Too much slippage")
	var ae *temporal.ApplicationError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "Too much slippage (execution reverted); estimating the gas of delegate (nonce 7)", ae.Message(), "the reason first")
	h.chain.GasErr = nil

	off := delegateIntent(h.staker)
	off.ValidatorShare = shareOff
	_, err = h.env.ExecuteActivity(h.a.EVMBuild, BuildInput{Network: "dev", Intent: off, Build: 1})
	typ, _ = appErr(t, err)
	assert.Equal(t, activities.ErrPolicy, typ)
	assert.Contains(t, err.Error(), shareOff.Hex())
}

// TestSignRefusals: a transaction that is not the intent's is ErrVerificationFailed, a staker the
// worker holds no key for ErrUnknownKey; both non-retryable.
func TestSignRefusals(t *testing.T) {
	h := newHarness(t, signerevm.Policy{SlippageBps: 50})
	h.chain.FeeQuote = &evmchain.Fees{BaseFee: gweis(10), Tip: gweis(2)}
	h.chain.Gas = 100_000
	v, err := h.env.ExecuteActivity(h.a.EVMBuild, BuildInput{Network: "dev", Intent: delegateIntent(h.staker), Build: 1})
	require.NoError(t, err)
	var b BuildResult
	require.NoError(t, v.Get(&b))

	other := b.Intent
	other.Amount = big.NewInt(6e18)
	_, err = h.env.ExecuteActivity(h.a.EVMSign, SignInput{Network: "dev", Intent: other, UnsignedTransaction: b.UnsignedTransaction})
	typ, nonRetryable := appErr(t, err)
	assert.Equal(t, activities.ErrVerificationFailed, typ)
	assert.True(t, nonRetryable)
	assert.Contains(t, err.Error(), "delegate amount")

	stranger := b.Intent
	stranger.Staker = common.HexToAddress("0x00000000000000000000000000000000000000e5")
	_, err = h.env.ExecuteActivity(h.a.EVMSign, SignInput{Network: "dev", Intent: stranger, UnsignedTransaction: b.UnsignedTransaction})
	typ, nonRetryable = appErr(t, err)
	assert.Equal(t, activities.ErrUnknownKey, typ)
	assert.True(t, nonRetryable)
	assert.NotContains(t, err.Error(), "test-pass")
}

// TestBuildRefusesWhatTheStakerCannotPay: a first build whose most expensive outcome (gas limit x
// maxFeePerGas: (100,000 estimated + 245,840 headroom) x 22 gwei, computed by hand) exceeds the staker's ether is refused as
// InsufficientFunds, naming both; one wei less than the cost is refused, the cost itself is not. A
// replacement is never refused for funds: the transaction it replaces may still land.
func TestBuildRefusesWhatTheStakerCannotPay(t *testing.T) {
	h := newHarness(t, signerevm.Policy{SlippageBps: 50})
	h.chain.FeeQuote = &evmchain.Fees{BaseFee: gweis(10), Tip: gweis(2)}
	h.chain.Gas = 100_000
	cost := big.NewInt(7_608_480_000_000_000) // 0.00760848 ether
	h.chain.Funds = new(big.Int).Sub(cost, big.NewInt(1))
	_, err := h.env.ExecuteActivity(h.a.EVMBuild, BuildInput{Network: "dev", Intent: delegateIntent(h.staker), Build: 1})
	typ, nonRetryable := appErr(t, err)
	assert.Equal(t, activities.ErrInsufficientFunds, typ)
	assert.True(t, nonRetryable)
	var ae *temporal.ApplicationError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "insufficient funds: staker "+h.staker.Hex()+" holds 0.007608479999999999 ETH, the delegate may pay up to 0.00760848 ETH for gas (345840 gas at 22 gwei at most); nothing was signed", ae.Message())

	h.chain.Funds = cost
	_, err = h.env.ExecuteActivity(h.a.EVMBuild, BuildInput{Network: "dev", Intent: delegateIntent(h.staker), Build: 1})
	require.NoError(t, err)

	h.chain.Funds = big.NewInt(0)
	_, err = h.env.ExecuteActivity(h.a.EVMBuild, BuildInput{Network: "dev", Intent: delegateIntent(h.staker), Build: 2,
		PrevMaxFeePerGas: "22000000000", PrevMaxPriorityFeePerGas: "2000000000"})
	require.NoError(t, err)
}
