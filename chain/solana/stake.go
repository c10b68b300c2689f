package solchain

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/gagliardetto/solana-go"
)

func renderErr(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// StakeStateKind is the variant of a stake account's StakeStateV2.
type StakeStateKind string

// StakeStateV2 variants, in tag order.
const (
	// StateUninitialized is an allocated but never initialized account (tag 0).
	StateUninitialized StakeStateKind = "uninitialized"
	// StateInitialized has authorities and lockup but no delegation (tag 1).
	StateInitialized StakeStateKind = "initialized"
	// StateStake is delegated, possibly deactivated (tag 2).
	StateStake StakeStateKind = "stake"
	// StateRewardsPool is a legacy rewards pool (tag 3).
	StateRewardsPool StakeStateKind = "rewardsPool"
)

// NotDeactivating is the deactivation epoch of a delegation that was never deactivated.
const NotDeactivating = math.MaxUint64

// StakeAccountSize is the size of stake account data.
const StakeAccountSize = 200

// StakeAccount is a decoded stake account.
type StakeAccount struct {
	// Address is the base58 stake account address (empty when decoded from bytes alone).
	Address string
	// Lamports is the account balance.
	Lamports uint64
	// State is the StakeStateV2 variant.
	State StakeStateKind
	// Meta is set for initialized and delegated accounts.
	Meta *StakeMeta
	// Stake is set for delegated accounts.
	Stake *Stake
	// Flags is the StakeFlags byte of delegated accounts.
	Flags uint8
}

// StakeMeta is the stake account metadata.
type StakeMeta struct {
	// RentExemptReserve is the lamports kept for rent exemption.
	RentExemptReserve uint64
	// Staker is the base58 stake authority.
	Staker string
	// Withdrawer is the base58 withdraw authority.
	Withdrawer string
	// Lockup restricts withdrawals until a time or epoch, unless the custodian signs.
	Lockup Lockup
}

// Lockup is a stake account lockup.
type Lockup struct {
	// UnixTimestamp is the time until which withdrawals are locked (0 = none).
	UnixTimestamp int64
	// Epoch is the epoch until which withdrawals are locked (0 = none).
	Epoch uint64
	// Custodian is the base58 address that may lift the lockup.
	Custodian string
}

// Stake is the delegation of a stake account.
type Stake struct {
	// Delegation is the delegated stake.
	Delegation Delegation
	// CreditsObserved is the vote credits observed at the last reward.
	CreditsObserved uint64
}

// Delegation is where and since when stake is delegated.
type Delegation struct {
	// Voter is the base58 vote account delegated to.
	Voter string
	// Stake is the delegated lamports.
	Stake uint64
	// ActivationEpoch is the epoch the delegation was made in.
	ActivationEpoch uint64
	// DeactivationEpoch is the epoch of deactivation, NotDeactivating if none.
	DeactivationEpoch uint64
	// WarmupCooldownRate is the legacy per-account rate field (unused by the runtime).
	WarmupCooldownRate float64
}

// Deactivated reports whether the delegation has been deactivated.
func (d Delegation) Deactivated() bool { return d.DeactivationEpoch != NotDeactivating }

type leReader struct {
	b   []byte
	off int
}

func (r *leReader) u64() uint64 {
	v := binary.LittleEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

func (r *leReader) key() string {
	k := solana.PublicKeyFromBytes(r.b[r.off : r.off+32])
	r.off += 32
	return k.String()
}

// Byte sizes of the StakeStateV2 parts.
const (
	tagSize   = 4
	metaSize  = 8 + 32 + 32 + 8 + 8 + 32
	stakeSize = 32 + 8 + 8 + 8 + 8 + 8
)

// DecodeStakeState decodes stake program account data (bincode StakeStateV2).
func DecodeStakeState(data []byte) (*StakeAccount, error) {
	if len(data) < tagSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrMalformedStakeAccount, len(data))
	}
	tag := binary.LittleEndian.Uint32(data)
	out := &StakeAccount{}
	need := tagSize
	switch tag {
	case 0:
		out.State = StateUninitialized
	case 1:
		out.State = StateInitialized
		need += metaSize
	case 2:
		out.State = StateStake
		need += metaSize + stakeSize + 1
	case 3:
		out.State = StateRewardsPool
	default:
		return nil, fmt.Errorf("%w: unknown state tag %d", ErrMalformedStakeAccount, tag)
	}
	if len(data) < need {
		return nil, fmt.Errorf("%w: %s state needs %d bytes, have %d", ErrMalformedStakeAccount, out.State, need, len(data))
	}
	r := &leReader{b: data, off: tagSize}
	if tag == 1 || tag == 2 {
		m := &StakeMeta{}
		m.RentExemptReserve = r.u64()
		m.Staker = r.key()
		m.Withdrawer = r.key()
		m.Lockup.UnixTimestamp = int64(r.u64())
		m.Lockup.Epoch = r.u64()
		m.Lockup.Custodian = r.key()
		out.Meta = m
	}
	if tag == 2 {
		s := &Stake{}
		s.Delegation.Voter = r.key()
		s.Delegation.Stake = r.u64()
		s.Delegation.ActivationEpoch = r.u64()
		s.Delegation.DeactivationEpoch = r.u64()
		s.Delegation.WarmupCooldownRate = math.Float64frombits(r.u64())
		s.CreditsObserved = r.u64()
		out.Stake = s
		out.Flags = data[r.off]
	}
	return out, nil
}

// StakeHistoryEntry is the cluster-wide stake in one epoch.
type StakeHistoryEntry struct {
	// Epoch is the epoch described.
	Epoch uint64
	// Effective is the effective stake.
	Effective uint64
	// Activating is the stake still warming up.
	Activating uint64
	// Deactivating is the stake still cooling down.
	Deactivating uint64
}

// StakeHistory maps epochs to their cluster-wide stake.
type StakeHistory map[uint64]StakeHistoryEntry

// DecodeStakeHistory decodes the StakeHistory sysvar (a bincode Vec of entries).
func DecodeStakeHistory(data []byte) (StakeHistory, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("%w: stake history of %d bytes", ErrMalformedStakeAccount, len(data))
	}
	n := binary.LittleEndian.Uint64(data)
	if n > uint64(len(data)-8)/32 {
		return nil, fmt.Errorf("%w: stake history claims %d entries in %d bytes", ErrMalformedStakeAccount, n, len(data))
	}
	h := make(StakeHistory, n)
	r := &leReader{b: data, off: 8}
	for i := uint64(0); i < n; i++ {
		e := StakeHistoryEntry{Epoch: r.u64(), Effective: r.u64(), Activating: r.u64(), Deactivating: r.u64()}
		h[e.Epoch] = e
	}
	return h, nil
}

// Activation states of a stake account.
const (
	// ActivationInactive: no stake is effective; the balance above the rent reserve is withdrawable.
	ActivationInactive = "inactive"
	// ActivationActivating: the stake is warming up.
	ActivationActivating = "activating"
	// ActivationActive: the whole delegation is effective.
	ActivationActive = "active"
	// ActivationDeactivating: the stake is cooling down and cannot be withdrawn yet.
	ActivationDeactivating = "deactivating"
)

// StakeActivation is how much of a stake account's stake is active in an epoch.
type StakeActivation struct {
	// State is "inactive", "activating", "active" or "deactivating".
	State string
	// Active is the effective stake in lamports.
	Active uint64
	// Inactive is the stake not (or no longer) effective, as the RPC method getStakeActivation
	// reported it: activating stake while activating, the balance above the rent reserve not
	// effective while deactivating or inactive.
	Inactive uint64
	// Epoch is the epoch the activation is computed for.
	Epoch uint64
}

// warmupCooldownRate is the share of cluster effective stake that may (de)activate per epoch.
func warmupCooldownRate(epoch, newRateEpoch uint64) float64 {
	if epoch < newRateEpoch {
		return 0.25
	}
	return 0.09
}

// ComputeActivation returns the effective, activating and deactivating stake of d at
// targetEpoch, following the stake program: stake warms up (and cools down) each epoch by its
// share of rate × the cluster's effective stake of the previous epoch, at least one lamport per
// epoch. Epochs before newRateEpoch use 25%, later ones 9%. With no history entry for the
// activation (deactivation) epoch the stake counts as fully (de)activated from the next epoch.
func ComputeActivation(d Delegation, targetEpoch uint64, history StakeHistory, newRateEpoch uint64) (effective, activating, deactivating uint64) {
	effective, activating = stakeAndActivating(d, targetEpoch, history, newRateEpoch)
	switch {
	case targetEpoch < d.DeactivationEpoch:
		return effective, activating, 0
	case targetEpoch == d.DeactivationEpoch:
		return effective, 0, effective
	}
	prev, ok := history[d.DeactivationEpoch]
	if !ok {
		return 0, 0, 0
	}
	current := effective
	prevEpoch := d.DeactivationEpoch
	for {
		epoch := prevEpoch + 1
		if prev.Deactivating == 0 {
			break
		}
		weight := float64(current) / float64(prev.Deactivating)
		newlyNotEffectiveCluster := float64(prev.Effective) * warmupCooldownRate(epoch, newRateEpoch)
		newlyNotEffective := max(uint64(weight*newlyNotEffectiveCluster), 1)
		if newlyNotEffective >= current {
			current = 0
			break
		}
		current -= newlyNotEffective
		if epoch >= targetEpoch {
			break
		}
		next, ok := history[epoch]
		if !ok {
			break
		}
		prev, prevEpoch = next, epoch
	}
	return current, 0, current
}

func stakeAndActivating(d Delegation, targetEpoch uint64, history StakeHistory, newRateEpoch uint64) (effective, activating uint64) {
	switch {
	case d.ActivationEpoch == math.MaxUint64: // bootstrap stake, active from genesis
		return d.Stake, 0
	case d.ActivationEpoch == d.DeactivationEpoch: // deactivated in the epoch it was delegated
		return 0, 0
	case targetEpoch == d.ActivationEpoch:
		return 0, d.Stake
	case targetEpoch < d.ActivationEpoch:
		return 0, 0
	}
	prev, ok := history[d.ActivationEpoch]
	if !ok {
		return d.Stake, 0
	}
	var current uint64
	prevEpoch := d.ActivationEpoch
	for {
		epoch := prevEpoch + 1
		if prev.Activating == 0 {
			break
		}
		weight := float64(d.Stake-current) / float64(prev.Activating)
		newlyEffectiveCluster := float64(prev.Effective) * warmupCooldownRate(epoch, newRateEpoch)
		current += max(uint64(weight*newlyEffectiveCluster), 1)
		if current >= d.Stake {
			current = d.Stake
			break
		}
		if epoch >= targetEpoch || epoch >= d.DeactivationEpoch {
			break
		}
		next, ok := history[epoch]
		if !ok {
			break
		}
		prev, prevEpoch = next, epoch
	}
	return current, d.Stake - current
}

// Activation computes the activation of a decoded stake account at epoch.
func Activation(acct *StakeAccount, epoch uint64, history StakeHistory, newRateEpoch uint64) *StakeActivation {
	out := &StakeActivation{State: ActivationInactive, Epoch: epoch}
	var reserve uint64
	if acct.Meta != nil {
		reserve = acct.Meta.RentExemptReserve
	}
	if acct.Stake == nil {
		out.Inactive = sat(acct.Lamports, reserve)
		return out
	}
	eff, act, deact := ComputeActivation(acct.Stake.Delegation, epoch, history, newRateEpoch)
	out.Active = eff
	switch {
	case deact > 0:
		out.State = ActivationDeactivating
		out.Inactive = sat(acct.Lamports, eff+reserve)
	case act > 0:
		out.State = ActivationActivating
		out.Inactive = act
	case eff > 0:
		out.State = ActivationActive
	default:
		out.Inactive = sat(acct.Lamports, reserve)
	}
	return out
}

func sat(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

// StakeAccount fetches and decodes the stake account at the base58 address.
func (c *Client) StakeAccount(ctx context.Context, addr string) (*StakeAccount, error) {
	pk, err := parseAddress(addr)
	if err != nil {
		return nil, err
	}
	acct, data, err := c.account(ctx, pk)
	if err != nil {
		return nil, err
	}
	if !acct.Owner.Equals(solana.StakeProgramID) {
		return nil, fmt.Errorf("%w: %s is owned by %s", ErrNotStakeAccount, pk, acct.Owner)
	}
	sa, err := DecodeStakeState(data)
	if err != nil {
		return nil, fmt.Errorf("stake account %s: %w", pk, err)
	}
	sa.Address = pk.String()
	sa.Lamports = acct.Lamports
	return sa, nil
}

// StakeActivation computes the activation of the stake account at the base58 address in the
// current epoch, from the account and the StakeHistory sysvar.
func (c *Client) StakeActivation(ctx context.Context, addr string) (*StakeActivation, error) {
	sa, err := c.StakeAccount(ctx, addr)
	if err != nil {
		return nil, err
	}
	ei, err := c.EpochInfo(ctx)
	if err != nil {
		return nil, err
	}
	history := StakeHistory{}
	if sa.Stake != nil {
		_, data, err := c.account(ctx, solana.SysVarStakeHistoryPubkey)
		if err != nil {
			return nil, fmt.Errorf("stake history: %w", err)
		}
		if history, err = DecodeStakeHistory(data); err != nil {
			return nil, err
		}
	}
	// 0: the 9% warm-up/cool-down rate of every epoch since the rate changed, the only epochs a
	// stake account is read at now.
	return Activation(sa, ei.Epoch, history, 0), nil
}
