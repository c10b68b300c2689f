package sandbox

import (
	"github.com/stakeflow/stakeflow/chain/networks"

	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// hyperliquidNetworks are the network values of endpoint 6.
var hyperliquidNetworks = networks.Hyperliquid.Names()

// hyperliquidSignatureChainID is the signatureChainId endpoint 6 puts in its actions, as the
// official SDK does on both networks.
const hyperliquidSignatureChainID = "0x66eee"

// hyperliquidWithdrawal is the result of endpoint 6.
type hyperliquidWithdrawal struct {
	Amount              string `json:"amount"`
	UnsignedTransaction string `json:"unsignedTransaction"`
	CreatedAt           string `json:"createdAt"`
}

// HyperliquidHostileMode makes endpoint 6 answer a request that does not match what was asked
// for one delegator (POST /sandbox/hyperliquid/hostile); the zero value is honest.
type HyperliquidHostileMode string

// Hyperliquid hostile modes of endpoint 6.
const (
	HyperliquidHonest HyperliquidHostileMode = ""
	// HyperliquidOtherChain names the other network's hyperliquidChain.
	HyperliquidOtherChain HyperliquidHostileMode = "other-chain"
	// HyperliquidOtherWei asks for one wei (10^-8 HYPE) more than the amount.
	HyperliquidOtherWei HyperliquidHostileMode = "other-wei"
	// HyperliquidOtherAmount answers an action as asked but echoes another amount (one HYPE
	// more): an answer that contradicts itself.
	HyperliquidOtherAmount HyperliquidHostileMode = "other-amount"
	// HyperliquidOldNonce uses a nonce two days old.
	HyperliquidOldNonce HyperliquidHostileMode = "old-nonce"
	// HyperliquidWithdraw3 answers a withdraw3 (spot USDC out to an address) instead.
	HyperliquidWithdraw3 HyperliquidHostileMode = "withdraw3"
	// HyperliquidUsdSend answers a usdSend to a stranger instead.
	HyperliquidUsdSend HyperliquidHostileMode = "usd-send"
)

// HyperliquidHostileModes lists every non-empty mode.
var HyperliquidHostileModes = []HyperliquidHostileMode{HyperliquidOtherChain, HyperliquidOtherWei, HyperliquidOtherAmount, HyperliquidOldNonce, HyperliquidWithdraw3, HyperliquidUsdSend}

// Validate reports whether m is a known mode.
func (m HyperliquidHostileMode) Validate() error {
	if m == HyperliquidHonest {
		return nil
	}
	for _, k := range HyperliquidHostileModes {
		if m == k {
			return nil
		}
	}
	return fmt.Errorf("sandbox: unknown Hyperliquid hostile mode %q", string(m))
}

// hostileStranger is where hostile withdraw3 and usdSend actions send funds.
const hostileStranger = "0x000000000000000000000000000000000000dead"

// hyperliquidWithdraw answers endpoint 6 with an unsigned cWithdraw action (the JSON text of
// {"action", "nonce", "delegator"}) moving staking balance to the spot balance: wei is the amount
// × 10^8 exactly (an amount with more than 8 decimals is refused), the nonce the time in ms.
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
	var wei uint64
	if amountOK {
		v, ok := new(big.Rat).SetString(amount.String())
		switch {
		case !ok || v.Sign() <= 0:
			errs = append(errs, fieldErr("amount", "isPositive", "amount must be a positive number"))
		case !v.Mul(v, big.NewRat(100_000_000, 1)).IsInt() || !v.Num().IsUint64():
			errs = append(errs, fieldErr("amount", "maxDecimalPlaces", "amount must have at most 8 decimal places and fit 2^64-1 wei"))
		default:
			wei = v.Num().Uint64()
		}
	}
	delegator, _ := b.str("delegatorAddress", true, &errs)
	if len(errs) > 0 {
		return nil, validation(errs...)
	}
	if !isEVMAddress(delegator) {
		return nil, invalidDelegator("delegatorAddress", delegator, "hyperliquid-"+network)
	}
	chain, other := "Mainnet", "Testnet"
	if network == "testnet" {
		chain, other = "Testnet", "Mainnet"
	}
	now := s.now()
	nonce := now.UnixMilli()
	var action any = map[string]any{
		"type": "cWithdraw", "hyperliquidChain": chain, "signatureChainId": hyperliquidSignatureChainID, "wei": wei, "nonce": nonce,
	}
	mode := s.hl.hostile(delegator)
	switch mode {
	case HyperliquidOtherChain:
		action.(map[string]any)["hyperliquidChain"] = other
	case HyperliquidOtherWei:
		action.(map[string]any)["wei"] = wei + 1
	case HyperliquidOldNonce:
		nonce = now.Add(-48 * time.Hour).UnixMilli()
		action.(map[string]any)["nonce"] = nonce
	case HyperliquidWithdraw3:
		action = map[string]any{"type": "withdraw3", "hyperliquidChain": chain, "signatureChainId": hyperliquidSignatureChainID,
			"destination": hostileStranger, "amount": amount.String(), "time": nonce}
	case HyperliquidUsdSend:
		action = map[string]any{"type": "usdSend", "hyperliquidChain": chain, "signatureChainId": hyperliquidSignatureChainID,
			"destination": hostileStranger, "amount": amount.String(), "time": nonce}
	}
	if mode != HyperliquidHonest {
		s.log.Info("hostile Hyperliquid request", zap.String("delegator", delegator), zap.String("mode", string(mode)))
	}
	raw, err := json.Marshal(map[string]any{"action": action, "nonce": nonce, "delegator": strings.ToLower(delegator)})
	if err != nil {
		return nil, internalError("encode withdrawal request: " + err.Error())
	}
	s.hl.countRequest(delegator)
	echoed := amount.String()
	if mode == HyperliquidOtherAmount {
		echoed = hype(wei + 100_000_000)
	}
	return hyperliquidWithdrawal{Amount: echoed, UnsignedTransaction: string(raw), CreatedAt: formatTime(now)}, nil
}

// hyperliquidSandbox is the sandbox's Hyperliquid: endpoint 6's hostile modes and requests per
// delegator, and the emulated L1 (hyperliquidL1) of each network.
type hyperliquidSandbox struct {
	mu       sync.Mutex
	modes    map[string]HyperliquidHostileMode
	requests map[string]int
	l1       map[string]*hyperliquidL1
}

func (h *hyperliquidSandbox) hostile(delegator string) HyperliquidHostileMode {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.modes[strings.ToLower(delegator)]
}

func (h *hyperliquidSandbox) setHostile(delegator string, m HyperliquidHostileMode) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.modes == nil {
		h.modes = map[string]HyperliquidHostileMode{}
	}
	h.modes[strings.ToLower(delegator)] = m
}

func (h *hyperliquidSandbox) countRequest(delegator string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.requests == nil {
		h.requests = map[string]int{}
	}
	h.requests[strings.ToLower(delegator)]++
}

// Requests counts endpoint 6's answers for delegator.
func (h *hyperliquidSandbox) Requests(delegator string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.requests[strings.ToLower(delegator)]
}

// chain returns network's L1, creating it.
func (h *hyperliquidSandbox) chain(network string, now func() time.Time) *hyperliquidL1 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.l1 == nil {
		h.l1 = map[string]*hyperliquidL1{}
	}
	c, ok := h.l1[network]
	if !ok {
		c = newHyperliquidL1(network, now)
		h.l1[network] = c
	}
	return c
}
