package sandbox

import (
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
)

// hyperliquidNetworks are the network values of endpoint 6.
var hyperliquidNetworks = []string{"mainnet", "testnet"}

// hyperliquidWithdrawal is the result of endpoint 6.
type hyperliquidWithdrawal struct {
	Amount              string `json:"amount"`
	UnsignedTransaction string `json:"unsignedTransaction"`
	CreatedAt           string `json:"createdAt"`
}

// hyperliquidWithdraw answers endpoint 6 with an unsigned cWithdraw action
// (JSON text) moving staking rewards to the spot balance.
func (s *server) hyperliquidWithdraw(r *http.Request, _ *reqContext) (any, *apiError) {
	network := r.PathValue("network")
	if !contains(hyperliquidNetworks, network) {
		return nil, invalidField("network", "isIn", "network must be one of the following values: %s", strings.Join(hyperliquidNetworks, ", "))
	}
	b, aerr := readBody(r)
	if aerr != nil {
		return nil, aerr
	}
	var errs []fieldError
	amount, amountOK := b.number("amount", true, &errs)
	var wei *big.Int
	if amountOK {
		f, ok := new(big.Float).SetString(amount.String())
		if !ok || f.Sign() <= 0 {
			errs = append(errs, fieldErr("amount", "isPositive", "amount must be a positive number"))
		} else {
			wei, _ = new(big.Float).Mul(f, big.NewFloat(1e8)).Int(nil)
		}
	}
	delegator, _ := b.str("delegatorAddress", true, &errs)
	if len(errs) > 0 {
		return nil, validation(errs...)
	}
	if !isEVMAddress(delegator) {
		return nil, invalidDelegator("delegatorAddress", delegator, "hyperliquid-"+network)
	}
	chain, sigChain := "Mainnet", "0xa4b1"
	if network == "testnet" {
		chain, sigChain = "Testnet", "0x66eee"
	}
	now := s.now()
	action := map[string]any{
		"type": "cWithdraw", "hyperliquidChain": chain, "signatureChainId": sigChain,
		"wei": wei, "nonce": now.UnixMilli(),
	}
	raw, err := json.Marshal(map[string]any{"action": action, "nonce": now.UnixMilli(), "delegator": strings.ToLower(delegator)})
	if err != nil {
		return nil, internalError("encode withdrawal request: " + err.Error())
	}
	return hyperliquidWithdrawal{Amount: amount.String(), UnsignedTransaction: string(raw), CreatedAt: formatTime(now)}, nil
}
