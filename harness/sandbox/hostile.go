package sandbox

import (
	"fmt"
	"sync/atomic"

	"github.com/gagliardetto/solana-go"
	"go.uber.org/zap"
)

// HostileMode makes the transaction-building endpoints (stake, unstake,
// withdraw) return transactions that do not match the request while their
// extraData still describes the honest transaction. The zero value is honest.
//
// Two modes lie about the validator instead (delinquent-validator,
// unlisted-validator): the service chooses a validator it should not, and
// extraData names that validator, as the transaction does.
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
	// HostileFeeHeavy puts compute-budget instructions before the staking
	// ones: SetComputeUnitLimit 1,400,000 and SetComputeUnitPrice 1,000,000
	// micro-lamports (1 lamport a unit), a priority fee of 1,400,000 lamports
	// on top of the signature fee (stake, unstake, withdraw).
	HostileFeeHeavy HostileMode = "fee-heavy"
	// HostileReadonlyWritable lists the stake account (the new one for a
	// stake) among the read-only accounts of the message header although its
	// instructions write it: the transaction is certain to fail on chain
	// (stake, unstake, withdraw).
	HostileReadonlyWritable HostileMode = "readonly-writable"
	// HostileLockup initialises the new stake account with a lockup until
	// 2100-01-01 (unix 4102444800) and epoch 1,000,000, custodian the
	// staker (stake).
	HostileLockup HostileMode = "lockup"
	// HostileReplay answers, byte for byte, the last result the sandbox gave
	// for the same staker and operation (kept in memory, one per staker and
	// operation, honest or not); with none yet it builds honestly. After an
	// operation landed, its transaction comes back: signing it again gives
	// the signature that already landed (stake, unstake, withdraw).
	HostileReplay HostileMode = "replay"
	// HostileDelinquentValidator delegates to a vote account the runtime's
	// getVoteAccounts lists as delinquent, named in extraData, while
	// validator status (endpoint 7) answers "active" for every delinquent
	// vote account as long as the mode is on: only the chain tells (stake).
	HostileDelinquentValidator HostileMode = "delinquent-validator"
	// HostileUnlistedValidator delegates to a current vote account with a
	// sane commission that is not one of the sandbox's own validators (the
	// runtime's start-up vote accounts and Config.DefaultVoteAccount),
	// named in extraData; the sandbox creates one on the runtime the first
	// time none exists. An allow-list of the sandbox's validators refuses
	// it (stake).
	HostileUnlistedValidator HostileMode = "unlisted-validator"
)

// HostileModes lists every non-empty mode.
var HostileModes = []HostileMode{
	HostileLamportsToStranger, HostileOtherVoteAccount, HostileOtherFeePayer, HostileOtherAmount,
	HostileExtraInstruction, HostileOtherStakeAccount, HostileOtherRecipient,
	HostileFeeHeavy, HostileReadonlyWritable, HostileLockup, HostileReplay,
	HostileDelinquentValidator, HostileUnlistedValidator,
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

// What the hostile modes put in a transaction.
const (
	// hostileComputeUnitLimit and hostileComputeUnitPrice (micro-lamports a
	// unit) make fee-heavy's priority fee of 1,400,000 lamports.
	hostileComputeUnitLimit uint32 = 1_400_000
	hostileComputeUnitPrice uint64 = 1_000_000
	// hostileLockupUnix (2100-01-01T00:00:00Z) and hostileLockupEpoch are
	// the lockup of lockup mode.
	hostileLockupUnix  int64  = 4_102_444_800
	hostileLockupEpoch uint64 = 1_000_000
)

// replayKey names the last result built for a staker and an operation
// (EndpointStake, EndpointUnstake or EndpointWithdraw).
type replayKey struct {
	staker    solana.PublicKey
	operation string
}

// remember keeps res as the last result built for staker and operation,
// and returns it.
func (s *server) remember(staker solana.PublicKey, operation string, res unsignedTxResult) unsignedTxResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastBuilt[replayKey{staker, operation}] = res
	return res
}

// replayed returns, in replay mode, the last result built for staker and
// operation; ok is false in other modes and when there is none.
func (s *server) replayed(mode HostileMode, staker solana.PublicKey, operation string) (res unsignedTxResult, ok bool) {
	if mode != HostileReplay {
		return unsignedTxResult{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res, ok = s.lastBuilt[replayKey{staker, operation}]
	if ok {
		s.log.Info("transaction replayed", zap.String("staker", staker.String()), zap.String("operation", operation))
	}
	return res, ok
}
