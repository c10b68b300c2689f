package evm

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// The beacon chain proof geometry an EigenPod checks checkpoint proofs with, by fork, as
// EigenLayer's BeaconChainProofs library defines it. Source of every constant below:
// github.com/Layr-Labs/eigenlayer-contracts src/contracts/libraries/BeaconChainProofs.sol at
// commit f84a5151080cdf0b77b9b6e46506cde723d06c28 (the fork choice: src/contracts/pods/EigenPod.sol
// `_getProofVersion`, same commit).
const (
	// BeaconBlockHeaderTreeHeight is BEACON_BLOCK_HEADER_TREE_HEIGHT: the BeaconBlockHeader's 5
	// fields padded to 8 leaves.
	BeaconBlockHeaderTreeHeight = 3
	// StateRootIndex is STATE_ROOT_INDEX: state_root is field 3 of the BeaconBlockHeader.
	StateRootIndex = 3
	// DenebBeaconStateTreeHeight is DENEB_BEACON_STATE_TREE_HEIGHT (the Deneb BeaconState's fields
	// padded to 32 leaves).
	DenebBeaconStateTreeHeight = 5
	// PectraBeaconStateTreeHeight is PECTRA_BEACON_STATE_TREE_HEIGHT (the Electra BeaconState's
	// 37 fields padded to 64 leaves).
	PectraBeaconStateTreeHeight = 6
	// BalanceContainerIndex is BALANCE_CONTAINER_INDEX: balances is field 12 of the BeaconState.
	BalanceContainerIndex = 12
	// BalanceTreeHeight is BALANCE_TREE_HEIGHT: the balances list's chunks (four uint64 gwei
	// balances each) form a tree of height 38; a balance proof has one more sibling, the list's
	// length mixed in (verifyValidatorBalance: `32 * (BALANCE_TREE_HEIGHT + 1)`).
	BalanceTreeHeight = 38
)

// ProofVersion is BeaconChainProofs.ProofVersion: the fork whose state geometry a proof follows.
type ProofVersion int

// Proof versions.
const (
	ProofDeneb ProofVersion = iota
	ProofPectra
)

func (v ProofVersion) String() string {
	if v == ProofPectra {
		return "pectra"
	}
	return "deneb"
}

// ProofVersionAt is EigenPod._getProofVersion: a proof (checkpoint) timestamp at or before the
// Pectra fork timestamp the EigenPodManager holds is Deneb (the EIP-4788 root at the fork's first
// block is its pre-Pectra parent's), after it Pectra. A zero fork timestamp is refused, as the
// pod refuses it (ForkTimestampZero).
func ProofVersionAt(proofTimestamp, pectraForkTimestamp uint64) (ProofVersion, error) {
	if pectraForkTimestamp == 0 {
		return 0, fmt.Errorf("the Pectra fork timestamp is zero: an EigenPod verifies no proof under it (ForkTimestampZero)")
	}
	if proofTimestamp <= pectraForkTimestamp {
		return ProofDeneb, nil
	}
	return ProofPectra, nil
}

// BeaconStateTreeHeight is BeaconChainProofs.getBeaconStateTreeHeight.
func (v ProofVersion) BeaconStateTreeHeight() uint64 {
	if v == ProofPectra {
		return PectraBeaconStateTreeHeight
	}
	return DenebBeaconStateTreeHeight
}

// BalanceContainerProofLength is the length verifyBalanceContainer requires:
// 32 × (BEACON_BLOCK_HEADER_TREE_HEIGHT + the state tree's height).
func (v ProofVersion) BalanceContainerProofLength() int {
	return 32 * int(BeaconBlockHeaderTreeHeight+v.BeaconStateTreeHeight())
}

// BalanceContainerGIndex is the index verifyBalanceContainer walks the proof with: the state
// root's index in the block header above the balances' index in the state,
// (STATE_ROOT_INDEX << stateTreeHeight) | BALANCE_CONTAINER_INDEX.
func (v ProofVersion) BalanceContainerGIndex() uint64 {
	return StateRootIndex<<v.BeaconStateTreeHeight() | BalanceContainerIndex
}

// BalanceProofLength is the length verifyValidatorBalance requires: 32 × (BALANCE_TREE_HEIGHT + 1).
const BalanceProofLength = 32 * (BalanceTreeHeight + 1)

// VerifyBalanceContainer is BeaconChainProofs.verifyBalanceContainer: proof (the balance
// container's siblings up the state tree, then the state root's up the block header, bottom-up)
// leads from containerRoot to blockRoot under version's geometry.
func VerifyBalanceContainer(v ProofVersion, blockRoot, containerRoot [32]byte, proof []byte) bool {
	return len(proof) == v.BalanceContainerProofLength() && verifyInclusionSHA256(proof, blockRoot, containerRoot, v.BalanceContainerGIndex())
}

// VerifyBalance is BeaconChainProofs.verifyValidatorBalance: proof leads from balanceRoot (the
// chunk of four balances holding validatorIndex's) to containerRoot at chunk validatorIndex/4; it
// returns the validator's balance in gwei (little-endian uint64 at position validatorIndex%4).
func VerifyBalance(containerRoot [32]byte, validatorIndex uint64, balanceRoot [32]byte, proof []byte) (uint64, bool) {
	if len(proof) != BalanceProofLength || !verifyInclusionSHA256(proof, containerRoot, balanceRoot, validatorIndex/4) {
		return 0, false
	}
	return binary.LittleEndian.Uint64(balanceRoot[8*(validatorIndex%4):]), true
}

// verifyInclusionSHA256 is Merkle.verifyInclusionSha256 (eigenlayer-contracts
// src/contracts/libraries/Merkle.sol, same commit): siblings bottom-up, the index's low bit
// choosing the side at each level, the index used up at the top, a zero root refused.
func verifyInclusionSHA256(proof []byte, root, leaf [32]byte, index uint64) bool {
	if len(proof) == 0 || len(proof)%32 != 0 || root == ([32]byte{}) {
		return false
	}
	node := leaf
	var buf [64]byte
	for i := 0; i < len(proof); i += 32 {
		if index%2 == 0 {
			copy(buf[:32], node[:])
			copy(buf[32:], proof[i:i+32])
		} else {
			copy(buf[:32], proof[i:i+32])
			copy(buf[32:], node[:])
		}
		node = sha256.Sum256(buf[:])
		index /= 2
	}
	return index == 0 && node == root
}

// PectraForkTimestamps is the catalogue of each known network's Pectra (Prague/Electra) fork
// timestamp by chain id: the timestamp of the first slot of the Electra fork epoch. Source:
// github.com/ethereum/go-ethereum@v1.17.10 params/chainspecs/{mainnet,sepolia,hoodi}.json
// `pragueTime` (mainnet: ELECTRA_FORK_EPOCH 364032 of ethereum/consensus-specs
// configs/mainnet.yaml, genesis 1606824023 + 364032 × 32 × 12 s = 1746612311).
var PectraForkTimestamps = map[uint64]uint64{
	1:        1746612311, // mainnet
	11155111: 1741159776, // sepolia
	560048:   1742999832, // hoodi
}

// forkTimestampSlack is how far after the fork's first slot the EigenPodManager's value may lie:
// EigenLayer sets "the timestamp of the first non-missed slot at or after the Pectra hard fork"
// (EigenPod.sol `_getProofVersion`), so a run of missed slots moves it on; one epoch of them is
// allowed (32 slots × 12 s).
const forkTimestampSlack = 32 * 12

// CheckPectraForkTimestamp checks the Pectra fork timestamp an EigenPodManager answers on chain
// chainID: never zero, and for a network in PectraForkTimestamps within one epoch after the
// catalogue's first slot of the fork. The error names both values.
func CheckPectraForkTimestamp(chainID, onChain uint64) error {
	if onChain == 0 {
		return fmt.Errorf("the EigenPodManager's pectraForkTimestamp is 0: an EigenPod verifies no proof under it (ForkTimestampZero)")
	}
	want, known := PectraForkTimestamps[chainID]
	if known && (onChain < want || onChain > want+forkTimestampSlack) {
		return fmt.Errorf("the EigenPodManager's pectraForkTimestamp is %d, chain id %d forked to Pectra at %d (the first non-missed slot may be at most %d s later)",
			onChain, chainID, want, forkTimestampSlack)
	}
	return nil
}
