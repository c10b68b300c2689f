// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice The StakeManager calls a ValidatorShare makes (the POL variants).
interface IStakeManager {
    function epoch() external view returns (uint256);
    function withdrawalDelay() external view returns (uint256);
    function delegatedAmount(uint256 validatorId) external view returns (uint256);
    function delegationDepositPOL(uint256 validatorId, uint256 amount, address delegator) external returns (bool);
    function transferFundsPOL(uint256 validatorId, uint256 amount, address delegator) external returns (bool);
    function updateValidatorState(uint256 validatorId, int256 amount) external;
}

/// @notice The StakingInfo (staking logger) calls a ValidatorShare makes.
interface IStakingInfo {
    function logStakeUpdate(uint256 validatorId) external;
    function logShareMinted(uint256 validatorId, address user, uint256 amount, uint256 tokens) external;
    function logDelegatorClaimRewards(uint256 validatorId, address user, uint256 rewards) external;
    function logDelegatorRestaked(uint256 validatorId, address user, uint256 totalStaked) external;
}

/// @notice The EventsHub calls a ValidatorShare makes.
interface IEventsHub {
    function logShareBurnedWithId(uint256 validatorId, address user, uint256 amount, uint256 tokens, uint256 nonce)
        external;
    function logDelegatorUnstakedWithId(uint256 validatorId, address user, uint256 amount, uint256 nonce) external;
}

/// @title ValidatorShare: a stand-in for Polygon's ValidatorShare on a local chain.
/// @notice The delegator interface of Polygon's ValidatorShare for POL (function names,
/// argument and return types, hence selectors; reason strings where Polygon has them), over a
/// simpler model: no slashing, rewards accrue per checkpoint to shareholders, shares cannot be
/// transferred. Not Polygon's code. What follows Polygon's
/// (0xPolygon/pos-contracts at commit ff11f0e08a43a207a3e7bcb7430771ba95d292ec,
/// contracts/staking/validatorShare/ValidatorShare.sol):
///
/// The exchange-rate precision by validator id (_getRatePrecision): 100 below id 8, 10**29 from
/// id 8; withdrawExchangeRate() is the precision itself below id 8.
///
/// Where each event comes from, as on mainnet (the share emits only ERC-20 Transfer itself):
///   StakingInfo.ShareMinted(validatorId, user, amount, tokens)   buyVoucherPOL, restakePOL
///   StakingInfo.StakeUpdate(validatorId, nonce, newAmount)       after every mint and burn
///   StakingInfo.DelegatorClaimedRewards(validatorId, user, rewards) whenever rewards are paid
///   StakingInfo.DelegatorRestaked(validatorId, user, totalStaked)   restakePOL
///   EventsHub.ShareBurnedWithId(validatorId, user, amount, tokens, nonce) sellVoucher_newPOL;
///                                                            nonce is the unbond nonce to claim
///   EventsHub.DelegatorUnstakeWithId(validatorId, user, amount, nonce) unstakeClaimTokens_newPOL
contract ValidatorShare {
    struct DelegatorUnbond {
        uint256 shares;
        uint256 withdrawEpoch;
    }

    uint256 private constant RATE_PRECISION_OLD = 100;
    uint256 private constant RATE_PRECISION_HIGH = 10 ** 29;
    uint256 private constant REWARD_PRECISION = 10 ** 25;

    uint256 public immutable validatorId;
    IStakeManager public immutable stakeManager;
    IStakingInfo public immutable stakingLogger;
    IEventsHub public immutable eventsHub;

    string public constant name = "Validator Share";
    string public constant symbol = "VS";
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;

    /// @notice POL (wei) staked through this contract and not unbonding.
    uint256 public activeAmount;
    /// @notice Unbonding POL waiting to be claimed, and the pool shares that claim it.
    uint256 public withdrawPool;
    uint256 public withdrawShares;

    uint256 public rewardPerShare;
    mapping(address => uint256) public initalRewardPerShare;

    mapping(address => uint256) public unbondNonces;
    mapping(address => mapping(uint256 => DelegatorUnbond)) public unbonds_new;

    event Transfer(address indexed from, address indexed to, uint256 value);

    constructor(uint256 _validatorId, IStakeManager _stakeManager, IStakingInfo _stakingLogger, IEventsHub _eventsHub) {
        validatorId = _validatorId;
        stakeManager = _stakeManager;
        stakingLogger = _stakingLogger;
        eventsHub = _eventsHub;
    }

    // ---- delegator interface (Polygon's names and types) ----

    /// @notice Delegates _amount POL (pulled by the StakeManager with transferFrom) and mints
    /// shares; pays out pending rewards first.
    function buyVoucherPOL(uint256 _amount, uint256 _minSharesToMint) external returns (uint256 amountToDeposit) {
        _withdrawAndTransferReward(msg.sender);
        amountToDeposit = _buyShares(_amount, _minSharesToMint, msg.sender);
        require(stakeManager.delegationDepositPOL(validatorId, amountToDeposit, msg.sender), "deposit failed");
        return amountToDeposit;
    }

    /// @notice Unbonds claimAmount POL, burning at most maximumSharesToBurn shares; pays out
    /// pending rewards. The unbond is recorded under the next unbond nonce of the caller.
    function sellVoucher_newPOL(uint256 claimAmount, uint256 maximumSharesToBurn) external {
        (uint256 shares, uint256 poolShares) = _sellVoucher(claimAmount, maximumSharesToBurn);
        uint256 unbondNonce = unbondNonces[msg.sender] + 1;
        unbonds_new[msg.sender][unbondNonce] =
            DelegatorUnbond({shares: poolShares, withdrawEpoch: stakeManager.epoch()});
        unbondNonces[msg.sender] = unbondNonce;
        eventsHub.logShareBurnedWithId(validatorId, msg.sender, claimAmount, shares, unbondNonce);
        stakingLogger.logStakeUpdate(validatorId);
    }

    /// @notice Pays out the unbond of unbondNonce once withdrawalDelay checkpoints have passed.
    function unstakeClaimTokens_newPOL(uint256 unbondNonce) external {
        DelegatorUnbond memory unbond = unbonds_new[msg.sender][unbondNonce];
        uint256 amount = _unstakeClaimTokens(unbond);
        delete unbonds_new[msg.sender][unbondNonce];
        eventsHub.logDelegatorUnstakedWithId(validatorId, msg.sender, amount, unbondNonce);
    }

    /// @notice Pays out the caller's rewards (none: nothing happens, as on Polygon).
    function withdrawRewardsPOL() external {
        _withdrawAndTransferReward(msg.sender);
    }

    /// @notice Delegates the caller's rewards to this validator again (none: nothing happens).
    function restakePOL() external returns (uint256, uint256) {
        address user = msg.sender;
        uint256 liquidReward = _withdrawReward(user);
        uint256 amountRestaked;
        if (liquidReward != 0) {
            amountRestaked = _buyShares(liquidReward, 0, user);
            if (liquidReward > amountRestaked) {
                require(
                    stakeManager.transferFundsPOL(validatorId, liquidReward - amountRestaked, user),
                    "Insufficent rewards"
                );
                stakingLogger.logDelegatorClaimRewards(validatorId, user, liquidReward - amountRestaked);
            }
            (uint256 totalStaked,) = getTotalStake(user);
            stakingLogger.logDelegatorRestaked(validatorId, user, totalStaked);
        }
        return (amountRestaked, liquidReward);
    }

    // ---- reads ----

    /// @notice POL (wei) a share is worth, times the validator's precision.
    function exchangeRate() public view returns (uint256) {
        uint256 precision = _getRatePrecision();
        return totalSupply == 0 ? precision : stakeManager.delegatedAmount(validatorId) * precision / totalSupply;
    }

    /// @notice POL (wei) a withdraw-pool share is worth, times the validator's precision (the
    /// precision itself below id 8, as on Polygon).
    function withdrawExchangeRate() public view returns (uint256) {
        uint256 precision = _getRatePrecision();
        if (validatorId < 8) {
            return precision;
        }
        return withdrawShares == 0 ? precision : withdrawPool * precision / withdrawShares;
    }

    /// @notice The user's delegated POL (wei) and the exchange rate it was computed at.
    function getTotalStake(address user) public view returns (uint256, uint256) {
        uint256 shares = balanceOf[user];
        uint256 rate = exchangeRate();
        if (shares == 0) {
            return (0, rate);
        }
        return (rate * shares / _getRatePrecision(), rate);
    }

    /// @notice The user's rewards not yet paid out (wei).
    function getLiquidRewards(address user) public view returns (uint256) {
        return balanceOf[user] * (rewardPerShare - initalRewardPerShare[user]) / REWARD_PRECISION;
    }

    // ---- StakeManager interface ----

    /// @notice Shares out amount among current shareholders. Called by the StakeManager at
    /// every checkpoint.
    function addCheckpointReward(uint256 amount) external {
        require(msg.sender == address(stakeManager), "Only stakeManager");
        if (totalSupply != 0) {
            rewardPerShare += amount * REWARD_PRECISION / totalSupply;
        }
    }

    // ---- internals ----

    function _getRatePrecision() private view returns (uint256) {
        if (validatorId < 8) {
            return RATE_PRECISION_OLD;
        }
        return RATE_PRECISION_HIGH;
    }

    function _buyShares(uint256 _amount, uint256 _minSharesToMint, address user) private returns (uint256) {
        uint256 rate = exchangeRate();
        uint256 precision = _getRatePrecision();
        uint256 shares = _amount * precision / rate;
        require(shares >= _minSharesToMint, "Too much slippage");
        initalRewardPerShare[user] = rewardPerShare;
        totalSupply += shares;
        balanceOf[user] += shares;
        emit Transfer(address(0), user, shares);
        // clamp amount of tokens in case resulted shares requires less tokens than anticipated
        uint256 amount = rate * shares / precision;
        stakeManager.updateValidatorState(validatorId, int256(amount));
        activeAmount += amount;
        stakingLogger.logShareMinted(validatorId, user, amount, shares);
        stakingLogger.logStakeUpdate(validatorId);
        return amount;
    }

    function _sellVoucher(uint256 claimAmount, uint256 maximumSharesToBurn) private returns (uint256, uint256) {
        (uint256 totalStaked, uint256 rate) = getTotalStake(msg.sender);
        require(totalStaked != 0 && totalStaked >= claimAmount, "Too much requested");
        uint256 precision = _getRatePrecision();
        uint256 shares = claimAmount * precision / rate;
        require(shares <= maximumSharesToBurn, "too much slippage");
        _withdrawAndTransferReward(msg.sender);
        balanceOf[msg.sender] -= shares;
        totalSupply -= shares;
        emit Transfer(msg.sender, address(0), shares);
        stakeManager.updateValidatorState(validatorId, -int256(claimAmount));
        activeAmount -= claimAmount;
        uint256 poolShares = claimAmount * precision / withdrawExchangeRate();
        withdrawPool += claimAmount;
        withdrawShares += poolShares;
        return (shares, poolShares);
    }

    function _unstakeClaimTokens(DelegatorUnbond memory unbond) private returns (uint256) {
        uint256 shares = unbond.shares;
        require(
            unbond.withdrawEpoch + stakeManager.withdrawalDelay() <= stakeManager.epoch() && shares > 0,
            "Incomplete withdrawal period"
        );
        uint256 amount = withdrawExchangeRate() * shares / _getRatePrecision();
        withdrawShares -= shares;
        withdrawPool -= amount;
        require(stakeManager.transferFundsPOL(validatorId, amount, msg.sender), "Insufficent rewards");
        return amount;
    }

    function _withdrawReward(address user) private returns (uint256) {
        uint256 liquidRewards = getLiquidRewards(user);
        initalRewardPerShare[user] = rewardPerShare;
        return liquidRewards;
    }

    function _withdrawAndTransferReward(address user) private returns (uint256) {
        uint256 liquidRewards = _withdrawReward(user);
        if (liquidRewards != 0) {
            require(stakeManager.transferFundsPOL(validatorId, liquidRewards, user), "Insufficent rewards");
            stakingLogger.logDelegatorClaimRewards(validatorId, user, liquidRewards);
        }
        return liquidRewards;
    }
}
