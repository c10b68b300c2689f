// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import "./EigenPod.sol";

/// @title EigenPodManager: a stand-in for EigenLayer's EigenPodManager on a local chain.
/// @notice getPod, createPod, pectraForkTimestamp and setPectraForkTimestamp have EigenLayer's
/// signatures (IEigenPodManager.sol at commit f84a5151080cdf0b77b9b6e46506cde723d06c28). getPod
/// answers the zero address for an owner without a pod (EigenLayer answers the pod's future
/// address). The owner stands in for EigenLayer's proofTimestampSetter. createPodFor and
/// addValidators are the sandbox's controls (EigenLayer proves withdrawal credentials instead),
/// open to the manager's owner only. Not EigenLayer's code.
contract EigenPodManager {
    address public owner;
    BeaconRootOracle public immutable oracle;
    mapping(address => EigenPod) public ownerToPod;
    /// @notice The timestamp of the first block after the Pectra fork: pods check proofs of a
    /// timestamp at or before it with Deneb's geometry, after it with Pectra's.
    uint64 public pectraForkTimestamp;

    event PodDeployed(address indexed eigenPod, address indexed podOwner);
    event PectraForkTimestampSet(uint64 newPectraForkTimestamp);

    constructor(BeaconRootOracle _oracle, uint64 _pectraForkTimestamp) {
        owner = msg.sender;
        oracle = _oracle;
        pectraForkTimestamp = _pectraForkTimestamp;
        emit PectraForkTimestampSet(_pectraForkTimestamp);
    }

    /// @notice Sets the Pectra fork timestamp (EigenLayer: the proof timestamp setter).
    function setPectraForkTimestamp(uint64 timestamp) external {
        require(msg.sender == owner, "EigenPodManager: only the owner");
        pectraForkTimestamp = timestamp;
        emit PectraForkTimestampSet(timestamp);
    }

    /// @notice The pod of podOwner, or the zero address when it has none.
    function getPod(address podOwner) external view returns (address) {
        return address(ownerToPod[podOwner]);
    }

    /// @notice Creates the caller's pod.
    function createPod() external returns (address) {
        return _create(msg.sender);
    }

    /// @notice Creates podOwner's pod (sandbox control).
    function createPodFor(address podOwner) external returns (address) {
        require(msg.sender == owner, "EigenPodManager: only the owner");
        return _create(podOwner);
    }

    function _create(address podOwner) internal returns (address) {
        require(address(ownerToPod[podOwner]) == address(0), "EigenPodManager.createPod: Sender already has a pod");
        EigenPod pod = new EigenPod(podOwner, oracle, address(this));
        ownerToPod[podOwner] = pod;
        emit PodDeployed(address(pod), podOwner);
        return address(pod);
    }
}
