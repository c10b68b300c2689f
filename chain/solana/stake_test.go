package solchain

import (
	"encoding/binary"
	"encoding/hex"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

func key(b byte) solana.PublicKey {
	var k solana.PublicKey
	for i := range k {
		k[i] = b
	}
	return k
}

// stakeBytes builds StakeStateV2 bytes field by field from the documented bincode layout.
type stakeBytes struct{ b []byte }

func (s *stakeBytes) u32(v uint32) *stakeBytes {
	s.b = binary.LittleEndian.AppendUint32(s.b, v)
	return s
}
func (s *stakeBytes) u64(v uint64) *stakeBytes {
	s.b = binary.LittleEndian.AppendUint64(s.b, v)
	return s
}
func (s *stakeBytes) key(k solana.PublicKey) *stakeBytes {
	s.b = append(s.b, k[:]...)
	return s
}
func (s *stakeBytes) pad(n int) []byte {
	for len(s.b) < n {
		s.b = append(s.b, 0)
	}
	return s.b
}

func (s *stakeBytes) meta(reserve uint64, staker, withdrawer solana.PublicKey, ts int64, epoch uint64, custodian solana.PublicKey) *stakeBytes {
	return s.u64(reserve).key(staker).key(withdrawer).u64(uint64(ts)).u64(epoch).key(custodian)
}

var (
	staker     = key(1)
	withdrawer = key(2)
	custodian  = key(3)
	voter      = key(4)
)

func delegatedBytes(deactivation uint64) []byte {
	s := (&stakeBytes{}).u32(2).meta(2_282_880, staker, withdrawer, -5, 7, custodian)
	s.key(voter).u64(1_000_000_000).u64(100).u64(deactivation).u64(math.Float64bits(0.25)).u64(12345)
	s.b = append(s.b, 1) // StakeFlags
	return s.pad(StakeAccountSize)
}

func checkGoldenHex(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(hex.EncodeToString(got)+"\n"), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./chain/solana/ -update")
	require.Equal(t, strings.TrimSpace(string(want)), hex.EncodeToString(got))
}

func TestDecodeStakeState(t *testing.T) {
	meta := &StakeMeta{RentExemptReserve: 2_282_880, Staker: staker.String(), Withdrawer: withdrawer.String(),
		Lockup: Lockup{UnixTimestamp: -5, Epoch: 7, Custodian: custodian.String()}}
	cases := []struct {
		name   string
		golden string
		data   []byte
		want   *StakeAccount
	}{
		{"uninitialized", "stake_uninitialized.hex", (&stakeBytes{}).u32(0).pad(StakeAccountSize),
			&StakeAccount{State: StateUninitialized}},
		{"initialized", "stake_initialized.hex", (&stakeBytes{}).u32(1).meta(2_282_880, staker, withdrawer, -5, 7, custodian).pad(StakeAccountSize),
			&StakeAccount{State: StateInitialized, Meta: meta}},
		{"delegated", "stake_delegated.hex", delegatedBytes(NotDeactivating),
			&StakeAccount{State: StateStake, Meta: meta, Flags: 1, Stake: &Stake{CreditsObserved: 12345,
				Delegation: Delegation{Voter: voter.String(), Stake: 1_000_000_000, ActivationEpoch: 100, DeactivationEpoch: NotDeactivating, WarmupCooldownRate: 0.25}}}},
		{"deactivating", "stake_deactivating.hex", delegatedBytes(120),
			&StakeAccount{State: StateStake, Meta: meta, Flags: 1, Stake: &Stake{CreditsObserved: 12345,
				Delegation: Delegation{Voter: voter.String(), Stake: 1_000_000_000, ActivationEpoch: 100, DeactivationEpoch: 120, WarmupCooldownRate: 0.25}}}},
		{"rewards pool", "stake_rewardspool.hex", (&stakeBytes{}).u32(3).pad(StakeAccountSize),
			&StakeAccount{State: StateRewardsPool}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Len(t, tc.data, StakeAccountSize)
			checkGoldenHex(t, tc.golden, tc.data)
			got, err := DecodeStakeState(tc.data)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	// Field offsets of the delegated layout, as the stake program documents them.
	d := delegatedBytes(NotDeactivating)
	assert.Equal(t, voter[:], d[124:156], "voter at offset 124")
	assert.Equal(t, uint64(1_000_000_000), binary.LittleEndian.Uint64(d[156:]), "stake at offset 156")
	assert.Equal(t, uint64(NotDeactivating), binary.LittleEndian.Uint64(d[172:]), "deactivation epoch at offset 172")
	assert.Equal(t, byte(1), d[196], "flags at offset 196")
	assert.True(t, (&Delegation{DeactivationEpoch: 5}).Deactivated())
	assert.False(t, (&Delegation{DeactivationEpoch: NotDeactivating}).Deactivated())
}

func TestDecodeStakeStateMalformed(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "0 bytes"},
		{"unknown tag", (&stakeBytes{}).u32(9).pad(StakeAccountSize), "unknown state tag 9"},
		{"short delegated", delegatedBytes(NotDeactivating)[:150], "needs 197 bytes, have 150"},
		{"short initialized", (&stakeBytes{}).u32(1).pad(50), "needs 124 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeStakeState(tc.data)
			require.ErrorIs(t, err, ErrMalformedStakeAccount)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func historyBytes(entries ...StakeHistoryEntry) []byte {
	s := (&stakeBytes{}).u64(uint64(len(entries)))
	for _, e := range entries {
		s.u64(e.Epoch).u64(e.Effective).u64(e.Activating).u64(e.Deactivating)
	}
	return s.b
}

func TestDecodeStakeHistory(t *testing.T) {
	h, err := DecodeStakeHistory(historyBytes(StakeHistoryEntry{11, 5, 6, 7}, StakeHistoryEntry{10, 1, 2, 3}))
	require.NoError(t, err)
	assert.Equal(t, StakeHistory{10: {10, 1, 2, 3}, 11: {11, 5, 6, 7}}, h)
	_, err = DecodeStakeHistory((&stakeBytes{}).u64(1 << 40).b)
	require.ErrorIs(t, err, ErrMalformedStakeAccount)
	_, err = DecodeStakeHistory([]byte{1})
	require.ErrorIs(t, err, ErrMalformedStakeAccount)
}

func TestComputeActivation(t *testing.T) {
	const stake = 1000
	d := func(act, deact uint64) Delegation {
		return Delegation{Stake: stake, ActivationEpoch: act, DeactivationEpoch: deact}
	}
	warm := StakeHistory{
		10: {Epoch: 10, Effective: 10_000, Activating: 1000},
		11: {Epoch: 11, Effective: 10_900, Activating: 100},
	}
	cool := StakeHistory{
		20: {Epoch: 20, Effective: 10_000, Deactivating: 2000},
		21: {Epoch: 21, Effective: 9_100, Deactivating: 1100},
	}
	cases := []struct {
		name                     string
		d                        Delegation
		epoch                    uint64
		history                  StakeHistory
		newRateEpoch             uint64
		eff, activating, deactiv uint64
	}{
		{"before activation", d(10, NotDeactivating), 9, nil, 0, 0, 0, 0},
		{"activation epoch", d(10, NotDeactivating), 10, nil, 0, 0, stake, 0},
		{"no history: fully active next epoch", d(10, NotDeactivating), 11, nil, 0, stake, 0, 0},
		{"bootstrap stake", d(math.MaxUint64, NotDeactivating), 0, nil, 0, stake, 0, 0},
		{"deactivated in the activation epoch", d(10, 10), 12, warm, 0, 0, 0, 0},
		// 9% of 10,000 cluster-effective = 900 newly effective, all of it ours (weight 1000/1000).
		{"warm-up one epoch at 9%", d(10, NotDeactivating), 11, warm, 0, 900, 100, 0},
		// next epoch 9% of 10,900 = 981 > the 100 remaining: fully active.
		{"warm-up completes", d(10, NotDeactivating), 12, warm, 0, stake, 0, 0},
		// before the new-rate epoch 25% of 10,000 = 2,500 covers the whole stake at once.
		{"warm-up at the old 25% rate", d(10, NotDeactivating), 11, warm, 100, stake, 0, 0},
		{"history runs out while warming", d(10, NotDeactivating), 15, StakeHistory{10: warm[10]}, 0, 900, 100, 0},
		{"at least one lamport per epoch", d(10, NotDeactivating), 11, StakeHistory{10: {Epoch: 10, Effective: 1, Activating: 1 << 40}}, 0, 1, stake - 1, 0},
		{"deactivation epoch", d(5, 20), 20, nil, 0, stake, 0, stake},
		{"no history: fully inactive after deactivation epoch", d(5, 20), 21, nil, 0, 0, 0, 0},
		// weight 1000/2000, 9% of 10,000 = 900, ours 450: 550 still effective.
		{"cool-down one epoch at 9%", d(5, 20), 21, cool, 0, 550, 0, 550},
		// weight 550/1100, 9% of 9,100 = 819, ours 409: 141 left.
		{"cool-down second epoch", d(5, 20), 22, cool, 0, 141, 0, 141},
		{"cool-down at the old 25% rate", d(5, 20), 21, cool, 100, 0, 0, 0},
		{"cool-down with nothing deactivating cluster-wide", d(5, 20), 21, StakeHistory{20: {Epoch: 20, Effective: 10_000}}, 0, stake, 0, stake},
		{"deactivated while warming up", d(10, 11), 11, warm, 0, 900, 0, 900},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eff, act, deact := ComputeActivation(tc.d, tc.epoch, tc.history, tc.newRateEpoch)
			assert.Equal(t, []uint64{tc.eff, tc.activating, tc.deactiv}, []uint64{eff, act, deact}, "effective, activating, deactivating")
		})
	}
}

func TestActivationStates(t *testing.T) {
	const reserve, lamports = 2_000, 1_002_000
	meta := &StakeMeta{RentExemptReserve: reserve}
	delegated := func(deact uint64) *StakeAccount {
		return &StakeAccount{Lamports: lamports, State: StateStake, Meta: meta,
			Stake: &Stake{Delegation: Delegation{Stake: 1_000_000, ActivationEpoch: 10, DeactivationEpoch: deact}}}
	}
	cases := []struct {
		name  string
		acct  *StakeAccount
		epoch uint64
		want  StakeActivation
	}{
		{"initialized", &StakeAccount{Lamports: lamports, State: StateInitialized, Meta: meta}, 12, StakeActivation{ActivationInactive, 0, 1_000_000, 12}},
		{"activating", delegated(NotDeactivating), 10, StakeActivation{ActivationActivating, 0, 1_000_000, 10}},
		{"active", delegated(NotDeactivating), 11, StakeActivation{ActivationActive, 1_000_000, 0, 11}},
		{"deactivating", delegated(20), 20, StakeActivation{ActivationDeactivating, 1_000_000, 0, 20}},
		{"inactive after deactivation", delegated(20), 21, StakeActivation{ActivationInactive, 0, 1_000_000, 21}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, &tc.want, Activation(tc.acct, tc.epoch, StakeHistory{}, 0))
		})
	}
}

// TestDecodeStakeStateShortestEncodings: each StakeStateV2 variant decodes from exactly its
// bincode length (a 4-byte tag; Meta is 8 + 32 + 32 + 8 + 8 + 32 = 120 bytes, Stake is
// 32 + 8 + 8 + 8 + 8 + 8 = 72 bytes, then a 1-byte StakeFlags) and one byte less is malformed.
func TestDecodeStakeStateShortestEncodings(t *testing.T) {
	for _, tc := range []struct {
		tag   uint32
		size  int
		state StakeStateKind
	}{
		{0, 4, StateUninitialized},
		{1, 4 + 120, StateInitialized},
		{2, 4 + 120 + 72 + 1, StateStake},
		{3, 4, StateRewardsPool},
	} {
		data := binary.LittleEndian.AppendUint32(make([]byte, 0, tc.size), tc.tag)
		data = append(data, make([]byte, tc.size-4)...)
		got, err := DecodeStakeState(data)
		require.NoError(t, err, "%s in %d bytes", tc.state, tc.size)
		assert.Equal(t, tc.state, got.State)
		_, err = DecodeStakeState(data[:tc.size-1])
		require.ErrorIs(t, err, ErrMalformedStakeAccount, "%s in %d bytes", tc.state, tc.size-1)
	}
}

// TestDecodeStakeHistoryRefusesShortEntries: a StakeHistory sysvar (a u64 count, then 32-byte
// entries) that claims more entries than it holds is malformed, also when the bytes left over
// would hold most of one more entry, and never makes the decoder fail any other way.
func TestDecodeStakeHistoryRefusesShortEntries(t *testing.T) {
	history := func(claimed uint64, entries, extra int) []byte {
		b := binary.LittleEndian.AppendUint64(nil, claimed)
		for i := 0; i < entries; i++ {
			for _, v := range []uint64{uint64(100 + i), 1_000, 10, 5} {
				b = binary.LittleEndian.AppendUint64(b, v)
			}
		}
		return append(b, make([]byte, extra)...)
	}
	h, err := DecodeStakeHistory(history(2, 2, 0))
	require.NoError(t, err)
	assert.Equal(t, StakeHistory{
		100: {Epoch: 100, Effective: 1_000, Activating: 10, Deactivating: 5},
		101: {Epoch: 101, Effective: 1_000, Activating: 10, Deactivating: 5},
	}, h)
	for _, data := range [][]byte{history(2, 1, 24), history(2, 1, 31), history(3, 2, 0)} {
		require.NotPanics(t, func() { _, err = DecodeStakeHistory(data) }, "%d bytes", len(data))
		require.ErrorIs(t, err, ErrMalformedStakeAccount, "%d bytes", len(data))
	}
}

// TestWarmupCooldownRateChangesAtItsEpoch: as in the stake program (warmup_cooldown_rate), the
// 25% rate holds for the epochs before the new-rate activation epoch and 9% from that epoch on.
func TestWarmupCooldownRateChangesAtItsEpoch(t *testing.T) {
	assert.Equal(t, 0.25, warmupCooldownRate(4, 5))
	assert.Equal(t, 0.09, warmupCooldownRate(5, 5))
	assert.Equal(t, 0.09, warmupCooldownRate(6, 5))
}

// TestActivationFollowsTheStakeProgramRule: a delegation warms up each epoch by its share of
// the activating stake × the cluster's effective stake of the epoch before × 9% (rounded down),
// stops warming up at its deactivation epoch, and then cools down by the same rule. The expected
// amounts are worked by hand from that rule: one 100-lamport delegation activated at epoch 10,
// alone in warming up, in a cluster of 500 effective lamports at epoch 10 and 545 (100 when it
// deactivates) at epoch 11.
func TestActivationFollowsTheStakeProgramRule(t *testing.T) {
	history := StakeHistory{
		10: {Epoch: 10, Effective: 500, Activating: 100},
		11: {Epoch: 11, Effective: 545, Activating: 55},
	}
	d := Delegation{Stake: 100, ActivationEpoch: 10, DeactivationEpoch: NotDeactivating}
	// Epoch 11: 500 × 9% = 45. Epoch 12: 45 + 545 × 9% × 55/55 = 45 + 49 = 94.
	for epoch, want := range map[uint64][2]uint64{11: {45, 55}, 12: {94, 6}} {
		eff, act, deact := ComputeActivation(d, epoch, history, 0)
		assert.Equal(t, [3]uint64{want[0], want[1], 0}, [3]uint64{eff, act, deact}, "epoch %d", epoch)
	}

	// Deactivated at epoch 11: 45 effective then, and warming up stops. Epoch 12: 45 - 100 × 9% = 36.
	history[11] = StakeHistoryEntry{Epoch: 11, Effective: 100, Activating: 55, Deactivating: 45}
	d.DeactivationEpoch = 11
	eff, act, deact := ComputeActivation(d, 12, history, 0)
	assert.Equal(t, [3]uint64{36, 0, 36}, [3]uint64{eff, act, deact})
}
