// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import "./BeaconRootOracle.sol";

interface IPodManagerOwner {
    function owner() external view returns (address);
}

/// @title EigenPod: a stand-in for EigenLayer's EigenPod checkpoints on a local chain.
/// @notice startCheckpoint, verifyCheckpointProofs, currentCheckpoint, currentCheckpointTimestamp,
/// lastCheckpointTimestamp and activeValidatorCount have EigenLayer's signatures (hence
/// selectors) and meaning, over a smaller beacon state:
///
///   - The checkpoint's beacon block root is read from the BeaconRootOracle the sandbox posts to
///     (EigenLayer reads EIP-4788), when the checkpoint starts.
///   - The beacon block root commits to the balance container root at leaf
///     BALANCE_CONTAINER_INDEX of a SHA-256 tree of height BLOCK_TREE_HEIGHT; the balance
///     container root to the balance leaves (four little-endian uint64 gwei balances each, as on
///     the beacon chain) in a SHA-256 tree of height BALANCE_TREE_HEIGHT. Proofs are the sibling
///     hashes bottom-up, as EigenLayer's Merkle library takes them.
///   - Each validator's balance is credited once per checkpoint: a proof of a validator already
///     proven in the current checkpoint reverts the whole batch with
///     "EigenPod.verifyCheckpointProofs: validator already checkpointed".
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

    uint256 public constant BLOCK_TREE_HEIGHT = 3;
    uint256 public constant BALANCE_CONTAINER_INDEX = 6;
    uint256 public constant BALANCE_TREE_HEIGHT = 8;

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
    event ValidatorCheckpointed(uint64 indexed checkpointTimestamp, uint40 indexed validatorIndex);
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
        require(msg.sender == IPodManagerOwner(podManager).owner(), "EigenPod: only the manager's owner");
        require(pubkeyHashes.length == indices.length && indices.length == balancesGwei.length, "EigenPod: length mismatch");
        require(currentCheckpointTimestamp == 0, "EigenPod: checkpoint active");
        for (uint256 i = 0; i < pubkeyHashes.length; i++) {
            require(_validators[pubkeyHashes[i]].status == ValidatorStatus.INACTIVE, "EigenPod: validator known");
            require(indices[i] < 4 * (2 ** BALANCE_TREE_HEIGHT), "EigenPod: validator index too large");
            _validators[pubkeyHashes[i]] = ValidatorInfo({
                validatorIndex: indices[i],
                restakedBalanceGwei: balancesGwei[i],
                lastCheckpointedAt: 0,
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
        _currentCheckpoint = Checkpoint({
            beaconBlockRoot: root,
            proofsRemaining: uint24(activeValidatorCount),
            podBalanceGwei: podBalanceGwei,
            balanceDeltasGwei: 0,
            prevBeaconBalanceGwei: 0
        });
        currentCheckpointTimestamp = ts;
        emit CheckpointCreated(ts, root, activeValidatorCount);
        if (activeValidatorCount == 0) {
            _finalize();
        }
    }

    function verifyCheckpointProofs(BalanceContainerProof calldata balanceContainerProof, BalanceProof[] calldata proofs) external {
        uint64 ts = currentCheckpointTimestamp;
        require(ts != 0, "EigenPod.verifyCheckpointProofs: must have active checkpoint to perform checkpoint proof");
        Checkpoint memory cp = _currentCheckpoint;
        require(
            verifySha256(balanceContainerProof.proof, cp.beaconBlockRoot, balanceContainerProof.balanceContainerRoot, BALANCE_CONTAINER_INDEX, BLOCK_TREE_HEIGHT),
            "EigenPod.verifyCheckpointProofs: invalid balance container proof"
        );
        for (uint256 i = 0; i < proofs.length; i++) {
            BalanceProof calldata p = proofs[i];
            ValidatorInfo memory info = _validators[p.pubkeyHash];
            require(info.status == ValidatorStatus.ACTIVE, "EigenPod.verifyCheckpointProofs: validator not active");
            require(info.lastCheckpointedAt < ts, "EigenPod.verifyCheckpointProofs: validator already checkpointed");
            require(
                verifySha256(p.proof, balanceContainerProof.balanceContainerRoot, p.balanceRoot, info.validatorIndex / 4, BALANCE_TREE_HEIGHT),
                "EigenPod.verifyCheckpointProofs: invalid balance proof"
            );
            uint64 balance = balanceAt(p.balanceRoot, info.validatorIndex % 4);
            cp.balanceDeltasGwei += int64(balance) - int64(info.restakedBalanceGwei);
            cp.proofsRemaining--;
            info.restakedBalanceGwei = balance;
            info.lastCheckpointedAt = ts;
            if (balance == 0) {
                info.status = ValidatorStatus.WITHDRAWN;
                activeValidatorCount--;
            }
            _validators[p.pubkeyHash] = info;
            emit ValidatorCheckpointed(ts, uint40(info.validatorIndex));
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
        currentCheckpointTimestamp = 0;
        delete _currentCheckpoint;
        emit CheckpointFinalized(ts, delta);
    }

    /// @notice The gwei balance at position pos (0..3) of a balance leaf: little-endian uint64s.
    function balanceAt(bytes32 leaf, uint256 pos) public pure returns (uint64 v) {
        for (uint256 i = 0; i < 8; i++) {
            v |= uint64(uint8(leaf[pos * 8 + i])) << uint64(8 * i);
        }
    }

    /// @notice Whether proof (height sibling hashes, bottom-up) proves leaf at index under root in
    /// a SHA-256 tree.
    function verifySha256(bytes calldata proof, bytes32 root, bytes32 leaf, uint256 index, uint256 height) public pure returns (bool) {
        if (proof.length != 32 * height) {
            return false;
        }
        bytes32 node = leaf;
        for (uint256 i = 0; i < height; i++) {
            bytes32 sibling = bytes32(proof[32 * i:32 * i + 32]);
            if (index % 2 == 0) {
                node = sha256(abi.encodePacked(node, sibling));
            } else {
                node = sha256(abi.encodePacked(sibling, node));
            }
            index /= 2;
        }
        return node == root && index == 0;
    }
}
