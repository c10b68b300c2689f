package evm

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	evmchain "github.com/stakeflow/stakeflow/chain/evm"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// TestBuildCancelIsAHarmlessSelfTransferPricedOverTheBuildsSent: the cancel is a zero-value,
// data-less transfer from the staker to itself under the step's nonce, gas 21000, both fee caps
// 12.5% over the highest build sent (22 gwei, 2 gwei: 24.75 gwei, 2.25 gwei, hand-computed), and
// the signer accepts and signs exactly that.
func TestBuildCancelIsAHarmlessSelfTransferPricedOverTheBuildsSent(t *testing.T) {
	h := newHarness(t, signerevm.Policy{})
	h.chain.FeeQuote = &evmchain.Fees{BaseFee: gweis(10), Tip: gweis(2)}
	v, err := h.env.ExecuteActivity(h.a.EVMBuildCancel, CancelBuildInput{Network: "dev", Staker: h.staker.Hex(), Nonce: 7,
		PrevMaxFeePerGas: gweis(22).String(), PrevMaxPriorityFeePerGas: gweis(2).String()})
	require.NoError(t, err)
	var b CancelBuildResult
	require.NoError(t, v.Get(&b))
	tx := decodeUnsigned(t, b.UnsignedTransaction)
	assert.Equal(t, h.staker, *tx.To())
	assert.Zero(t, tx.Value().Sign())
	assert.Empty(t, tx.Data())
	assert.EqualValues(t, 7, tx.Nonce())
	assert.EqualValues(t, 21000, tx.Gas())
	assert.EqualValues(t, 1337, tx.ChainId().Int64())
	assert.Equal(t, "24750000000", tx.GasFeeCap().String())
	assert.Equal(t, "2250000000", tx.GasTipCap().String())

	v, err = h.env.ExecuteActivity(h.a.EVMSignCancel, CancelSignInput{Network: "dev", Intent: b.Intent, UnsignedTransaction: b.UnsignedTransaction})
	require.NoError(t, err)
	var s SignResult
	require.NoError(t, v.Get(&s))
	var signed types.Transaction
	require.NoError(t, signed.UnmarshalBinary(hexutil.MustDecode(s.SignedTransaction)))
	from, err := types.Sender(types.NewLondonSigner(big.NewInt(1337)), &signed)
	require.NoError(t, err)
	assert.Equal(t, h.staker, from)
	assert.Equal(t, signed.Hash().Hex(), s.Hash)
	assert.Equal(t, "519750000000000", s.MaxFee) // 24.75 gwei x 21000
	assert.Equal(t, "24750000000", s.MaxFeePerGas)

	// A cancel intent with fees other than the transaction's is refused, nothing signed.
	other := b.Intent
	other.MaxFeePerGas = gweis(30)
	_, err = h.env.ExecuteActivity(h.a.EVMSignCancel, CancelSignInput{Network: "dev", Intent: other, UnsignedTransaction: b.UnsignedTransaction})
	typ, nonRetryable := appErr(t, err)
	assert.Equal(t, "VerificationFailed", typ)
	assert.True(t, nonRetryable)
}

// TestBuildCancelOverTheCapsIsRefused: caps too low for the bump refuse the cancel, naming the cap.
func TestBuildCancelOverTheCapsIsRefused(t *testing.T) {
	h := newHarness(t, signerevm.Policy{MaxFeePerGas: gweis(24)})
	h.chain.FeeQuote = &evmchain.Fees{BaseFee: gweis(10), Tip: gweis(2)}
	_, err := h.env.ExecuteActivity(h.a.EVMBuildCancel, CancelBuildInput{Network: "dev", Staker: h.staker.Hex(), Nonce: 7,
		PrevMaxFeePerGas: gweis(22).String(), PrevMaxPriorityFeePerGas: gweis(2).String()})
	typ, nonRetryable := appErr(t, err)
	assert.Equal(t, ErrFeeCap, typ)
	assert.True(t, nonRetryable)
	assert.Contains(t, err.Error(), "maxFeePerGas cap")
}
