package evm

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rlp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckpointSelectors: the ABI's selectors are EigenLayer's published ones, recomputed with
// go-ethereum's Keccak256 from the signatures.
func TestCheckpointSelectors(t *testing.T) {
	for sig, sel := range map[string]string{
		"startCheckpoint(bool)": "88676cad",
		"verifyCheckpointProofs((bytes32,bytes),(bytes32,bytes32,bytes)[])": "f074ba62",
		"getPod(address)": "a38406a3",
	} {
		assert.Equal(t, sel, hex.EncodeToString(crypto.Keccak256([]byte(sig))[:4]), sig)
		m, err := checkpointABI.MethodById(crypto.Keccak256([]byte(sig))[:4])
		require.NoError(t, err, sig)
		assert.Equal(t, sig, m.Sig)
	}
}

var (
	testPod   = common.HexToAddress("0x00000000000000000000000000000000000e1901")
	otherPod  = common.HexToAddress("0x00000000000000000000000000000000000e1902")
	testChain = uint64(1337)
)

func checkpointSigner(t *testing.T) (*CheckpointSigner, common.Address) {
	t.Helper()
	key, err := crypto.HexToECDSA(secondKey[2:])
	require.NoError(t, err)
	addr := crypto.PubkeyToAddress(key.PublicKey)
	s, err := NewCheckpointSigner(&Keyring{keys: map[common.Address]*ecdsa.PrivateKey{addr: key}}, CheckpointPolicy{ChainID: testChain})
	require.NoError(t, err)
	return s, addr
}

// merkleProof returns the root of leaves (a power of two of them) and the proof of leaf index
// (siblings bottom-up), with crypto/sha256 alone.
func merkleProof(leaves [][32]byte, index int) ([32]byte, []byte) {
	var proof []byte
	level := leaves
	for len(level) > 1 {
		sib := level[index^1]
		proof = append(proof, sib[:]...)
		next := make([][32]byte, len(level)/2)
		for i := range next {
			next[i] = sha256.Sum256(append(append([]byte{}, level[2*i][:]...), level[2*i+1][:]...))
		}
		level, index = next, index/2
	}
	return level[0], proof
}

// containerProofFor builds, with crypto/sha256 alone, EigenLayer's geometry as BeaconChainProofs
// states it: a beacon state of 2^stateHeight fields (5 before Pectra, 6 after) whose field 12 is
// container, under a block header of 8 leaves whose leaf 3 is the state root; it returns the
// block root and container's proof (the state tree's siblings, then the header's).
func containerProofFor(container [32]byte, salt byte, stateHeight int) (common.Hash, []byte) {
	state := make([][32]byte, 1<<stateHeight)
	for i := range state {
		state[i] = sha256.Sum256([]byte{salt, 's', byte(i)})
	}
	state[12] = container
	stateRoot, stateProof := merkleProof(state, 12)
	header := make([][32]byte, 8)
	for i := range header {
		header[i] = sha256.Sum256([]byte{salt, 'h', byte(i)})
	}
	header[3] = stateRoot
	root, headerProof := merkleProof(header, 3)
	return root, append(stateProof, headerProof...)
}

// Timestamps of the fixtures: the Pectra fork at testFork, a checkpoint after it.
const (
	testFork       = 1_700_000_000
	testCheckpoint = testFork + 12
)

type servedTx struct {
	chainID    uint64
	to         *common.Address
	value      *big.Int
	gas        uint64
	fee        *big.Int
	data       []byte
	accessList types.AccessList
}

func (s servedTx) bytes(t *testing.T) []byte {
	t.Helper()
	al := s.accessList
	if al == nil {
		al = types.AccessList{}
	}
	body, err := rlp.EncodeToBytes([]any{new(big.Int).SetUint64(s.chainID), uint64(42), big.NewInt(params.GWei), s.fee, s.gas, s.to, s.value, s.data, al})
	require.NoError(t, err)
	return append([]byte{types.DynamicFeeTxType}, body...)
}

func proofsFixture(t *testing.T, n int, salt byte) (servedTx, ProofsIntent) {
	t.Helper()
	container := sha256.Sum256([]byte("balance container"))
	root, cproof := containerProofFor(container, salt, 6)
	var proofs []BalanceProof
	for i := 0; i < n; i++ {
		// 39 siblings: BALANCE_TREE_HEIGHT 38 and the list's length.
		proofs = append(proofs, BalanceProof{PubkeyHash: sha256.Sum256([]byte{byte(i)}), BalanceRoot: sha256.Sum256([]byte{0xb, byte(i)}), Proof: make([]byte, 39*32)})
	}
	data, err := CheckpointABI().Pack("verifyCheckpointProofs", BalanceContainerProof{container, cproof}, proofs)
	require.NoError(t, err)
	to := testPod
	served := servedTx{chainID: testChain, to: &to, value: new(big.Int), gas: 1_500_000, fee: big.NewInt(3 * params.GWei), data: data}
	in := ProofsIntent{ChainID: testChain, Pod: testPod, CheckpointRoot: root, ProofsRemaining: 200,
		CheckpointTimestamp: testCheckpoint, PectraForkTimestamp: testFork,
		TxChoices: TxChoices{Nonce: 7, GasLimit: 2_000_000, MaxFeePerGas: big.NewInt(2 * params.GWei), MaxPriorityFeePerGas: big.NewInt(params.GWei)}}
	return served, in
}

// TestSignProofsHonest: an honest batch is signed as stakeflow's transaction: the service's call,
// to the pod, under the intent's nonce, gas and fees (not the service's), by the submitter.
func TestSignProofsHonest(t *testing.T) {
	s, submitter := checkpointSigner(t)
	served, in := proofsFixture(t, 3, 1)
	in.Submitter = submitter
	signed, err := s.SignProofs(context.Background(), in, served.bytes(t))
	require.NoError(t, err)
	var tx types.Transaction
	require.NoError(t, tx.UnmarshalBinary(common.FromHex(signed.Transaction)))
	from, err := types.Sender(types.NewLondonSigner(tx.ChainId()), &tx)
	require.NoError(t, err)
	assert.Equal(t, submitter, from)
	assert.Equal(t, testPod, *tx.To())
	assert.Equal(t, served.data, tx.Data())
	assert.EqualValues(t, 7, tx.Nonce())
	assert.EqualValues(t, 2_000_000, tx.Gas())
	assert.Equal(t, in.MaxFeePerGas, tx.GasFeeCap())
	assert.Zero(t, tx.Value().Sign())
	v, err := s.VerifyProofs(in, served.bytes(t))
	require.NoError(t, err)
	assert.Equal(t, 3, v.Proofs)
}

// TestSignProofsHostile: each way a proofs transaction can differ from what the checkpoint needs
// is refused, naming the field, and nothing is signed.
func TestSignProofsHostile(t *testing.T) {
	s, submitter := checkpointSigner(t)
	cases := []struct {
		name, field string
		mutate      func(*servedTx, *ProofsIntent)
	}{
		{"to another pod", "to", func(st *servedTx, _ *ProofsIntent) { st.to = &otherPod }},
		{"contract creation", "to", func(st *servedTx, _ *ProofsIntent) { st.to = nil }},
		{"with value", "value", func(st *servedTx, _ *ProofsIntent) { st.value = big.NewInt(1) }},
		{"other chain", "chainId", func(st *servedTx, _ *ProofsIntent) { st.chainID = 1 }},
		{"other method", "selector", func(st *servedTx, _ *ProofsIntent) {
			st.data, _ = CheckpointABI().Pack("startCheckpoint", true)
		}},
		{"stale root", "checkpoint root", func(_ *servedTx, in *ProofsIntent) {
			// The pod's checkpoint root is another state's than the proofs'.
			_, other := proofsFixture(t, 1, 2)
			in.CheckpointRoot = other.CheckpointRoot
		}},
		{"checkpoint before the fork (a Pectra proof checked as Deneb)", "checkpoint root", func(_ *servedTx, in *ProofsIntent) {
			in.CheckpointTimestamp = testFork
		}},
		{"checkpoint at the fork, fork read one second later", "checkpoint root", func(_ *servedTx, in *ProofsIntent) {
			in.PectraForkTimestamp = testCheckpoint
		}},
		{"balance proof one sibling short", "balance proof", func(st *servedTx, _ *ProofsIntent) {
			args, err := checkpointABI.Methods["verifyCheckpointProofs"].Inputs.Unpack(st.data[4:])
			require.NoError(t, err)
			proofs := *abi.ConvertType(args[1], new([]BalanceProof)).(*[]BalanceProof)
			proofs[1].Proof = proofs[1].Proof[:38*32]
			st.data, err = checkpointABI.Pack("verifyCheckpointProofs", args[0], proofs)
			require.NoError(t, err)
		}},
		{"more than remaining", "proofs", func(_ *servedTx, in *ProofsIntent) { in.ProofsRemaining = 2 }},
		{"trailing bytes", "calldata", func(st *servedTx, _ *ProofsIntent) { st.data = append(append([]byte{}, st.data...), 0) }},
		{"gas over the cap", "gas limit", func(st *servedTx, _ *ProofsIntent) { st.gas = DefaultCheckpointMaxGasLimit + 1 }},
		{"fee over the cap", "maxFeePerGas", func(st *servedTx, _ *ProofsIntent) { st.fee = new(big.Int).Add(DefaultMaxFeePerGas, big.NewInt(1)) }},
		{"access list", "access list", func(st *servedTx, _ *ProofsIntent) {
			st.accessList = types.AccessList{{Address: otherPod}}
		}},
		{"our gas over the cap", "gas limit", func(_ *servedTx, in *ProofsIntent) { in.GasLimit = DefaultCheckpointMaxGasLimit + 1 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			served, in := proofsFixture(t, 3, 1)
			in.Submitter = submitter
			c.mutate(&served, &in)
			_, err := s.SignProofs(context.Background(), in, served.bytes(t))
			var ve *VerificationError
			require.True(t, errors.As(err, &ve), "%v", err)
			assert.Equal(t, c.field, ve.Field, "%v", err)
		})
	}
	t.Run("duplicate validator", func(t *testing.T) {
		served, in := proofsFixture(t, 2, 1)
		in.Submitter = submitter
		args, err := checkpointABI.Methods["verifyCheckpointProofs"].Inputs.Unpack(served.data[4:])
		require.NoError(t, err)
		p := args[1].([]struct {
			PubkeyHash  [32]uint8 `json:"pubkeyHash"`
			BalanceRoot [32]uint8 `json:"balanceRoot"`
			Proof       []uint8   `json:"proof"`
		})
		p[1] = p[0]
		served.data, err = checkpointABI.Pack("verifyCheckpointProofs", args[0], p)
		require.NoError(t, err)
		_, err = s.SignProofs(context.Background(), in, served.bytes(t))
		assert.ErrorContains(t, err, "one per validator")
	})
	t.Run("legacy transaction", func(t *testing.T) {
		_, in := proofsFixture(t, 1, 1)
		legacy, err := types.NewTx(&types.LegacyTx{To: &testPod, Gas: 21000, GasPrice: big.NewInt(1)}).MarshalBinary()
		require.NoError(t, err)
		_, err = s.SignProofs(context.Background(), in, legacy)
		assert.ErrorIs(t, err, ErrVerification)
	})
}

// TestSignStart: the owner's startCheckpoint is signed only when the unsigned bytes are exactly
// the expected call to the pod.
func TestSignStart(t *testing.T) {
	s, owner := checkpointSigner(t)
	in := StartIntent{ChainID: testChain, Owner: owner, Pod: testPod,
		TxChoices: TxChoices{Nonce: 3, GasLimit: 100_000, MaxFeePerGas: big.NewInt(2 * params.GWei), MaxPriorityFeePerGas: big.NewInt(params.GWei)}}
	// startCheckpoint(false) as published: selector 0x88676cad and one zero word.
	data := append(common.FromHex("0x88676cad"), make([]byte, 32)...)
	mk := func(to common.Address, data []byte, nonce uint64) []byte {
		raw, err := types.NewTx(&types.DynamicFeeTx{ChainID: new(big.Int).SetUint64(testChain), Nonce: nonce, GasTipCap: big.NewInt(params.GWei),
			GasFeeCap: big.NewInt(2 * params.GWei), Gas: 100_000, To: &to, Value: new(big.Int), Data: data}).MarshalBinary()
		require.NoError(t, err)
		return raw
	}
	signed, err := s.SignStart(context.Background(), in, mk(testPod, data, 3))
	require.NoError(t, err)
	assert.Equal(t, owner, signed.Sender)
	for name, raw := range map[string][]byte{
		"other pod":       mk(otherPod, data, 3),
		"revert if empty": mk(testPod, append(common.FromHex("0x88676cad"), common.LeftPadBytes([]byte{1}, 32)...), 3),
		"other nonce":     mk(testPod, data, 4),
		"trailing byte":   mk(testPod, append(append([]byte{}, data...), 1), 3),
	} {
		_, err := s.SignStart(context.Background(), in, raw)
		assert.ErrorIs(t, err, ErrVerification, name)
	}
	_, err = s.SignStart(context.Background(), StartIntent{ChainID: testChain, Owner: common.Address{9}, Pod: testPod, TxChoices: in.TxChoices}, mk(testPod, data, 3))
	assert.ErrorIs(t, err, ErrUnknownKey)
}

// honestFields are the separate fields endpoint 5 answers beside proofsFixture's serializeTx,
// written out: to the test pod, gas 1,500,000, value 0, chain 1337, type 2, fee cap 3 gwei, tip
// 1 gwei.
func honestFields(served servedTx) ServedFields {
	return ServedFields{To: "0x00000000000000000000000000000000000E1901", GasLimit: "1500000", Data: "0x" + hex.EncodeToString(served.data),
		Value: "0", ChainID: "1337", Type: "2", MaxFeePerGas: "3000000000", MaxPriorityFeePerGas: "1000000000"}
}

// TestServedFieldsAgreeingWithSerializeTx: an answer whose fields say what its serializeTx says
// passes, in decimal or 0x hex, whatever the case of the hex.
func TestServedFieldsAgreeingWithSerializeTx(t *testing.T) {
	served, _ := proofsFixture(t, 3, 1)
	require.NoError(t, CheckServedFields(served.bytes(t), honestFields(served)))
	hexForm := ServedFields{To: "0x00000000000000000000000000000000000e1901", GasLimit: "0x16E360", Data: "0x" + strings.ToUpper(hex.EncodeToString(served.data)),
		Value: "0x0", ChainID: "0x539", Type: "0x2", MaxFeePerGas: "0xb2d05e00", MaxPriorityFeePerGas: "0x3b9aca00"}
	require.NoError(t, CheckServedFields(served.bytes(t), hexForm))
}

// TestServedFieldsContradictingSerializeTxAreRefused: each separate field of endpoint 5 that says
// another thing than the answer's own serializeTx, or is absent, refuses the whole answer,
// naming the field and both values, though serializeTx alone would pass.
func TestServedFieldsContradictingSerializeTxAreRefused(t *testing.T) {
	served, _ := proofsFixture(t, 3, 1)
	cases := []struct {
		field      string
		set        func(f *ServedFields)
		said, want string
	}{
		{"to", func(f *ServedFields) { f.To = otherPod.Hex() }, `"` + otherPod.Hex() + `"`, testPod.Hex()},
		{"to", func(f *ServedFields) { f.To = "" }, "absent", testPod.Hex()},
		{"data", func(f *ServedFields) { f.Data = "0xf074ba62" }, "4 bytes starting 0xf074ba62", fmt.Sprintf("%d bytes starting 0xf074ba62", len(served.data))},
		{"data", func(f *ServedFields) { f.Data = "proofs" }, `"proofs" (not 0x hex)`, "bytes starting 0xf074ba62"},
		{"value", func(f *ServedFields) { f.Value = "1000000000000000000" }, `"1000000000000000000"`, "is 0"},
		{"chainId", func(f *ServedFields) { f.ChainID = "1" }, `"1"`, "is 1337"},
		{"gasLimit", func(f *ServedFields) { f.GasLimit = "150000" }, `"150000"`, "is 1500000"},
		{"gasLimit", func(f *ServedFields) { f.GasLimit = "lots" }, `"lots"`, "is 1500000"},
		{"type", func(f *ServedFields) { f.Type = "0" }, `"0"`, "is 2"},
		{"maxFeePerGas", func(f *ServedFields) { f.MaxFeePerGas = "30000000000" }, `"30000000000"`, "is 3000000000"},
		{"maxPriorityFeePerGas", func(f *ServedFields) { f.MaxPriorityFeePerGas = "" }, "absent", "is 1000000000"},
	}
	for _, c := range cases {
		t.Run(c.field+" "+c.said, func(t *testing.T) {
			f := honestFields(served)
			c.set(&f)
			err := CheckServedFields(served.bytes(t), f)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrVerification)
			var ce *ContradictionError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, c.field, ce.Field)
			assert.Contains(t, err.Error(), "field "+c.field+" is "+c.said)
			assert.Contains(t, err.Error(), "serializeTx's "+c.field+" ")
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
