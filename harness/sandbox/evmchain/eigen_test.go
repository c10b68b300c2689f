package evmchain

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// eigenSelectors are EigenLayer's EigenPod and EigenPodManager selectors as published (the
// EigenPod checkpoint calls' 4-byte selectors, and getPod/createPod of the EigenPodManager).
var eigenSelectors = []struct {
	contract, signature, selector string
}{
	{ContractEigenPod, "startCheckpoint(bool)", "88676cad"},
	{ContractEigenPod, "verifyCheckpointProofs((bytes32,bytes),(bytes32,bytes32,bytes)[])", "f074ba62"},
	{ContractEigenPodManager, "getPod(address)", "a38406a3"},
	{ContractEigenPodManager, "createPod()", "84d81062"},
}

// eigenSignatures are functions of EigenLayer's IEigenPod.sol and IEigenPodManager.sol
// (Layr-Labs/eigenlayer-contracts at commit f84a5151080cdf0b77b9b6e46506cde723d06c28) the
// stand-ins have with the same signatures.
var eigenSignatures = map[string][]string{
	ContractEigenPod: {"currentCheckpoint()", "currentCheckpointTimestamp()", "lastCheckpointTimestamp()", "activeValidatorCount()",
		"validatorPubkeyHashToInfo(bytes32)"},
	ContractEigenPodManager: {"pectraForkTimestamp()", "setPectraForkTimestamp(uint64)"},
}

// TestSelectorsAreEigenLayers: each selector, computed with go-ethereum's Keccak256 from its
// signature and read from the compiled ABI, is EigenLayer's; the checkpoint getters exist with
// EigenLayer's signatures.
func TestSelectorsAreEigenLayers(t *testing.T) {
	for _, s := range eigenSelectors {
		assert.Equal(t, s.selector, hex.EncodeToString(crypto.Keccak256([]byte(s.signature))[:4]), "keccak of %s", s.signature)
		a, err := Artifact(s.contract)
		require.NoError(t, err)
		m, err := a.ABI.MethodById(mustHex(t, s.selector))
		if assert.NoError(t, err, "%s has no method with selector %s", s.contract, s.selector) {
			assert.Equal(t, s.signature, m.Sig)
		}
	}
	for contract, sigs := range eigenSignatures {
		a, err := Artifact(contract)
		require.NoError(t, err)
		for _, sig := range sigs {
			_, err := a.ABI.MethodById(crypto.Keccak256([]byte(sig))[:4])
			assert.NoError(t, err, "%s lacks %s", contract, sig)
		}
	}
	pod, err := Artifact(ContractEigenPod)
	require.NoError(t, err)
	assert.Equal(t, "(bytes32,uint24,uint64,int64,uint64)", pod.ABI.Methods["currentCheckpoint"].Outputs[0].Type.String())
	assert.Equal(t, "(uint64,uint64,uint64,uint8)", pod.ABI.Methods["validatorPubkeyHashToInfo"].Outputs[0].Type.String())
	for name, sig := range map[string]string{
		"CheckpointCreated":     "CheckpointCreated(uint64,bytes32,uint256)",
		"CheckpointFinalized":   "CheckpointFinalized(uint64,int256)",
		"ValidatorCheckpointed": "ValidatorCheckpointed(uint64,bytes32)",
		"ValidatorWithdrawn":    "ValidatorWithdrawn(uint64,bytes32)",
	} {
		assert.Equal(t, sig, pod.ABI.Events[name].Sig, name)
	}
}

// verifyIndependently walks a proof with crypto/sha256 as the beacon chain's SSZ Merkle proofs
// are walked (sibling hashes bottom-up, the index's bits choosing the side).
func verifyIndependently(proof []byte, root, leaf [32]byte, index uint64) bool {
	node := leaf
	for i := 0; i+32 <= len(proof); i += 32 {
		var buf []byte
		if index%2 == 0 {
			buf = append(append(buf, node[:]...), proof[i:i+32]...)
		} else {
			buf = append(append(buf, proof[i:i+32]...), node[:]...)
		}
		node = sha256.Sum256(buf)
		index /= 2
	}
	return node == root && index == 0
}

// TestBeaconProofs: the model's proofs verify with crypto/sha256 alone at EigenLayer's indices
// (written out: the balance container at (3 << 5) | 12 = 108 under a Deneb block root, 8
// siblings; at (3 << 6) | 12 = 204 under a Pectra one, 9 siblings; a balance chunk at
// validator/4 under 38 levels and the length, 39 siblings), and with the product's checker
// (signer/evm) for the fork; a balance leaf holds the four balances little-endian.
func TestBeaconProofs(t *testing.T) {
	balances := []uint64{32e9, 32e9 + 1, 31e9, 5, 7}
	for _, c := range []struct {
		pectra  bool
		index   uint64
		sibs    int
		version signerevm.ProofVersion
	}{{false, 108, 8, signerevm.ProofDeneb}, {true, 204, 9, signerevm.ProofPectra}} {
		s, err := newBeaconState(balances, c.pectra)
		require.NoError(t, err)
		cp := s.containerProof()
		assert.Len(t, cp.Proof, 32*c.sibs)
		assert.True(t, verifyIndependently(cp.Proof, s.root(), cp.BalanceContainerRoot, c.index), "pectra %v", c.pectra)
		assert.False(t, verifyIndependently(cp.Proof, s.root(), cp.BalanceContainerRoot, c.index-1), "pectra %v", c.pectra)
		assert.True(t, signerevm.VerifyBalanceContainer(c.version, s.root(), cp.BalanceContainerRoot, cp.Proof))
		assert.False(t, signerevm.VerifyBalanceContainer(1-c.version, s.root(), cp.BalanceContainerRoot, cp.Proof), "the other fork's geometry")
		for i, b := range balances {
			p := s.balanceProof(i, PubkeyHash(common.Address{1}, i))
			assert.Len(t, p.Proof, 39*32)
			assert.True(t, verifyIndependently(p.Proof, cp.BalanceContainerRoot, p.BalanceRoot, uint64(i/4)), "validator %d", i)
			assert.Equal(t, b, binary.LittleEndian.Uint64(p.BalanceRoot[8*(i%4):]))
			got, ok := signerevm.VerifyBalance(cp.BalanceContainerRoot, uint64(i), p.BalanceRoot, p.Proof)
			assert.True(t, ok, "validator %d", i)
			assert.Equal(t, b, got)
		}
	}
}

// TestBalancesContainerIsSSZ: the balances container root is the SSZ hash_tree_root of
// List[uint64, 2^40] computed naively here: chunks of four little-endian balances, padded with
// zero chunks to 2^38 by climbing zero subtrees, the length mixed in.
func TestBalancesContainerIsSSZ(t *testing.T) {
	balances := []uint64{1, 2, 3, 4, 5}
	s, err := newBeaconState(balances, true)
	require.NoError(t, err)
	var c0, c1, zero [32]byte
	for i := 0; i < 4; i++ {
		binary.LittleEndian.PutUint64(c0[8*i:], balances[i])
	}
	binary.LittleEndian.PutUint64(c1[:], balances[4])
	h := func(a, b [32]byte) [32]byte { return sha256.Sum256(append(a[:], b[:]...)) }
	node := h(c0, c1)
	z := h(zero, zero)
	for level := 1; level < 38; level++ {
		node = h(node, z)
		z = h(z, z)
	}
	var length [32]byte
	length[0] = 5
	assert.Equal(t, h(node, length), s.containerRoot())
}
