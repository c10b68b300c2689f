package solchain

import (
	"encoding/binary"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Behaviour the mutation run (make mutation, docs/mutation.md) found untested: each test here
// fails when one of the gremlins' changes to the stake decoding or the network proof is made.

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

// TestNetworkReportsEachChangeOnce: OnChange hears of a status once, however often a check finds
// it again.
func TestNetworkReportsEachChangeOnce(t *testing.T) {
	_, srv := newCluster(t, testnetGenesis)
	var mu sync.Mutex
	var changes []NetworkStatus
	n := NewNetwork("testnet", testnetGenesis, New(srv.URL), NetworkOptions{OnChange: func(s NetworkStatus) {
		mu.Lock()
		defer mu.Unlock()
		changes = append(changes, s)
	}})
	for i := 0; i < 3; i++ {
		require.NoError(t, n.Verify(ctx))
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, changes, 1)
	assert.True(t, changes[0].Verified)
	assert.Equal(t, testnetGenesis, changes[0].Served)
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
