// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice The StakeManager calls a ValidatorShare makes.
interface IStakeManager {
    function epoch() external view returns (uint256);
    function withdrawalDelay() external view returns (uint256);
    function delegatedAmount(uint256 validatorId) external view returns (uint256);
    function delegationDeposit(uint256 validatorId, uint256 amount, address delegator) external returns (bool);
    function transferFunds(uint256 validatorId, uint256 amount, address delegator) external returns (bool);
    function updateValidatorState(uint256 validatorId, int256 amount) external;
}

/// @title ValidatorShare: a stand-in for Polygon's ValidatorShare on a local chain.
/// @notice The delegator interface of Polygon's ValidatorShare for POL (function names,
/// argument and return types, hence selectors; reason strings where Polygon has them), over a
/// simpler model: shares are minted 1:1 at the exchange rate (no slashing), rewards accrue per
/// checkpoint to shareholders. Shares cannot be transferred. Not Polygon's code.
///
/// Events a client reads from a receipt (all emitted by this contract):
///   ShareMinted(validatorId, user, amount, tokens)          on buyVoucherPOL and restakePOL
///   ShareBurnedWithId(validatorId, user, amount, tokens, nonce)  on sellVoucher_newPOL;
///                                                           nonce is the unbond nonce to claim
///   DelegatorUnstakeWithId(validatorId, user, amount, nonce) on unstakeClaimTokens_newPOL
///   DelegatorClaimedRewards(validatorId, user, rewards)      whenever rewards are paid out
///   DelegatorRestaked(validatorId, user, totalStaked)        on restakePOL
///   Transfer(from, to, value)                                share mint (from 0) and burn (to 0)
contract ValidatorShare {
    struct DelegatorUnbond {
        uint256 shares;
        uint256 withdrawEpoch;
    }

    /// @notice Precision of exchangeRate() and withdrawExchangeRate() (Polygon's high precision).
    uint256 public constant EXCHANGE_RATE_PRECISION = 10 ** 29;
    /// @notice Precision of rewardPerShare.
    uint256 public constant REWARD_PRECISION = 10 ** 25;
    /// @notice Smallest reward withdrawRewardsPOL and restakePOL accept (1 POL), as on Polygon.
    uint256 public constant minAmount = 10 ** 18;

    uint256 public immutable validatorId;
    IStakeManager public immutable stakeManager;

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
    event ShareMinted(uint256 indexed validatorId, address indexed user, uint256 indexed amount, uint256 tokens);
    event ShareBurnedWithId(
        uint256 indexed validatorId, address indexed user, uint256 indexed amount, uint256 tokens, uint256 nonce
    );
    event DelegatorUnstakeWithId(uint256 indexed validatorId, address indexed user, uint256 amount, uint256 nonce);
    event DelegatorClaimedRewards(uint256 indexed validatorId, address indexed user, uint256 indexed rewards);
    event DelegatorRestaked(uint256 indexed validatorId, address indexed user, uint256 indexed totalStaked);

    constructor(uint256 _validatorId, IStakeManager _stakeManager) {
        validatorId = _validatorId;
        stakeManager = _stakeManager;
    }

    // ---- delegator interface (Polygon's names and types) ----

    /// @notice Delegates _amount POL (pulled by the StakeManager with transferFrom) and mints
    /// shares; pays out pending rewards first.
    function buyVoucherPOL(uint256 _amount, uint256 _minSharesToMint) external returns (uint256 amountToDeposit) {
        _withdrawAndTransferReward(msg.sender);
        amountToDeposit = _buyShares(_amount, _minSharesToMint, msg.sender);
        require(
            stakeManager.delegationDeposit(validatorId, amountToDeposit, msg.sender), "deposit failed"
        );
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
        emit ShareBurnedWithId(validatorId, msg.sender, claimAmount, shares, unbondNonce);
    }

    /// @notice Pays out the unbond of unbondNonce once withdrawalDelay checkpoints have passed.
    function unstakeClaimTokens_newPOL(uint256 unbondNonce) external {
        DelegatorUnbond memory unbond = unbonds_new[msg.sender][unbondNonce];
        uint256 amount = _unstakeClaimTokens(unbond);
        delete unbonds_new[msg.sender][unbondNonce];
        emit DelegatorUnstakeWithId(validatorId, msg.sender, amount, unbondNonce);
    }

    /// @notice Pays out the caller's rewards (at least minAmount).
    function withdrawRewardsPOL() external {
        uint256 rewards = _withdrawAndTransferReward(msg.sender);
        require(rewards >= minAmount, "Too small rewards amount");
    }

    /// @notice Delegates the caller's rewards (at least minAmount) to this validator again.
    function restakePOL() external returns (uint256, uint256) {
        address user = msg.sender;
        uint256 liquidReward = _withdrawReward(user);
        uint256 amountRestaked;
        require(liquidReward >= minAmount, "Too small rewards to restake");
        amountRestaked = _buyShares(liquidReward, 0, user);
        if (liquidReward > amountRestaked) {
            require(
                stakeManager.transferFunds(validatorId, liquidReward - amountRestaked, user), "Insufficent rewards"
            );
            emit DelegatorClaimedRewards(validatorId, user, liquidReward - amountRestaked);
        }
        (uint256 totalStaked,) = getTotalStake(user);
        emit DelegatorRestaked(validatorId, user, totalStaked);
        return (amountRestaked, liquidReward);
    }

    // ---- reads ----

    /// @notice POL (wei) a share is worth, times EXCHANGE_RATE_PRECISION.
    function exchangeRate() public view returns (uint256) {
        return totalSupply == 0 ? EXCHANGE_RATE_PRECISION : activeAmount * EXCHANGE_RATE_PRECISION / totalSupply;
    }

    /// @notice POL (wei) a withdraw-pool share is worth, times EXCHANGE_RATE_PRECISION.
    function withdrawExchangeRate() public view returns (uint256) {
        return withdrawShares == 0 ? EXCHANGE_RATE_PRECISION : withdrawPool * EXCHANGE_RATE_PRECISION / withdrawShares;
    }

    /// @notice The user's delegated POL (wei) and the exchange rate it was computed at.
    function getTotalStake(address user) public view returns (uint256, uint256) {
        uint256 rate = exchangeRate();
        return (balanceOf[user] * rate / EXCHANGE_RATE_PRECISION, rate);
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

    function _buyShares(uint256 _amount, uint256 _minSharesToMint, address user) private returns (uint256) {
        uint256 rate = exchangeRate();
        uint256 shares = _amount * EXCHANGE_RATE_PRECISION / rate;
        require(shares >= _minSharesToMint, "Too much slippage");
        require(shares != 0, "Too small amount");
        uint256 amountToDeposit = shares * rate / EXCHANGE_RATE_PRECISION;
        initalRewardPerShare[user] = rewardPerShare;
        totalSupply += shares;
        balanceOf[user] += shares;
        emit Transfer(address(0), user, shares);
        activeAmount += amountToDeposit;
        stakeManager.updateValidatorState(validatorId, int256(amountToDeposit));
        emit ShareMinted(validatorId, user, amountToDeposit, shares);
        return amountToDeposit;
    }

    function _sellVoucher(uint256 claimAmount, uint256 maximumSharesToBurn) private returns (uint256, uint256) {
        (uint256 totalStaked, uint256 rate) = getTotalStake(msg.sender);
        require(totalStaked != 0 && totalStaked >= claimAmount, "Too much requested");
        uint256 shares = claimAmount * EXCHANGE_RATE_PRECISION / rate;
        require(shares <= maximumSharesToBurn, "too much slippage");
        _withdrawAndTransferReward(msg.sender);
        balanceOf[msg.sender] -= shares;
        totalSupply -= shares;
        emit Transfer(msg.sender, address(0), shares);
        stakeManager.updateValidatorState(validatorId, -int256(claimAmount));
        activeAmount -= claimAmount;
        uint256 poolShares = claimAmount * EXCHANGE_RATE_PRECISION / withdrawExchangeRate();
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
        uint256 amount = withdrawExchangeRate() * shares / EXCHANGE_RATE_PRECISION;
        withdrawShares -= shares;
        withdrawPool -= amount;
        require(stakeManager.transferFunds(validatorId, amount, msg.sender), "Insufficent rewards");
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
            require(stakeManager.transferFunds(validatorId, liquidRewards, user), "Insufficent rewards");
            emit DelegatorClaimedRewards(validatorId, user, liquidRewards);
        }
        return liquidRewards;
    }
}
