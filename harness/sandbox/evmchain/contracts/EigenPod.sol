// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import "./BeaconRootOracle.sol";

interface IPodManager {
    function owner() external view returns (address);
    function pectraForkTimestamp() external view returns (uint64);
}

/// @title EigenPod: a stand-in for EigenLayer's EigenPod checkpoints on a local chain.
/// @notice startCheckpoint, verifyCheckpointProofs, currentCheckpoint, currentCheckpointTimestamp,
/// lastCheckpointTimestamp, activeValidatorCount and validatorPubkeyHashToInfo have EigenLayer's
/// signatures (hence selectors) and meaning, and checkpoint proofs are checked with EigenLayer's
/// geometry (Layr-Labs/eigenlayer-contracts src/contracts/libraries/BeaconChainProofs.sol and
/// src/contracts/pods/EigenPod.sol at commit f84a5151080cdf0b77b9b6e46506cde723d06c28):
///
///   - The checkpoint's beacon block root is read from the BeaconRootOracle the sandbox posts to
///     (EigenLayer reads EIP-4788), when the checkpoint starts.
///   - The proof version is chosen by the checkpoint timestamp against the EigenPodManager's
///     pectraForkTimestamp (at or before it: Deneb, after it: Pectra; zero refused).
///   - The balance container proof climbs from the balances container (field
///     BALANCE_CONTAINER_INDEX 12 of the beacon state, a tree of height 5 for Deneb, 6 for Pectra)
///     through the beacon state root (field STATE_ROOT_INDEX 3 of the block header, a tree of
///     height BEACON_BLOCK_HEADER_TREE_HEIGHT 3) to the beacon block root, at index
///     (STATE_ROOT_INDEX << stateTreeHeight) | BALANCE_CONTAINER_INDEX. A balance proof climbs
///     BALANCE_TREE_HEIGHT 38 levels and the list's length from the chunk validatorIndex / 4 (four
///     little-endian uint64 gwei balances) to the container root. SHA-256, siblings bottom-up.
///   - A proof of a validator that is not active, or already proven in the current checkpoint, is
///     skipped, not reverted (EigenLayer's griefing protection).
///   - Validators are added by the manager's owner (addValidators), not by withdrawal-credential
///     proofs; podOwnerShares stands in for the EigenPodManager's shares of the owner.
///
/// Not EigenLayer's code.
contract EigenPod {
    struct BalanceContainerProof {
        bytes32 balanceContainerRoot;
        bytes proof;
    }

    struct BalanceProof {
        bytes32 pubkeyHash;
        bytes32 balanceRoot;
        bytes proof;
    }

    struct Checkpoint {
        bytes32 beaconBlockRoot;
        uint24 proofsRemaining;
        uint64 podBalanceGwei;
        int64 balanceDeltasGwei;
        uint64 prevBeaconBalanceGwei;
    }

    enum ValidatorStatus {
        INACTIVE,
        ACTIVE,
        WITHDRAWN
    }

    struct ValidatorInfo {
        uint64 validatorIndex;
        uint64 restakedBalanceGwei;
        uint64 lastCheckpointedAt;
        ValidatorStatus status;
    }

    uint256 public constant BEACON_BLOCK_HEADER_TREE_HEIGHT = 3;
    uint256 public constant DENEB_BEACON_STATE_TREE_HEIGHT = 5;
    uint256 public constant PECTRA_BEACON_STATE_TREE_HEIGHT = 6;
    uint256 public constant STATE_ROOT_INDEX = 3;
    uint256 public constant BALANCE_CONTAINER_INDEX = 12;
    uint256 public constant BALANCE_TREE_HEIGHT = 38;

    address public immutable podOwner;
    BeaconRootOracle public immutable oracle;
    address public immutable podManager;
    address public proofSubmitter;

    uint64 public lastCheckpointTimestamp;
    uint64 public currentCheckpointTimestamp;
    uint256 public activeValidatorCount;
    uint64 public withdrawableRestakedExecutionLayerGwei;
    int256 public podOwnerShares;

    Checkpoint internal _currentCheckpoint;
    mapping(bytes32 => ValidatorInfo) internal _validators;

    event CheckpointCreated(uint64 indexed checkpointTimestamp, bytes32 indexed beaconBlockRoot, uint256 validatorCount);
    event CheckpointFinalized(uint64 indexed checkpointTimestamp, int256 totalShareDeltaWei);
    event ValidatorCheckpointed(uint64 indexed checkpointTimestamp, bytes32 indexed pubkeyHash);
    event ValidatorWithdrawn(uint64 indexed checkpointTimestamp, bytes32 indexed pubkeyHash);
    event ValidatorBalanceUpdated(uint40 validatorIndex, uint64 balanceTimestamp, uint64 newValidatorBalanceGwei);
    event ProofSubmitterUpdated(address prevProofSubmitter, address newProofSubmitter);

    constructor(address _podOwner, BeaconRootOracle _oracle, address _podManager) {
        podOwner = _podOwner;
        oracle = _oracle;
        podManager = _podManager;
    }

    receive() external payable {}

    function currentCheckpoint() external view returns (Checkpoint memory) {
        return _currentCheckpoint;
    }

    function validatorPubkeyHashToInfo(bytes32 pubkeyHash) external view returns (ValidatorInfo memory) {
        return _validators[pubkeyHash];
    }

    function setProofSubmitter(address newProofSubmitter) external {
        require(msg.sender == podOwner, "EigenPod.onlyEigenPodOwner: not podOwner");
        emit ProofSubmitterUpdated(proofSubmitter, newProofSubmitter);
        proofSubmitter = newProofSubmitter;
    }

    /// @notice Registers active validators with their restaked balances (sandbox control).
    function addValidators(bytes32[] calldata pubkeyHashes, uint64[] calldata indices, uint64[] calldata balancesGwei) external {
        require(msg.sender == IPodManager(podManager).owner(), "EigenPod: only the manager's owner");
        require(pubkeyHashes.length == indices.length && indices.length == balancesGwei.length, "EigenPod: length mismatch");
        require(currentCheckpointTimestamp == 0, "EigenPod: checkpoint active");
        for (uint256 i = 0; i < pubkeyHashes.length; i++) {
            require(_validators[pubkeyHashes[i]].status == ValidatorStatus.INACTIVE, "EigenPod: validator known");
            require(indices[i] < 2 ** 40, "EigenPod: validator index too large");
            _validators[pubkeyHashes[i]] = ValidatorInfo({
                validatorIndex: indices[i],
                restakedBalanceGwei: balancesGwei[i],
                lastCheckpointedAt: lastCheckpointTimestamp,
                status: ValidatorStatus.ACTIVE
            });
            podOwnerShares += int256(uint256(balancesGwei[i])) * 1 gwei;
        }
        activeValidatorCount += pubkeyHashes.length;
    }

    function startCheckpoint(bool revertIfNoBalance) external {
        require(msg.sender == podOwner || msg.sender == proofSubmitter, "EigenPod.onlyOwnerOrProofSubmitter: caller is not pod owner or proof submitter");
        require(currentCheckpointTimestamp == 0, "EigenPod._startCheckpoint: must finish previous checkpoint before starting another");
        require(lastCheckpointTimestamp != uint64(block.timestamp), "EigenPod._startCheckpoint: cannot checkpoint twice in one block");
        uint64 podBalanceGwei = uint64(address(this).balance / 1 gwei) - withdrawableRestakedExecutionLayerGwei;
        if (revertIfNoBalance && podBalanceGwei == 0) {
            revert("EigenPod._startCheckpoint: no balance available to checkpoint");
        }
        bytes32 root = oracle.rootOf(address(this));
        require(root != bytes32(0), "EigenPod._startCheckpoint: no beacon block root");
        uint64 ts = uint64(block.timestamp);
        uint24 remaining = uint24(activeValidatorCount);
        _currentCheckpoint = Checkpoint({
            beaconBlockRoot: root,
            proofsRemaining: remaining,
            podBalanceGwei: podBalanceGwei,
            balanceDeltasGwei: 0,
            prevBeaconBalanceGwei: 0
        });
        currentCheckpointTimestamp = ts;
        if (remaining == 0) {
            _finalize();
        }
        emit CheckpointCreated(ts, root, remaining);
    }

    function verifyCheckpointProofs(BalanceContainerProof calldata balanceContainerProof, BalanceProof[] calldata proofs) external {
        uint64 ts = currentCheckpointTimestamp;
        require(ts != 0, "EigenPod.verifyCheckpointProofs: must have active checkpoint to perform checkpoint proof");
        Checkpoint memory cp = _currentCheckpoint;
        uint256 stateTreeHeight = _beaconStateTreeHeight(ts);
        require(
            balanceContainerProof.proof.length == 32 * (BEACON_BLOCK_HEADER_TREE_HEIGHT + stateTreeHeight),
            "EigenPod.verifyCheckpointProofs: invalid balance container proof length"
        );
        require(
            verifySha256(
                balanceContainerProof.proof,
                cp.beaconBlockRoot,
                balanceContainerProof.balanceContainerRoot,
                (STATE_ROOT_INDEX << stateTreeHeight) | BALANCE_CONTAINER_INDEX
            ),
            "EigenPod.verifyCheckpointProofs: invalid balance container proof"
        );
        for (uint256 i = 0; i < proofs.length; i++) {
            BalanceProof calldata p = proofs[i];
            ValidatorInfo memory info = _validators[p.pubkeyHash];
            // Skipped, not reverted: a validator not active, or already proven in this checkpoint.
            if (info.status != ValidatorStatus.ACTIVE || info.lastCheckpointedAt >= ts) {
                continue;
            }
            require(p.proof.length == 32 * (BALANCE_TREE_HEIGHT + 1), "EigenPod.verifyCheckpointProofs: invalid balance proof length");
            require(
                verifySha256(p.proof, balanceContainerProof.balanceContainerRoot, p.balanceRoot, info.validatorIndex / 4),
                "EigenPod.verifyCheckpointProofs: invalid balance proof"
            );
            uint64 balance = balanceAt(p.balanceRoot, info.validatorIndex % 4);
            cp.balanceDeltasGwei += int64(balance) - int64(info.restakedBalanceGwei);
            cp.prevBeaconBalanceGwei += info.restakedBalanceGwei;
            cp.proofsRemaining--;
            info.restakedBalanceGwei = balance;
            info.lastCheckpointedAt = ts;
            if (balance == 0) {
                info.status = ValidatorStatus.WITHDRAWN;
                activeValidatorCount--;
                emit ValidatorWithdrawn(ts, p.pubkeyHash);
            }
            _validators[p.pubkeyHash] = info;
            emit ValidatorCheckpointed(ts, p.pubkeyHash);
            emit ValidatorBalanceUpdated(uint40(info.validatorIndex), ts, balance);
        }
        _currentCheckpoint = cp;
        if (cp.proofsRemaining == 0) {
            _finalize();
        }
    }

    function _finalize() internal {
        Checkpoint memory cp = _currentCheckpoint;
        int256 delta = (int256(uint256(cp.podBalanceGwei)) + int256(cp.balanceDeltasGwei)) * 1 gwei;
        withdrawableRestakedExecutionLayerGwei += cp.podBalanceGwei;
        podOwnerShares += delta;
        uint64 ts = currentCheckpointTimestamp;
        lastCheckpointTimestamp = ts;
        // currentCheckpoint() keeps answering the finalized checkpoint, as EigenLayer's does.
        currentCheckpointTimestamp = 0;
        emit CheckpointFinalized(ts, delta);
    }

    /// @notice The beacon state tree's height for a proof at proofTimestamp: EigenPod._getProofVersion
    /// (at or before the manager's pectraForkTimestamp: Deneb's 5, after it: Pectra's 6).
    function _beaconStateTreeHeight(uint64 proofTimestamp) internal view returns (uint256) {
        uint64 forkTimestamp = IPodManager(podManager).pectraForkTimestamp();
        require(forkTimestamp != 0, "EigenPod._getProofVersion: fork timestamp zero");
        return proofTimestamp <= forkTimestamp ? DENEB_BEACON_STATE_TREE_HEIGHT : PECTRA_BEACON_STATE_TREE_HEIGHT;
    }

    /// @notice The gwei balance at position pos (0..3) of a balance leaf: little-endian uint64s.
    function balanceAt(bytes32 leaf, uint256 pos) public pure returns (uint64 v) {
        for (uint256 i = 0; i < 8; i++) {
            v |= uint64(uint8(leaf[pos * 8 + i])) << uint64(8 * i);
        }
    }

    /// @notice Whether proof (sibling hashes, bottom-up) proves leaf at index under root in a SHA-256
    /// tree, the index used up at the top (as EigenLayer's Merkle.verifyInclusionSha256). Each level
    /// hashes in the scratch space with the SHA-256 precompile, so that a batch's gas is the real
    /// pod's order of magnitude (no memory grows with the proof).
    function verifySha256(bytes calldata proof, bytes32 root, bytes32 leaf, uint256 index) public view returns (bool) {
        if (proof.length == 0 || proof.length % 32 != 0 || root == bytes32(0)) {
            return false;
        }
        bytes32 node = leaf;
        assembly {
            let end := add(proof.offset, proof.length)
            for { let p := proof.offset } lt(p, end) { p := add(p, 32) } {
                switch mod(index, 2)
                case 0 {
                    mstore(0x00, node)
                    mstore(0x20, calldataload(p))
                }
                default {
                    mstore(0x00, calldataload(p))
                    mstore(0x20, node)
                }
                if iszero(staticcall(gas(), 2, 0x00, 0x40, 0x00, 0x20)) {
                    revert(0, 0)
                }
                node := mload(0x00)
                index := div(index, 2)
            }
        }
        return node == root && index == 0;
    }
}
