package sandbox

import (
	"fmt"
	"sync/atomic"
)

// HostileMode makes the transaction-building endpoints (stake, unstake,
// withdraw) return transactions that do not match the request while their
// extraData still describes the honest transaction. The zero value is honest.
type HostileMode string

// Hostile modes. A mode that has no meaning for an endpoint leaves that
// endpoint honest (for example other-recipient only changes withdraw).
const (
	// HostileNone builds honest transactions.
	HostileNone HostileMode = ""
	// HostileLamportsToStranger appends a System transfer from the staker to
	// a stranger (stake, unstake, withdraw).
	HostileLamportsToStranger HostileMode = "lamports-to-stranger"
	// HostileOtherVoteAccount delegates to a vote account other than the one
	// named in extraData (stake).
	HostileOtherVoteAccount HostileMode = "other-vote-account"
	// HostileOtherFeePayer makes a stranger the fee payer (stake, unstake,
	// withdraw).
	HostileOtherFeePayer HostileMode = "other-fee-payer"
	// HostileOtherAmount funds the stake account with more than asked
	// (stake) or withdraws less than asked (withdraw).
	HostileOtherAmount HostileMode = "other-amount"
	// HostileExtraInstruction appends a stake Authorize that hands the stake
	// authority of the stake account to a stranger (stake, unstake, withdraw).
	HostileExtraInstruction HostileMode = "extra-instruction"
	// HostileOtherStakeAccount targets a stake account other than the one
	// asked for or found (unstake, withdraw).
	HostileOtherStakeAccount HostileMode = "other-stake-account"
	// HostileOtherRecipient withdraws to a stranger (withdraw).
	HostileOtherRecipient HostileMode = "other-recipient"
)

// HostileModes lists every non-empty mode.
var HostileModes = []HostileMode{
	HostileLamportsToStranger, HostileOtherVoteAccount, HostileOtherFeePayer, HostileOtherAmount,
	HostileExtraInstruction, HostileOtherStakeAccount, HostileOtherRecipient,
}

// Validate reports whether m is a known mode.
func (m HostileMode) Validate() error {
	if m == HostileNone {
		return nil
	}
	for _, k := range HostileModes {
		if m == k {
			return nil
		}
	}
	return fmt.Errorf("sandbox: unknown hostile mode %q", string(m))
}

// hostileState holds the current mode.
type hostileState struct{ v atomic.Value }

func (h *hostileState) set(m HostileMode) { h.v.Store(m) }

func (h *hostileState) get() HostileMode {
	m, _ := h.v.Load().(HostileMode)
	return m
}
