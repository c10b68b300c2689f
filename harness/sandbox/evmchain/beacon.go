package evmchain

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
)

// The beacon state model of the stand-in EigenPod (see contracts/EigenPod.sol): the beacon block
// root commits to the balance container root at leaf BalanceContainerIndex of a SHA-256 tree of
// height BlockTreeHeight; the balance container root commits to the balance leaves, four
// little-endian uint64 gwei balances each, in a SHA-256 tree of height BalanceTreeHeight.
const (
	BlockTreeHeight       = 3
	BalanceContainerIndex = 6
	BalanceTreeHeight     = 8
	// MaxPodValidators is how many validators a pod's balance tree holds.
	MaxPodValidators = 4 << BalanceTreeHeight
)

// BalanceContainerProof is the EigenPod's BalanceContainerProof tuple, as go-ethereum's abi
// packs and unpacks it.
type BalanceContainerProof struct {
	BalanceContainerRoot [32]byte
	Proof                []byte
}

// BalanceProof is the EigenPod's BalanceProof tuple.
type BalanceProof struct {
	PubkeyHash  [32]byte
	BalanceRoot [32]byte
	Proof       []byte
}

// beaconState is one posted state of a pod's validators' balances and its Merkle trees.
type beaconState struct {
	balances []uint64
	// levels[0] are the balance leaves, levels[BalanceTreeHeight] the container root.
	levels [][][32]byte
	// block[0] are the block tree's leaves, block[BlockTreeHeight] the beacon block root.
	block [][][32]byte
}

func sha(a, b [32]byte) [32]byte {
	return sha256.Sum256(append(a[:], b[:]...))
}

func buildLevels(leaves [][32]byte, height int) [][][32]byte {
	levels := [][][32]byte{leaves}
	for h := 0; h < height; h++ {
		prev := levels[h]
		next := make([][32]byte, len(prev)/2)
		for i := range next {
			next[i] = sha(prev[2*i], prev[2*i+1])
		}
		levels = append(levels, next)
	}
	return levels
}

func proofOf(levels [][][32]byte, index int) []byte {
	out := make([]byte, 0, 32*(len(levels)-1))
	for h := 0; h < len(levels)-1; h++ {
		sib := levels[h][index^1]
		out = append(out, sib[:]...)
		index /= 2
	}
	return out
}

// newBeaconState builds the trees of balances (gwei, by validator index).
func newBeaconState(balances []uint64) (*beaconState, error) {
	if len(balances) > MaxPodValidators {
		return nil, fmt.Errorf("evmchain: %d validators: a pod's beacon state holds at most %d", len(balances), MaxPodValidators)
	}
	leaves := make([][32]byte, 1<<BalanceTreeHeight)
	for i, b := range balances {
		binary.LittleEndian.PutUint64(leaves[i/4][8*(i%4):], b)
	}
	s := &beaconState{balances: append([]uint64(nil), balances...), levels: buildLevels(leaves, BalanceTreeHeight)}
	block := make([][32]byte, 1<<BlockTreeHeight)
	for i := range block {
		block[i] = sha256.Sum256([]byte(fmt.Sprintf("stand-in beacon block field %d", i)))
	}
	block[BalanceContainerIndex] = s.containerRoot()
	s.block = buildLevels(block, BlockTreeHeight)
	return s, nil
}

func (s *beaconState) containerRoot() [32]byte { return s.levels[BalanceTreeHeight][0] }

// root is the beacon block root.
func (s *beaconState) root() common.Hash { return s.block[BlockTreeHeight][0] }

func (s *beaconState) containerProof() BalanceContainerProof {
	return BalanceContainerProof{BalanceContainerRoot: s.containerRoot(), Proof: proofOf(s.block, BalanceContainerIndex)}
}

func (s *beaconState) balanceProof(index int, pubkeyHash common.Hash) BalanceProof {
	return BalanceProof{PubkeyHash: pubkeyHash, BalanceRoot: s.levels[0][index/4], Proof: proofOf(s.levels, index/4)}
}

// PubkeyHash is the pubkey hash the sandbox gives validator index of pod: SHA-256 of the pod's
// address and the index (the beacon chain hashes the validator's BLS key).
func PubkeyHash(pod common.Address, index int) common.Hash {
	var b [28]byte
	copy(b[:], pod[:])
	binary.BigEndian.PutUint64(b[20:], uint64(index))
	return sha256.Sum256(b[:])
}
