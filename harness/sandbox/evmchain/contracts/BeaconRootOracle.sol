// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title BeaconRootOracle: a stand-in for the beacon block roots a local chain does not have.
/// @notice On Ethereum an EigenPod reads the parent beacon block root from the EIP-4788 contract
/// when a checkpoint starts. A geth --dev chain has no beacon chain, so the sandbox keeps a model
/// of each pod's beacon state and posts its root here; a pod's startCheckpoint reads
/// rootOf(pod). Only the owner (the sandbox) posts. Not EigenLayer's or Ethereum's code.
contract BeaconRootOracle {
    address public owner;
    mapping(address => bytes32) public rootOf;

    event RootPosted(address indexed pod, bytes32 root);

    constructor() {
        owner = msg.sender;
    }

    /// @notice Posts root as pod's current beacon block root.
    function postRoot(address pod, bytes32 root) external {
        require(msg.sender == owner, "BeaconRootOracle: only the owner posts roots");
        rootOf[pod] = root;
        emit RootPosted(pod, root);
    }
}
