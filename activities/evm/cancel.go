package evm

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// CancelBuildInput asks for the cancel transaction of a step: the nonce it holds and the highest
// fee caps among the builds it sent, which the cancel must outbid.
type CancelBuildInput struct {
	Network                  string `json:"network"`
	Staker                   string `json:"staker"`
	Nonce                    uint64 `json:"nonce"`
	PrevMaxFeePerGas         string `json:"prevMaxFeePerGas"`
	PrevMaxPriorityFeePerGas string `json:"prevMaxPriorityFeePerGas"`
}

// CancelBuildResult is the unsigned cancel transaction and the intent it was built from.
type CancelBuildResult struct {
	UnsignedTransaction string                 `json:"unsignedTransaction"`
	Intent              signerevm.CancelIntent `json:"intent"`
}

// CancelSignInput is a cancel transaction to verify and sign.
type CancelSignInput struct {
	Network             string                 `json:"network"`
	Intent              signerevm.CancelIntent `json:"intent"`
	UnsignedTransaction string                 `json:"unsignedTransaction"`
}

// EVMBuildCancel builds, locally, the transaction that takes a sent nonce back when its
// operation is cancelled: a zero-value transfer from the staker to itself, without data, gas
// 21000, under the step's nonce, its fees raised over the highest of the builds sent by at least
// what the pool requires (ChooseFees: 12.5%, over go-ethereum's 10%) and under the policy's caps.
// Caps too low for the bump are ErrFeeCap, non-retryable, naming the cap: the step then follows
// what was sent.
func (a *Activities) EVMBuildCancel(ctx context.Context, in CancelBuildInput) (CancelBuildResult, error) {
	n, err := a.network(in.Network)
	if err != nil {
		return CancelBuildResult{}, err
	}
	staker, err := address("staker", in.Staker)
	if err != nil {
		return CancelBuildResult{}, err
	}
	prev, err := prevFees(BuildInput{Build: 2, PrevMaxFeePerGas: in.PrevMaxFeePerGas, PrevMaxPriorityFeePerGas: in.PrevMaxPriorityFeePerGas})
	if err != nil {
		return CancelBuildResult{}, err
	}
	p := n.Signer.Policy()
	chainFees, err := n.Chain.Fees(ctx)
	if err != nil {
		return CancelBuildResult{}, chainErr("fees", err)
	}
	fees, err := ChooseFees(chainFees.BaseFee, chainFees.Tip, signerevm.CancelGas, prev, FeeCaps{MaxFeePerGas: p.MaxFeePerGas, MaxTotalFee: p.MaxTotalFee})
	if err != nil {
		return CancelBuildResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("cancel under nonce %d: %v; no cancel was signed", in.Nonce, err), ErrFeeCap, nil)
	}
	intent := signerevm.CancelIntent{ChainID: p.ChainID, Staker: staker, Nonce: in.Nonce,
		MaxFeePerGas: fees.MaxFeePerGas, MaxPriorityFeePerGas: fees.MaxPriorityFeePerGas,
		PrevMaxFeePerGas: prev.MaxFeePerGas, PrevMaxPriorityFeePerGas: prev.MaxPriorityFeePerGas}
	raw, err := signerevm.CancelTx(p.ChainID, intent).MarshalBinary()
	if err != nil {
		return CancelBuildResult{}, invalid(fmt.Sprintf("encoding the cancel: %v", err))
	}
	activity.GetLogger(ctx).Info("Built the cancel", "nonce", in.Nonce,
		"maxFeePerGas", fees.MaxFeePerGas.String(), "maxPriorityFeePerGas", fees.MaxPriorityFeePerGas.String())
	return CancelBuildResult{UnsignedTransaction: hexutil.Encode(raw), Intent: intent}, nil
}

// EVMSignCancel verifies the cancel transaction by exact expectation (signer/evm's SignCancel)
// and signs it. Local activity. A transaction that does not match is ErrVerificationFailed,
// non-retryable, nothing signed.
func (a *Activities) EVMSignCancel(ctx context.Context, in CancelSignInput) (SignResult, error) {
	n, err := a.network(in.Network)
	if err != nil {
		return SignResult{}, err
	}
	signed, err := verifyAndSign(ctx, "cancel", "cancel", in.UnsignedTransaction,
		func(raw []byte) (*signerevm.Signed, error) { return n.Signer.SignCancel(ctx, in.Intent, raw) })
	if err != nil {
		return SignResult{}, err
	}
	return SignResult{Hash: signed.Hash.Hex(), SignedTransaction: signed.Transaction, Nonce: signed.Nonce, MaxFee: signed.MaxFee.String(),
		MaxFeePerGas: in.Intent.MaxFeePerGas.String(), MaxPriorityFeePerGas: in.Intent.MaxPriorityFeePerGas.String()}, nil
}
