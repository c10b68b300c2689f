// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice What StakingInfo asks the StakeManager.
interface IStakeManagerStake {
    function validatorShare(uint256 validatorId) external view returns (address);
    function delegatedAmount(uint256 validatorId) external view returns (uint256);
}

/// @title StakingInfo: a stand-in for Polygon's StakingInfo (the staking logger) on a local chain.
/// @notice On Polygon the ValidatorShare's older events (ShareMinted, StakeUpdate,
/// DelegatorClaimedRewards, DelegatorRestaked, ShareBurned, DelegatorUnstaked) are emitted by
/// StakingInfo, which the share calls. Same events, same indexed fields and the same check of the
/// caller as 0xPolygon/pos-contracts at commit ff11f0e08a43a207a3e7bcb7430771ba95d292ec,
/// contracts/staking/StakingInfo.sol (and the ABI of npm maticnetwork/meta 2.4.59
/// network/mainnet/v1/artifacts/plasma/StakingInfo.json). A validator's total stake is its
/// delegated amount: the stand-in has no validator self-stake. Not Polygon's code.
contract StakingInfo {
    IStakeManagerStake public immutable stakeManager;
    /// @notice StakeUpdate's counter per validator.
    mapping(uint256 => uint256) public validatorNonce;

    event StakeUpdate(uint256 indexed validatorId, uint256 indexed nonce, uint256 indexed newAmount);
    event ShareMinted(uint256 indexed validatorId, address indexed user, uint256 indexed amount, uint256 tokens);
    event ShareBurned(uint256 indexed validatorId, address indexed user, uint256 indexed amount, uint256 tokens);
    event DelegatorClaimedRewards(uint256 indexed validatorId, address indexed user, uint256 indexed rewards);
    event DelegatorRestaked(uint256 indexed validatorId, address indexed user, uint256 indexed totalStaked);
    event DelegatorUnstaked(uint256 indexed validatorId, address indexed user, uint256 amount);

    modifier onlyValidatorContract(uint256 validatorId) {
        require(stakeManager.validatorShare(validatorId) == msg.sender, "Invalid sender, not validator");
        _;
    }

    modifier stakeManagerOrValidatorContract(uint256 validatorId) {
        require(
            stakeManager.validatorShare(validatorId) == msg.sender || address(stakeManager) == msg.sender,
            "Invalid sender, not stake manager or validator contract"
        );
        _;
    }

    constructor(IStakeManagerStake _stakeManager) {
        stakeManager = _stakeManager;
    }

    /// @notice The validator's total stake (here: its delegated amount).
    function totalValidatorStake(uint256 validatorId) public view returns (uint256) {
        return stakeManager.delegatedAmount(validatorId);
    }

    function logStakeUpdate(uint256 validatorId) external stakeManagerOrValidatorContract(validatorId) {
        validatorNonce[validatorId] = validatorNonce[validatorId] + 1;
        emit StakeUpdate(validatorId, validatorNonce[validatorId], totalValidatorStake(validatorId));
    }

    function logShareMinted(uint256 validatorId, address user, uint256 amount, uint256 tokens)
        external
        onlyValidatorContract(validatorId)
    {
        emit ShareMinted(validatorId, user, amount, tokens);
    }

    function logShareBurned(uint256 validatorId, address user, uint256 amount, uint256 tokens)
        external
        onlyValidatorContract(validatorId)
    {
        emit ShareBurned(validatorId, user, amount, tokens);
    }

    function logDelegatorClaimRewards(uint256 validatorId, address user, uint256 rewards)
        external
        onlyValidatorContract(validatorId)
    {
        emit DelegatorClaimedRewards(validatorId, user, rewards);
    }

    function logDelegatorRestaked(uint256 validatorId, address user, uint256 totalStaked)
        external
        onlyValidatorContract(validatorId)
    {
        emit DelegatorRestaked(validatorId, user, totalStaked);
    }

    function logDelegatorUnstaked(uint256 validatorId, address user, uint256 amount)
        external
        onlyValidatorContract(validatorId)
    {
        emit DelegatorUnstaked(validatorId, user, amount);
    }
}
