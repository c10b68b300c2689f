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
	pod, err := Artifact(ContractEigenPod)
	require.NoError(t, err)
	for _, sig := range []string{"currentCheckpoint()", "currentCheckpointTimestamp()", "lastCheckpointTimestamp()", "activeValidatorCount()"} {
		_, err := pod.ABI.MethodById(crypto.Keccak256([]byte(sig))[:4])
		assert.NoError(t, err, "EigenPod lacks %s", sig)
	}
	assert.Equal(t, "(bytes32,uint24,uint64,int64,uint64)", pod.ABI.Methods["currentCheckpoint"].Outputs[0].Type.String())
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

// TestBeaconProofs: the model's proofs verify with crypto/sha256 alone, and a balance leaf holds
// the four balances little-endian.
func TestBeaconProofs(t *testing.T) {
	balances := []uint64{32e9, 32e9 + 1, 31e9, 5, 7}
	s, err := newBeaconState(balances)
	require.NoError(t, err)
	c := s.containerProof()
	assert.True(t, verifyIndependently(c.Proof, s.root(), c.BalanceContainerRoot, BalanceContainerIndex))
	assert.False(t, verifyIndependently(c.Proof, s.root(), c.BalanceContainerRoot, BalanceContainerIndex-1))
	for i, b := range balances {
		p := s.balanceProof(i, PubkeyHash(common.Address{1}, i))
		assert.True(t, verifyIndependently(p.Proof, c.BalanceContainerRoot, p.BalanceRoot, uint64(i/4)), "validator %d", i)
		assert.Equal(t, b, binary.LittleEndian.Uint64(p.BalanceRoot[8*(i%4):]))
	}
}
