package cosmos

import (
	"fmt"
	"slices"

	"github.com/stakeflow/stakeflow/amount"
	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/signer/cosmos/tx"
)

// Celestia's denomination, its decimals and its bech32 prefixes. Decimals: 1 TIA = 10^6 utia,
// the exponent of the display denom TIA over the base denom utia in celestia-app's bank denom
// metadata (the Celestia docs: "1 TIA = 1,000,000 utia").
const (
	Denom         = "utia"
	Decimals      = 6
	AccountPrefix = "celestia"
	ValoperPrefix = "celestiavaloper"
)

// Celestia networks of endpoint 3 (names from the catalogue, networks.Celestia).
const (
	NetworkMainnet = networks.CelestiaMainnet
	NetworkMocha   = networks.CelestiaMocha
)

// ChainID returns the chain id of a network (networks.Celestia).
func ChainID(network string) (string, error) {
	id, ok := networks.Celestia.ID(network)
	if !ok {
		return "", fmt.Errorf("%w: unknown Celestia network %q (want one of %v)", ErrIntent, network, networks.Celestia.Names())
	}
	return id, nil
}

// Operations.
const (
	OpDelegate        = "delegate"
	OpUndelegate      = "undelegate"
	OpRedelegate      = "redelegate"
	OpWithdrawRewards = "withdraw-rewards"
)

// Intent is what the operator asked for; the transaction must do exactly this.
type Intent struct {
	// Operation is one of OpDelegate, OpUndelegate, OpRedelegate, OpWithdrawRewards.
	Operation string `json:"operation"`
	// Network is celestia-mainnet-beta or celestia-mocha-testnet.
	Network string `json:"network"`
	// Delegator is the staker's celestia1... address, the key that signs.
	Delegator string `json:"delegator"`
	// Validator is the celestiavaloper1... validator (the source validator of a redelegation).
	Validator string `json:"validator"`
	// DstValidator is the destination validator of a redelegation.
	DstValidator string `json:"dstValidator,omitempty"`
	// Amount is the exact amount in utia (a decimal integer); empty for a reward withdrawal.
	Amount string `json:"amount,omitempty"`
	// TimeoutHeight is the last block height at which the transaction may be included
	// (TxBody.timeout_height): chosen by the build a bounded number of blocks ahead of the chain's
	// height, so that "cannot land" has a proof (the chain past it, the sequence unconsumed). The
	// signer signs only a transaction that carries exactly this height; 0 (none chosen) is refused.
	TimeoutHeight uint64 `json:"timeoutHeight,omitempty"`
}

// Validate checks the intent's shape: a known operation and network, valid bech32 addresses with
// the right prefixes, a positive integer amount where the operation moves tokens.
func (in Intent) Validate() error {
	if _, err := ChainID(in.Network); err != nil {
		return err
	}
	if _, err := tx.DecodeAddress(AccountPrefix, in.Delegator); err != nil {
		return fmt.Errorf("%w: delegator: %w", ErrIntent, err)
	}
	if _, err := tx.DecodeAddress(ValoperPrefix, in.Validator); err != nil {
		return fmt.Errorf("%w: validator: %w", ErrIntent, err)
	}
	switch in.Operation {
	case OpDelegate, OpUndelegate, OpRedelegate:
		if err := checkAmount(in.Amount); err != nil {
			return err
		}
	case OpWithdrawRewards:
		if in.Amount != "" {
			return fmt.Errorf("%w: a reward withdrawal takes no amount", ErrIntent)
		}
	default:
		return fmt.Errorf("%w: unknown operation %q", ErrIntent, in.Operation)
	}
	if in.Operation == OpRedelegate {
		if _, err := tx.DecodeAddress(ValoperPrefix, in.DstValidator); err != nil {
			return fmt.Errorf("%w: destination validator: %w", ErrIntent, err)
		}
		if in.DstValidator == in.Validator {
			return fmt.Errorf("%w: redelegation to the validator it comes from", ErrIntent)
		}
	} else if in.DstValidator != "" {
		return fmt.Errorf("%w: only a redelegation names a destination validator", ErrIntent)
	}
	return nil
}

// checkAmount accepts a positive whole number of utia under the amount package's rule (digits
// only, no leading zero).
func checkAmount(s string) error {
	a, err := amount.Parse(s)
	if err == nil {
		err = a.Positive()
	}
	if err != nil {
		return fmt.Errorf("%w: amount: want a positive whole number of utia: %w", ErrIntent, err)
	}
	return nil
}

// validators lists the validators an intent sends to.
func (in Intent) validators() []string {
	if in.Operation == OpRedelegate {
		return []string{in.Validator, in.DstValidator}
	}
	return []string{in.Validator}
}

// Policy bounds what the signer accepts beyond the intent.
type Policy struct {
	// Validators is the allow-list of celestiavaloper1... addresses; empty refuses every validator.
	Validators []string
	// MaxFee is the highest fee in utia.
	MaxFee uint64
	// MaxGas is the highest gas limit.
	MaxGas uint64
	// Memo is the only memo accepted (empty: none).
	Memo string
}

func (p Policy) allows(valoper string) bool { return slices.Contains(p.Validators, valoper) }
