package evm

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/params"
)

// Caps applied when the policy leaves them at zero.
var (
	// DefaultMaxGasLimit is the gas-limit cap used when Policy.MaxGasLimit is 0. A Polygon
	// delegate, unstake or claim takes a few hundred thousand gas; 500,000 leaves a margin
	// without letting a builder buy a block's worth at our expense.
	DefaultMaxGasLimit uint64 = 500_000
	// DefaultMaxFeePerGas is the maxFeePerGas cap used when Policy.MaxFeePerGas is nil or 0:
	// 200 gwei.
	DefaultMaxFeePerGas = new(big.Int).Mul(big.NewInt(200), big.NewInt(params.GWei))
	// DefaultMaxTotalFee is the cap on maxFeePerGas × gas used when Policy.MaxTotalFee is nil
	// or 0: 0.02 ether.
	DefaultMaxTotalFee = new(big.Int).Mul(big.NewInt(2), big.NewInt(params.Ether/100))
)

// maxBps is 100% in basis points.
const maxBps = 10_000

// ValidatorShare is a Polygon validator's ValidatorShare contract, the target of every call but
// approve.
type ValidatorShare struct {
	// ValidatorID is the validator's id in the StakeManager.
	ValidatorID uint64
	// Address is the validator's ValidatorShare contract.
	Address common.Address
}

// Policy is what the operator allows beyond any single intent.
type Policy struct {
	// ChainID is the chain every transaction must be for (1 for Ethereum mainnet, where Polygon
	// staking lives; 11155111 for Sepolia). Required.
	ChainID uint64
	// POLToken is the POL ERC-20 token, the only target of approve. Required.
	POLToken common.Address
	// StakeManager is the StakeManager proxy, the only spender an approve may name. Required.
	StakeManager common.Address
	// ValidatorShares is the allow-list of ValidatorShare contracts. Every call but approve must
	// target the one its intent names, and that one must be on this list.
	ValidatorShares []ValidatorShare
	// MaxGasLimit caps the gas limit. 0 means DefaultMaxGasLimit.
	MaxGasLimit uint64
	// MaxFeePerGas caps maxFeePerGas, in wei. nil or 0 means DefaultMaxFeePerGas.
	MaxFeePerGas *big.Int
	// MaxTotalFee caps the most a transaction can pay, maxFeePerGas × gas limit, in wei. nil or
	// 0 means DefaultMaxTotalFee.
	MaxTotalFee *big.Int
	// SlippageBps is how far, in basis points of the intent's ExpectedShares, a delegate's
	// minSharesToMint may lie below and an unstake's maximumSharesToBurn above. 0 allows no
	// slippage: the bound must equal ExpectedShares. At most 10,000.
	SlippageBps uint32
}

// validate checks p and applies the defaults.
func (p Policy) validate() (Policy, map[common.Address]uint64, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrPolicy, fmt.Sprintf(format, args...))
	}
	if p.ChainID == 0 {
		return Policy{}, nil, bad("chain id is not set")
	}
	if p.POLToken == (common.Address{}) {
		return Policy{}, nil, bad("POL token address is not set")
	}
	if p.StakeManager == (common.Address{}) {
		return Policy{}, nil, bad("StakeManager address is not set")
	}
	if p.POLToken == p.StakeManager {
		return Policy{}, nil, bad("POL token and StakeManager are the same address %s", p.POLToken.Hex())
	}
	shares := make(map[common.Address]uint64, len(p.ValidatorShares))
	for i, v := range p.ValidatorShares {
		switch {
		case v.Address == (common.Address{}):
			return Policy{}, nil, bad("validator share #%d (validator %d) has no address", i, v.ValidatorID)
		case v.Address == p.POLToken || v.Address == p.StakeManager:
			return Policy{}, nil, bad("validator share #%d (validator %d) is the POL token or the StakeManager (%s)", i, v.ValidatorID, v.Address.Hex())
		}
		if id, dup := shares[v.Address]; dup {
			return Policy{}, nil, bad("validator share %s is listed twice (validators %d and %d)", v.Address.Hex(), id, v.ValidatorID)
		}
		shares[v.Address] = v.ValidatorID
	}
	p.ValidatorShares = append([]ValidatorShare(nil), p.ValidatorShares...)
	if p.MaxGasLimit == 0 {
		p.MaxGasLimit = DefaultMaxGasLimit
	}
	if p.MaxFeePerGas == nil || p.MaxFeePerGas.Sign() == 0 {
		p.MaxFeePerGas = new(big.Int).Set(DefaultMaxFeePerGas)
	} else {
		p.MaxFeePerGas = new(big.Int).Set(p.MaxFeePerGas)
	}
	if p.MaxTotalFee == nil || p.MaxTotalFee.Sign() == 0 {
		p.MaxTotalFee = new(big.Int).Set(DefaultMaxTotalFee)
	} else {
		p.MaxTotalFee = new(big.Int).Set(p.MaxTotalFee)
	}
	if p.MaxFeePerGas.Sign() < 0 || p.MaxTotalFee.Sign() < 0 {
		return Policy{}, nil, bad("negative fee cap")
	}
	if p.SlippageBps > maxBps {
		return Policy{}, nil, bad("slippage of %d basis points is over 100%%", p.SlippageBps)
	}
	return p, shares, nil
}
