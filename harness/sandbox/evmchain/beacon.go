package evmchain

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
)

// The beacon state model of the stand-in EigenPod (see contracts/EigenPod.sol), with the geometry
// EigenLayer's BeaconChainProofs checks (Layr-Labs/eigenlayer-contracts
// src/contracts/libraries/BeaconChainProofs.sol at commit
// f84a5151080cdf0b77b9b6e46506cde723d06c28), as the consensus specs lay the containers out:
//
//   - the beacon block root is the root of the BeaconBlockHeader's 5 fields padded to 8 leaves
//     (height BeaconBlockHeaderTreeHeight), state_root at StateRootIndex;
//   - the beacon state root is the root of the BeaconState's fields padded to 32 leaves for Deneb
//     (height 5), 64 for Electra/Pectra (height 6), balances at BalanceContainerIndex;
//   - the balances container root is the SSZ root of List[Gwei, 2^40]: its chunks (four
//     little-endian uint64 gwei balances each) in a tree of height BalanceTreeHeight, the list's
//     length mixed in above it.
//
// The other fields hold stand-in values. The trees are sparse: chunks past the pod's validators
// are the zero chunk, and their subtrees' roots the zero hashes.
const (
	BeaconBlockHeaderTreeHeight = 3
	StateRootIndex              = 3
	DenebBeaconStateTreeHeight  = 5
	PectraBeaconStateTreeHeight = 6
	BalanceContainerIndex       = 12
	BalanceTreeHeight           = 38
	// MaxPodValidators is how many validators the sandbox gives a pod (a large pod's checkpoint
	// is many batches: the history-bound tests prove one of 10,000).
	MaxPodValidators = 16_384
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
	// pectra: the state has Electra's shape (a state tree of height 6).
	pectra bool
	// chunks are the balances tree's levels: chunks[0] the chunks, chunks[BalanceTreeHeight] its
	// root (each level only as long as it is not made of zero subtrees).
	chunks    [][][32]byte
	container [32]byte
	// state and header are the state's and block header's levels.
	state, header [][][32]byte
}

var zeroHashes = func() (z [BalanceTreeHeight + 1][32]byte) {
	for i := 1; i <= BalanceTreeHeight; i++ {
		z[i] = sha(z[i-1], z[i-1])
	}
	return z
}()

func sha(a, b [32]byte) [32]byte {
	return sha256.Sum256(append(a[:], b[:]...))
}

// buildLevels merkleizes leaves into a tree of height levels, a missing right node at level h
// being the zero subtree's root.
func buildLevels(leaves [][32]byte, height int) [][][32]byte {
	levels := [][][32]byte{leaves}
	for h := 0; h < height; h++ {
		prev := levels[h]
		next := make([][32]byte, (len(prev)+1)/2)
		for i := range next {
			right := zeroHashes[h]
			if 2*i+1 < len(prev) {
				right = prev[2*i+1]
			}
			next[i] = sha(prev[2*i], right)
		}
		levels = append(levels, next)
	}
	return levels
}

func rootOf(levels [][][32]byte) [32]byte {
	top := levels[len(levels)-1]
	if len(top) == 0 {
		return zeroHashes[len(levels)-1]
	}
	return top[0]
}

func proofOf(levels [][][32]byte, index int) []byte {
	out := make([]byte, 0, 32*(len(levels)-1))
	for h := 0; h < len(levels)-1; h++ {
		sib := zeroHashes[h]
		if index^1 < len(levels[h]) {
			sib = levels[h][index^1]
		}
		out = append(out, sib[:]...)
		index /= 2
	}
	return out
}

// lengthChunk is the SSZ length mixed in above a list's tree: a little-endian uint256.
func lengthChunk(n int) (c [32]byte) {
	binary.LittleEndian.PutUint64(c[:], uint64(n))
	return c
}

// newBeaconState builds the trees of balances (gwei, by validator index), in Deneb's shape or,
// pectra, Electra's.
func newBeaconState(balances []uint64, pectra bool) (*beaconState, error) {
	if len(balances) > MaxPodValidators {
		return nil, fmt.Errorf("evmchain: %d validators: a pod's beacon state holds at most %d", len(balances), MaxPodValidators)
	}
	leaves := make([][32]byte, (len(balances)+3)/4)
	for i, b := range balances {
		binary.LittleEndian.PutUint64(leaves[i/4][8*(i%4):], b)
	}
	s := &beaconState{balances: append([]uint64(nil), balances...), pectra: pectra, chunks: buildLevels(leaves, BalanceTreeHeight)}
	s.container = sha(rootOf(s.chunks), lengthChunk(len(balances)))
	height := DenebBeaconStateTreeHeight
	if pectra {
		height = PectraBeaconStateTreeHeight
	}
	fields := make([][32]byte, 1<<height)
	for i := range fields {
		fields[i] = sha256.Sum256([]byte(fmt.Sprintf("stand-in beacon state field %d", i)))
	}
	fields[BalanceContainerIndex] = s.container
	s.state = buildLevels(fields, height)
	header := make([][32]byte, 1<<BeaconBlockHeaderTreeHeight)
	binary.LittleEndian.PutUint64(header[0][:], uint64(len(balances))) // slot
	header[2] = sha256.Sum256([]byte("stand-in parent root"))
	header[StateRootIndex] = rootOf(s.state)
	header[4] = sha256.Sum256([]byte("stand-in body root"))
	s.header = buildLevels(header, BeaconBlockHeaderTreeHeight)
	return s, nil
}

func (s *beaconState) containerRoot() [32]byte { return s.container }

// root is the beacon block root.
func (s *beaconState) root() common.Hash { return rootOf(s.header) }

// containerProof climbs from the balances field of the state to the state root, then from the
// state root's field of the header to the block root.
func (s *beaconState) containerProof() BalanceContainerProof {
	proof := append(proofOf(s.state, BalanceContainerIndex), proofOf(s.header, StateRootIndex)...)
	return BalanceContainerProof{BalanceContainerRoot: s.containerRoot(), Proof: proof}
}

// balanceProof climbs from validator index's chunk to the balances tree's root, then over the
// length to the container root.
func (s *beaconState) balanceProof(index int, pubkeyHash common.Hash) BalanceProof {
	var chunk [32]byte
	if index/4 < len(s.chunks[0]) {
		chunk = s.chunks[0][index/4]
	}
	length := lengthChunk(len(s.balances))
	return BalanceProof{PubkeyHash: pubkeyHash, BalanceRoot: chunk, Proof: append(proofOf(s.chunks, index/4), length[:]...)}
}

// PubkeyHash is the pubkey hash the sandbox gives validator index of pod: SHA-256 of the pod's
// address and the index (the beacon chain hashes the validator's BLS key).
func PubkeyHash(pod common.Address, index int) common.Hash {
	var b [28]byte
	copy(b[:], pod[:])
	binary.BigEndian.PutUint64(b[20:], uint64(index))
	return sha256.Sum256(b[:])
}
