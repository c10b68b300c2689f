// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice What the EventsHub asks the StakeManager.
interface IStakeManagerValidators {
    function validatorShare(uint256 validatorId) external view returns (address);
}

/// @title EventsHub: a stand-in for Polygon's EventsHub on a local chain.
/// @notice On Polygon the ValidatorShare does not emit its newer events itself: it calls the
/// EventsHub (found through the Registry), which emits them, so their logs carry the EventsHub's
/// (proxy's) address. Same events, same indexed fields and the same check of the caller (the
/// validator's own share contract) as 0xPolygon/pos-contracts
/// at commit ff11f0e08a43a207a3e7bcb7430771ba95d292ec, contracts/staking/EventsHub.sol. Not Polygon's code.
contract EventsHub {
    IStakeManagerValidators public immutable stakeManager;

    event ShareBurnedWithId(
        uint256 indexed validatorId, address indexed user, uint256 indexed amount, uint256 tokens, uint256 nonce
    );
    event DelegatorUnstakeWithId(uint256 indexed validatorId, address indexed user, uint256 amount, uint256 nonce);
    event SharesTransfer(uint256 indexed validatorId, address indexed from, address indexed to, uint256 value);

    modifier onlyValidatorContract(uint256 validatorId) {
        require(stakeManager.validatorShare(validatorId) == msg.sender, "not validator");
        _;
    }

    constructor(IStakeManagerValidators _stakeManager) {
        stakeManager = _stakeManager;
    }

    /// @notice Emits ShareBurnedWithId: an unbond made by sellVoucher_newPOL, nonce the unbond nonce.
    function logShareBurnedWithId(uint256 validatorId, address user, uint256 amount, uint256 tokens, uint256 nonce)
        external
        onlyValidatorContract(validatorId)
    {
        emit ShareBurnedWithId(validatorId, user, amount, tokens, nonce);
    }

    /// @notice Emits DelegatorUnstakeWithId: an unbond claimed by unstakeClaimTokens_newPOL.
    function logDelegatorUnstakedWithId(uint256 validatorId, address user, uint256 amount, uint256 nonce)
        external
        onlyValidatorContract(validatorId)
    {
        emit DelegatorUnstakeWithId(validatorId, user, amount, nonce);
    }
}
