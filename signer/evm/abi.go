package evm

import (
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
)

// ABIJSON is the subset of the Polygon ValidatorShare and ERC-20 interfaces that stakeflow calls,
// as a JSON ABI. Selectors: approve 0x095ea7b3, buyVoucherPOL 0xe4457a8a, sellVoucher_newPOL
// 0xe570b78b, unstakeClaimTokens_newPOL 0x8759c234, withdrawRewardsPOL 0xe0db556b, restakePOL
// 0x9ad5f5a4.
const ABIJSON = `[
{"type":"function","name":"approve","stateMutability":"nonpayable",
 "inputs":[{"name":"spender","type":"address"},{"name":"amount","type":"uint256"}],
 "outputs":[{"name":"","type":"bool"}]},
{"type":"function","name":"buyVoucherPOL","stateMutability":"nonpayable",
 "inputs":[{"name":"_amount","type":"uint256"},{"name":"_minSharesToMint","type":"uint256"}],
 "outputs":[{"name":"amountToDeposit","type":"uint256"}]},
{"type":"function","name":"sellVoucher_newPOL","stateMutability":"nonpayable",
 "inputs":[{"name":"claimAmount","type":"uint256"},{"name":"maximumSharesToBurn","type":"uint256"}],
 "outputs":[]},
{"type":"function","name":"unstakeClaimTokens_newPOL","stateMutability":"nonpayable",
 "inputs":[{"name":"unbondNonce","type":"uint256"}],
 "outputs":[]},
{"type":"function","name":"withdrawRewardsPOL","stateMutability":"nonpayable",
 "inputs":[],
 "outputs":[]},
{"type":"function","name":"restakePOL","stateMutability":"nonpayable",
 "inputs":[],
 "outputs":[{"name":"","type":"uint256"},{"name":"","type":"uint256"}]}
]`

// Method names in ABIJSON.
const (
	// MethodApprove is ERC-20 approve(address spender, uint256 amount).
	MethodApprove = "approve"
	// MethodBuyVoucherPOL is ValidatorShare buyVoucherPOL(uint256 _amount, uint256 _minSharesToMint).
	MethodBuyVoucherPOL = "buyVoucherPOL"
	// MethodSellVoucherNewPOL is ValidatorShare sellVoucher_newPOL(uint256 claimAmount, uint256 maximumSharesToBurn).
	MethodSellVoucherNewPOL = "sellVoucher_newPOL"
	// MethodUnstakeClaimTokensNewPOL is ValidatorShare unstakeClaimTokens_newPOL(uint256 unbondNonce).
	MethodUnstakeClaimTokensNewPOL = "unstakeClaimTokens_newPOL"
	// MethodWithdrawRewardsPOL is ValidatorShare withdrawRewardsPOL().
	MethodWithdrawRewardsPOL = "withdrawRewardsPOL"
	// MethodRestakePOL is ValidatorShare restakePOL().
	MethodRestakePOL = "restakePOL"
)

// ABI returns ABIJSON parsed by go-ethereum's accounts/abi, for packing calls. Each call returns
// a new value, so a caller cannot change the one the verifier uses.
func ABI() abi.ABI {
	a, err := abi.JSON(strings.NewReader(ABIJSON))
	if err != nil {
		// ABIJSON is a constant checked by the tests: this cannot happen at run time.
		panic("signer/evm: ABIJSON does not parse: " + err.Error())
	}
	return a
}

// stakingABI is the verifier's own copy of ABI().
var stakingABI = ABI()
