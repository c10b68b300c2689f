// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IERC20} from "./IERC20.sol";

/// @notice What the StakeManager calls on a validator's share contract.
interface IValidatorShareRewards {
    function addCheckpointReward(uint256 amount) external;
}

/// @title StakeManager: a stand-in for Polygon's StakeManager on a local chain.
/// @notice Polygon's read interface (epoch, currentEpoch, withdrawalDelay, token,
/// delegatedAmount) and the calls its ValidatorShare contracts make (delegationDepositPOL,
/// transferFundsPOL, updateValidatorState), with owner-only controls in place of checkpoints
/// submitted by validators: registerValidator, advanceEpochs and setCheckpointReward.
/// It holds every delegated token and the reward reserve. Not Polygon's code.
contract StakeManager {
    IERC20 public immutable token;
    address public owner;
    /// @notice The checkpoint counter; withdrawals unlock by it.
    uint256 public currentEpoch = 1;
    /// @notice Checkpoints an unbond waits before it can be claimed.
    uint256 public withdrawalDelay;
    /// @notice POL (wei) each validator's delegators share at every checkpoint.
    uint256 public checkpointReward;
    /// @notice POL (wei) delegated to each validator, unbonding stake excluded.
    mapping(uint256 => uint256) public delegatedAmount;
    /// @notice The ValidatorShare contract of each validator id.
    mapping(uint256 => address) public validatorShare;
    uint256[] private validatorIds;

    event ValidatorRegistered(uint256 indexed validatorId, address indexed share);
    event EpochsAdvanced(uint256 fromEpoch, uint256 toEpoch, uint256 rewardPerValidator);

    modifier onlyOwner() {
        require(msg.sender == owner, "StakeManager: caller is not the owner");
        _;
    }

    modifier onlyDelegation(uint256 validatorId) {
        require(validatorShare[validatorId] == msg.sender && msg.sender != address(0), "Invalid contract address");
        _;
    }

    constructor(IERC20 _token, uint256 _withdrawalDelay, uint256 _checkpointReward) {
        token = _token;
        owner = msg.sender;
        withdrawalDelay = _withdrawalDelay;
        checkpointReward = _checkpointReward;
    }

    /// @notice The current checkpoint (Polygon's epoch()).
    function epoch() external view returns (uint256) {
        return currentEpoch;
    }

    /// @notice Registers share as the ValidatorShare of validatorId. Owner only.
    function registerValidator(uint256 validatorId, address share) external onlyOwner {
        require(validatorId != 0 && share != address(0), "StakeManager: invalid validator");
        require(validatorShare[validatorId] == address(0), "StakeManager: validator already registered");
        validatorShare[validatorId] = share;
        validatorIds.push(validatorId);
        emit ValidatorRegistered(validatorId, share);
    }

    /// @notice The registered validator ids, in registration order.
    function getValidatorIds() external view returns (uint256[] memory) {
        return validatorIds;
    }

    /// @notice Sets the reward of each later checkpoint. Owner only.
    function setCheckpointReward(uint256 amount) external onlyOwner {
        checkpointReward = amount;
    }

    /// @notice Moves the epoch n checkpoints on; at each, every validator's delegators share
    /// checkpointReward by their shares (a validator without delegators gets nothing). Owner only.
    function advanceEpochs(uint256 n) external onlyOwner {
        require(n > 0, "StakeManager: advance by at least one epoch");
        uint256 from = currentEpoch;
        currentEpoch = from + n;
        uint256 reward = checkpointReward * n;
        if (reward != 0) {
            for (uint256 i = 0; i < validatorIds.length; i++) {
                IValidatorShareRewards(validatorShare[validatorIds[i]]).addCheckpointReward(reward);
            }
        }
        emit EpochsAdvanced(from, from + n, reward);
    }

    /// @notice Pulls amount POL from delegator into this contract (the delegator approved this
    /// contract as spender). Called by the validator's share contract.
    function delegationDepositPOL(uint256 validatorId, uint256 amount, address delegator)
        external
        onlyDelegation(validatorId)
        returns (bool)
    {
        return token.transferFrom(delegator, address(this), amount);
    }

    /// @notice Pays amount POL to delegator. Called by the validator's share contract.
    function transferFundsPOL(uint256 validatorId, uint256 amount, address delegator)
        external
        onlyDelegation(validatorId)
        returns (bool)
    {
        return token.transfer(delegator, amount);
    }

    /// @notice Adds amount (negative: removes) to the validator's delegated stake. Called by the
    /// validator's share contract.
    function updateValidatorState(uint256 validatorId, int256 amount) external onlyDelegation(validatorId) {
        if (amount >= 0) {
            delegatedAmount[validatorId] += uint256(amount);
        } else {
            delegatedAmount[validatorId] -= uint256(-amount);
        }
    }
}
