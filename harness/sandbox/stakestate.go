package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/gagliardetto/solana-go"
)

// Stake account states (StakeStateV2 discriminant).
const (
	stakeStateUninitialized uint32 = 0
	stakeStateInitialized   uint32 = 1
	stakeStateStake         uint32 = 2
	stakeStateRewardsPool   uint32 = 3
)

// errShortStakeAccount is returned for stake account data under 200 bytes.
var errShortStakeAccount = errors.New("stake account data is shorter than 200 bytes")

// stakeState is the decoded part of a stake account the sandbox needs.
type stakeState struct {
	State             uint32
	RentExemptReserve uint64
	Staker            solana.PublicKey
	Withdrawer        solana.PublicKey
	Voter             solana.PublicKey
	Stake             uint64
	ActivationEpoch   uint64
	DeactivationEpoch uint64
}

// decodeStakeState decodes StakeStateV2 account data.
func decodeStakeState(data []byte) (stakeState, error) {
	var s stakeState
	if len(data) < stakeStateSize {
		return s, errShortStakeAccount
	}
	s.State = binary.LittleEndian.Uint32(data[0:4])
	if s.State > stakeStateRewardsPool {
		return s, fmt.Errorf("unknown stake state %d", s.State)
	}
	if s.State == stakeStateInitialized || s.State == stakeStateStake {
		s.RentExemptReserve = binary.LittleEndian.Uint64(data[4:12])
		copy(s.Staker[:], data[12:44])
		copy(s.Withdrawer[:], data[44:76])
	}
	if s.State == stakeStateStake {
		copy(s.Voter[:], data[124:156])
		s.Stake = binary.LittleEndian.Uint64(data[156:164])
		s.ActivationEpoch = binary.LittleEndian.Uint64(data[164:172])
		s.DeactivationEpoch = binary.LittleEndian.Uint64(data[172:180])
	}
	return s, nil
}

// delegated reports a stake that is delegated and not deactivating.
func (s stakeState) delegated() bool {
	return s.State == stakeStateStake && s.DeactivationEpoch == math.MaxUint64
}

// inactiveAt reports whether the stake is fully inactive in epoch: never
// delegated, or deactivated in an earlier epoch. (The runtime applies no
// cool-down, so deactivation completes at the next epoch boundary.)
func (s stakeState) inactiveAt(epoch uint64) bool {
	switch s.State {
	case stakeStateInitialized:
		return true
	case stakeStateStake:
		return s.DeactivationEpoch != math.MaxUint64 && s.DeactivationEpoch < epoch
	}
	return false
}

// label names the state for the ledger.
func (s stakeState) label(epoch uint64) string {
	switch s.State {
	case stakeStateUninitialized:
		return "uninitialized"
	case stakeStateInitialized:
		return "initialized"
	case stakeStateRewardsPool:
		return "rewardsPool"
	}
	switch {
	case s.DeactivationEpoch == math.MaxUint64 && s.ActivationEpoch >= epoch:
		return "activating"
	case s.DeactivationEpoch == math.MaxUint64:
		return "active"
	case s.DeactivationEpoch >= epoch:
		return "deactivating"
	default:
		return "inactive"
	}
}
