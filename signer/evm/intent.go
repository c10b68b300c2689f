package evm

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
)

// Operation names a Polygon staking call.
type Operation string

// Operations a Signer can verify.
const (
	// OpApprove is ERC-20 approve on the POL token, with the StakeManager as spender.
	OpApprove Operation = "approve"
	// OpDelegate is ValidatorShare buyVoucherPOL(amount, minSharesToMint).
	OpDelegate Operation = "delegate"
	// OpUnstake is ValidatorShare sellVoucher_newPOL(claimAmount, maximumSharesToBurn).
	OpUnstake Operation = "unstake"
	// OpClaim is ValidatorShare unstakeClaimTokens_newPOL(unbondNonce).
	OpClaim Operation = "claim"
	// OpWithdrawRewards is ValidatorShare withdrawRewardsPOL().
	OpWithdrawRewards Operation = "withdraw-rewards"
	// OpRestake is ValidatorShare restakePOL().
	OpRestake Operation = "restake"
)

// Method returns the ABI method op calls, or "" for an unknown operation.
func (op Operation) Method() string {
	switch op {
	case OpApprove:
		return MethodApprove
	case OpDelegate:
		return MethodBuyVoucherPOL
	case OpUnstake:
		return MethodSellVoucherNewPOL
	case OpClaim:
		return MethodUnstakeClaimTokensNewPOL
	case OpWithdrawRewards:
		return MethodWithdrawRewardsPOL
	case OpRestake:
		return MethodRestakePOL
	}
	return ""
}

// Intent is what the caller asked for: the transaction must do exactly this, nothing more. All
// amounts are in wei (POL has 18 decimals).
//
// The values a builder chooses (GasLimit, MaxFeePerGas, MaxPriorityFeePerGas, MinSharesToMint,
// MaximumSharesToBurn) may be left unset: then the transaction's value is taken and checked
// against the policy. When set, the transaction must carry exactly that value (and it is
// checked against the policy too). Nonce is always exact.
type Intent struct {
	// Operation is the call asked for.
	Operation Operation `json:"operation"`
	// ChainID is the chain the transaction is for; it must be the policy's.
	ChainID uint64 `json:"chainId"`
	// Staker is the sender: the key that signs.
	Staker common.Address `json:"staker"`
	// Amount is, for approve, the exact allowance granted to the StakeManager; for delegate, the
	// exact POL delegated; for unstake, the exact POL claimed back. Unset for the others.
	Amount *big.Int `json:"amount,omitempty"`
	// ValidatorShare is the validator's ValidatorShare contract, on the policy's allow-list.
	// Required for every operation but approve, where it must be unset.
	ValidatorShare common.Address `json:"validatorShare"`
	// UnbondNonce is, for claim, the unbond to claim (from 1). Unset for the others.
	UnbondNonce *big.Int `json:"unbondNonce,omitempty"`
	// ExpectedShares is, for delegate and unstake, the shares Amount is worth at the validator's
	// exchange rate as the caller read it from the chain: the reference of the slippage bounds.
	// Required for delegate and unstake, unset for the others.
	ExpectedShares *big.Int `json:"expectedShares,omitempty"`

	// Nonce is the sender's nonce given by the address's nonce lease; the transaction must carry it.
	Nonce uint64 `json:"nonce"`
	// GasLimit, when not 0, is the exact gas limit.
	GasLimit uint64 `json:"gasLimit,omitempty"`
	// MaxFeePerGas, when set, is the exact maxFeePerGas in wei.
	MaxFeePerGas *big.Int `json:"maxFeePerGas,omitempty"`
	// MaxPriorityFeePerGas, when set, is the exact maxPriorityFeePerGas in wei.
	MaxPriorityFeePerGas *big.Int `json:"maxPriorityFeePerGas,omitempty"`
	// MinSharesToMint, when set, is a delegate's exact minSharesToMint.
	MinSharesToMint *big.Int `json:"minSharesToMint,omitempty"`
	// MaximumSharesToBurn, when set, is an unstake's exact maximumSharesToBurn.
	MaximumSharesToBurn *big.Int `json:"maximumSharesToBurn,omitempty"`
}

// checkIntent refuses an intent that is incomplete, malformed or for another chain, and an
// intent naming a validator share off the allow-list.
func (s *Signer) checkIntent(in *Intent) error {
	method := in.Operation.Method()
	if method == "" {
		return intentErr("unknown operation %q", in.Operation)
	}
	if in.ChainID != s.policy.ChainID {
		return intentErr("chain id %d is not the policy's chain id %d", in.ChainID, s.policy.ChainID)
	}
	if in.Staker == (common.Address{}) {
		return intentErr("no staker")
	}
	for name, v := range map[string]*big.Int{
		"amount": in.Amount, "unbondNonce": in.UnbondNonce, "expectedShares": in.ExpectedShares,
		"maxFeePerGas": in.MaxFeePerGas, "maxPriorityFeePerGas": in.MaxPriorityFeePerGas,
		"minSharesToMint": in.MinSharesToMint, "maximumSharesToBurn": in.MaximumSharesToBurn,
	} {
		if v != nil && (v.Sign() < 0 || v.Cmp(math.MaxBig256) > 0) {
			return intentErr("%s %s is not a uint256", name, v)
		}
	}
	needs := map[Operation][]string{
		OpApprove:  {"amount"},
		OpDelegate: {"amount", "expectedShares", "validatorShare"},
		OpUnstake:  {"amount", "expectedShares", "validatorShare"},
		OpClaim:    {"unbondNonce", "validatorShare"},
	}[in.Operation]
	if in.Operation == OpWithdrawRewards || in.Operation == OpRestake {
		needs = []string{"validatorShare"}
	}
	set := map[string]bool{
		"amount":              in.Amount != nil && in.Amount.Sign() > 0,
		"unbondNonce":         in.UnbondNonce != nil && in.UnbondNonce.Sign() > 0,
		"expectedShares":      in.ExpectedShares != nil && in.ExpectedShares.Sign() > 0,
		"validatorShare":      in.ValidatorShare != (common.Address{}),
		"minSharesToMint":     in.MinSharesToMint != nil,
		"maximumSharesToBurn": in.MaximumSharesToBurn != nil,
	}
	for _, n := range needs {
		if !set[n] {
			return intentErr("%s needs a positive %s", in.Operation, n)
		}
	}
	allowed := map[string]bool{}
	for _, n := range needs {
		allowed[n] = true
	}
	allowed["minSharesToMint"] = in.Operation == OpDelegate
	allowed["maximumSharesToBurn"] = in.Operation == OpUnstake
	for _, n := range []string{"amount", "unbondNonce", "expectedShares", "validatorShare", "minSharesToMint", "maximumSharesToBurn"} {
		if set[n] && !allowed[n] {
			return intentErr("%s takes no %s", in.Operation, n)
		}
	}
	if in.Operation == OpApprove && in.Amount.Cmp(math.MaxBig256) == 0 {
		return intentErr("approve of 2^256-1 (an unlimited allowance) is never signed")
	}
	if in.Operation != OpApprove {
		if _, ok := s.shares[in.ValidatorShare]; !ok {
			return mismatch("validator share", fmt.Sprintf("one on the allow-list %s", s.allowList()), in.ValidatorShare.Hex())
		}
	}
	return nil
}
