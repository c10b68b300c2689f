package signer

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/stake"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// layout is one accepted instruction's decoded data, whichever decoder produced it.
type layout struct {
	kind     instrKind
	create   createWithSeedData
	init     initializeData
	lamports uint64
}

// handDecode decodes data with the hand decoders, choosing the layout by program and
// discriminator as verify does. It reports false when data is not an accepted layout.
func handDecode(program solana.PublicKey, data []byte) (layout, bool) {
	var l layout
	disc, ok := discriminator(data)
	if !ok {
		return l, false
	}
	switch {
	case program == solana.SystemProgramID && disc == system.Instruction_CreateAccountWithSeed:
		l.kind = kindCreateWithSeed
		l.create, ok = decodeCreateWithSeed(data)
	case program == solana.StakeProgramID && disc == stake.Instruction_Initialize:
		l.kind = kindInitialize
		l.init, ok = decodeInitialize(data)
	case program == solana.StakeProgramID && disc == stake.Instruction_DelegateStake:
		l.kind, ok = kindDelegate, decodeNoArgs(data, disc)
	case program == solana.StakeProgramID && disc == stake.Instruction_Deactivate:
		l.kind, ok = kindDeactivate, decodeNoArgs(data, disc)
	case program == solana.StakeProgramID && disc == stake.Instruction_Withdraw:
		l.kind = kindWithdraw
		l.lamports, ok = decodeWithdraw(data)
	default:
		return l, false
	}
	return l, ok
}

// refDecode decodes data with solana-go's reflection-based decoders (exact length, as the
// signer has always required) and reports the accepted layout it finds.
func refDecode(program solana.PublicKey, data []byte) (layout, bool) {
	var l layout
	switch program {
	case solana.SystemProgramID:
		var in system.Instruction
		if decodeExact(data, &in) != nil {
			return l, false
		}
		c, ok := in.Impl.(*system.CreateAccountWithSeed)
		if !ok || c.Base == nil || c.Seed == nil || c.Lamports == nil || c.Space == nil || c.Owner == nil {
			return l, false
		}
		l.kind = kindCreateWithSeed
		l.create = createWithSeedData{base: *c.Base, seed: []byte(*c.Seed), lamports: *c.Lamports, space: *c.Space, owner: *c.Owner}
	case solana.StakeProgramID:
		var in stake.Instruction
		if decodeExact(data, &in) != nil {
			return l, false
		}
		switch x := in.Impl.(type) {
		case *stake.Initialize:
			a, k := x.Authorized, x.Lockup
			if a == nil || a.Staker == nil || a.Withdrawer == nil || k == nil || k.UnixTimestamp == nil || k.Epoch == nil || k.Custodian == nil {
				return l, false
			}
			l.kind = kindInitialize
			l.init = initializeData{staker: *a.Staker, withdrawer: *a.Withdrawer, unixTimestamp: *k.UnixTimestamp, epoch: *k.Epoch, custodian: *k.Custodian}
		case *stake.DelegateStake:
			l.kind = kindDelegate
		case *stake.Deactivate:
			l.kind = kindDeactivate
		case *stake.Withdraw:
			if x.Lamports == nil {
				return l, false
			}
			l.kind = kindWithdraw
			l.lamports = *x.Lamports
		default:
			return l, false
		}
	default:
		return l, false
	}
	return l, true
}

// normalize makes layouts comparable: an empty seed is the same whether nil or not.
func (l layout) normalize() layout {
	if len(l.create.seed) == 0 {
		l.create.seed = nil
	}
	return l
}

// TestGoldenDecodeBothWays decodes every instruction of the golden transactions, and of the other
// accepted shapes, with the hand decoders and with solana-go's, and requires the same values.
func TestGoldenDecodeBothWays(t *testing.T) {
	f := newFixture()
	var txs []string
	paths, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	require.NoError(t, err)
	require.Len(t, paths, 3)
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		require.NoError(t, err)
		var g goldenTx
		require.NoError(t, json.Unmarshal(raw, &g))
		txs = append(txs, g.Transaction)
	}
	txs = append(txs,
		f.tx64(t, f.staker, system.NewCreateAccountWithSeedInstruction(f.staker, f.seed, f.lamports, stakeAccountSpace, solana.StakeProgramID, f.staker, f.derived, f.staker).Build()),
		f.tx64(t, f.staker, initialize(f.derived, f.stranger, f.otherVote, f.staker, 7)),
		f.tx64(t, f.staker, withdrawCustodian(f.stakeAccount, f.staker, f.staker, 1_500_000_000, f.staker)),
	)
	decoded := map[instrKind]int{}
	for _, s := range txs {
		raw, err := base64.StdEncoding.DecodeString(s)
		require.NoError(t, err)
		tx, err := parseWireTx(raw)
		require.NoError(t, err)
		for i, in := range tx.instrs {
			program := tx.keys[in.programIndex]
			hand, hok := handDecode(program, in.data)
			ref, rok := refDecode(program, in.data)
			require.True(t, rok, "instruction %d of %s: solana-go decodes it", i, s)
			require.True(t, hok, "instruction %d of %s: the hand decoder decodes it", i, s)
			assert.Equal(t, ref.normalize(), hand.normalize(), "instruction %d of %s", i, s)
			decoded[hand.kind]++
		}
	}
	for _, k := range []instrKind{kindCreateWithSeed, kindInitialize, kindDelegate, kindDeactivate, kindWithdraw} {
		assert.NotZero(t, decoded[k], "layout %d is covered", k)
	}
}

// instrDataSeeds returns the data of each accepted layout, plus near misses.
func instrDataSeeds(tb testing.TB) []struct {
	program solana.PublicKey
	data    []byte
} {
	f := newFixture()
	var out []struct {
		program solana.PublicKey
		data    []byte
	}
	add := func(in solana.Instruction) {
		data, err := in.Data()
		require.NoError(tb, err)
		out = append(out, struct {
			program solana.PublicKey
			data    []byte
		}{in.ProgramID(), data})
	}
	for _, in := range append(append(f.stakeInstrs(), f.unstakeInstrs()...), f.withdrawInstrs()...) {
		add(in)
	}
	add(f.createWithSeed(f.staker, "", f.derived, 1, solana.StakeProgramID))
	add(f.createWithSeed(f.staker, strings.Repeat("s", 40), f.derived, 1, solana.StakeProgramID))
	add(authorize(f.derived, f.stranger, f.staker))
	add(system.NewTransferInstruction(5000, f.staker, f.stranger).Build())
	return out
}

// TestInstructionDataBothWays mutates the accepted layouts (every truncation, one extra byte,
// seed lengths off by one either way) and requires both decoders to agree on each.
func TestInstructionDataBothWays(t *testing.T) {
	for _, seed := range instrDataSeeds(t) {
		variants := [][]byte{append(append([]byte{}, seed.data...), 0)}
		for n := 0; n <= len(seed.data); n++ {
			variants = append(variants, seed.data[:n])
		}
		if d, _ := discriminator(seed.data); seed.program == solana.SystemProgramID && d == system.Instruction_CreateAccountWithSeed {
			n := binary.LittleEndian.Uint64(seed.data[36:])
			for _, m := range []uint64{n - 1, n + 1, 1 << 31, 1<<63 + n, ^uint64(0)} {
				v := append([]byte{}, seed.data...)
				binary.LittleEndian.PutUint64(v[36:], m)
				variants = append(variants, v)
			}
		}
		for _, data := range variants {
			hand, hok := handDecode(seed.program, data)
			ref, rok := refDecode(seed.program, data)
			require.Equal(t, rok, hok, "%s % x", seed.program, data)
			if hok {
				require.Equal(t, ref.normalize(), hand.normalize(), "%s % x", seed.program, data)
			}
		}
	}
}

// FuzzInstructionLayouts holds the hand decoders to solana-go's on arbitrary data for the system
// and stake programs: they accept the same data, with the same values.
func FuzzInstructionLayouts(f *testing.F) {
	for _, s := range instrDataSeeds(f) {
		f.Add(s.program == solana.StakeProgramID, s.data)
	}
	f.Fuzz(func(t *testing.T, isStake bool, data []byte) {
		program := solana.SystemProgramID
		if isStake {
			program = solana.StakeProgramID
		}
		hand, hok := handDecode(program, data)
		ref, rok := refDecode(program, data)
		if hok != rok {
			t.Fatalf("%s % x: hand decoder %v, solana-go %v", program, data, hok, rok)
		}
		if hok && !assert.ObjectsAreEqual(ref.normalize(), hand.normalize()) {
			t.Fatalf("%s % x: hand decoder %+v, solana-go %+v", program, data, hand, ref)
		}
	})
}

func TestDeriveWithSeedMatchesReference(t *testing.T) {
	f := newFixture()
	for n := 0; n <= solana.MaxSeedLength+2; n++ {
		seed := strings.Repeat("x", n)
		want, werr := solana.CreateWithSeed(f.staker, seed, solana.StakeProgramID)
		got, ok := deriveWithSeed(f.staker, []byte(seed), solana.StakeProgramID)
		require.Equal(t, werr == nil, ok, "seed of %d bytes", n)
		assert.Equal(t, want, got, "seed of %d bytes", n)
	}
}

// TestMalformedAcceptedLayout: data of an accepted instruction that does not fit its layout is
// refused with solana-go's reason, as it always was.
func TestMalformedAcceptedLayout(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	withData := func(in solana.Instruction, data []byte) solana.Instruction {
		return solana.NewInstruction(in.ProgramID(), in.Accounts(), data)
	}
	data := func(in solana.Instruction) []byte { d, _ := in.Data(); return d }
	stakeInstrs := f.stakeInstrs()
	for _, tc := range []struct {
		name   string
		intent Intent
		instrs []solana.Instruction
		want   string
	}{
		{"create with seed truncated", f.stakeIntent(), []solana.Instruction{withData(stakeInstrs[0], data(stakeInstrs[0])[:60]), stakeInstrs[1], stakeInstrs[2]},
			"instruction #0 system.CreateAccountWithSeed: want well-formed instruction data, got instruction data does not decode"},
		{"create with seed trailing byte", f.stakeIntent(), []solana.Instruction{withData(stakeInstrs[0], append(data(stakeInstrs[0]), 0)), stakeInstrs[1], stakeInstrs[2]},
			"instruction #0 system.CreateAccountWithSeed: want well-formed instruction data, got instruction data has 1 trailing bytes"},
		{"initialize trailing byte", f.stakeIntent(), []solana.Instruction{stakeInstrs[0], withData(stakeInstrs[1], append(data(stakeInstrs[1]), 0)), stakeInstrs[2]},
			"instruction #1 stake.Initialize: want well-formed instruction data, got instruction data has 1 trailing bytes"},
		{"delegate trailing byte", f.stakeIntent(), []solana.Instruction{stakeInstrs[0], stakeInstrs[1], withData(stakeInstrs[2], append(data(stakeInstrs[2]), 9))},
			"instruction #2 stake.DelegateStake: want well-formed instruction data, got instruction data has 1 trailing bytes"},
		{"deactivate trailing byte", f.unstakeIntent(), []solana.Instruction{withData(f.unstakeInstrs()[0], append(data(f.unstakeInstrs()[0]), 0))},
			"instruction #0 stake.Deactivate: want well-formed instruction data, got instruction data has 1 trailing bytes"},
		{"withdraw truncated", f.withdrawIntent(), []solana.Instruction{withData(f.withdrawInstrs()[0], data(f.withdrawInstrs()[0])[:8])},
			"instruction #0 stake.Withdraw: want well-formed instruction data, got instruction data does not decode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Sign(context.Background(), f.tx64(t, f.staker, tc.instrs...), tc.intent)
			require.ErrorIs(t, err, ErrVerification)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
