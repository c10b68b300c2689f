package sandbox

import (
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"go.uber.org/zap"
)

// hyperliquidRoutes adds the emulated Hyperliquid API of each network,
// /hyperliquid/{network}/exchange and /hyperliquid/{network}/info (no token, plain JSON as
// Hyperliquid answers), and its controls under /sandbox/hyperliquid/.
func (s *server) hyperliquidRoutes(mux *http.ServeMux) {
	raw := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	l1 := func(w http.ResponseWriter, r *http.Request) (*hyperliquidL1, []byte, bool) {
		network := r.PathValue("network")
		if !contains(hyperliquidNetworks, network) {
			raw(w, http.StatusNotFound, "unknown network")
			return nil, nil, false
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
		if err != nil {
			raw(w, http.StatusBadRequest, "unreadable body")
			return nil, nil, false
		}
		return s.hl.chain(network, s.now), body, true
	}
	mux.HandleFunc("POST /hyperliquid/{network}/exchange", func(w http.ResponseWriter, r *http.Request) {
		c, body, ok := l1(w, r)
		if !ok {
			return
		}
		res := c.exchange(body)
		s.log.Info("hyperliquid exchange", zap.String("network", c.network), zap.Any("status", res["status"]), zap.Any("response", res["response"]))
		raw(w, http.StatusOK, res)
	})
	mux.HandleFunc("POST /hyperliquid/{network}/info", func(w http.ResponseWriter, r *http.Request) {
		c, body, ok := l1(w, r)
		if !ok {
			return
		}
		v, status := c.info(body)
		raw(w, status, v)
	})
	mux.Handle("POST /sandbox/hyperliquid/fund", s.wrapPlain(func(r *http.Request, _ *reqContext) (any, *apiError) {
		var body struct {
			Network string `json:"network"`
			User    string `json:"user"`
			Wei     uint64 `json:"wei"`
		}
		if err := decodeStrict(r, &body); err != nil || !contains(hyperliquidNetworks, body.Network) || !isEVMAddress(body.User) || body.Wei == 0 {
			return nil, invalidField("body", "isJson", "body must be {\"network\": mainnet|testnet, \"user\": 0x..., \"wei\": <positive>}")
		}
		return s.HyperliquidFund(body.Network, common.HexToAddress(body.User), body.Wei), nil
	}))
	mux.Handle("POST /sandbox/hyperliquid/warp", s.wrapPlain(func(r *http.Request, _ *reqContext) (any, *apiError) {
		var body struct {
			Network string   `json:"network"`
			By      Duration `json:"by"`
		}
		if err := decodeStrict(r, &body); err != nil || !contains(hyperliquidNetworks, body.Network) || body.By <= 0 {
			return nil, invalidField("body", "isJson", "body must be {\"network\": mainnet|testnet, \"by\": \"168h\"}")
		}
		return map[string]string{"time": formatTime(s.hl.chain(body.Network, s.now).advance(time.Duration(body.By)))}, nil
	}))
	mux.Handle("POST /sandbox/hyperliquid/hostile", s.wrapPlain(func(r *http.Request, _ *reqContext) (any, *apiError) {
		var body struct {
			Delegator string                 `json:"delegator"`
			Mode      HyperliquidHostileMode `json:"mode"`
		}
		if err := decodeStrict(r, &body); err != nil || !isEVMAddress(body.Delegator) {
			return nil, invalidField("body", "isJson", "body must be {\"delegator\": 0x..., \"mode\": <mode>}")
		}
		if err := body.Mode.Validate(); err != nil {
			return nil, invalidField("mode", "isIn", "%v", err)
		}
		s.hl.setHostile(body.Delegator, body.Mode)
		return body, nil
	}))
	mux.Handle("GET /sandbox/hyperliquid/account", s.wrapPlain(func(r *http.Request, _ *reqContext) (any, *apiError) {
		network, user := r.URL.Query().Get("network"), r.URL.Query().Get("user")
		if !contains(hyperliquidNetworks, network) || !isEVMAddress(user) {
			return nil, invalidField("query", "isValid", "query must name network (mainnet|testnet) and user (0x...)")
		}
		return s.hl.chain(network, s.now).account(common.HexToAddress(user)), nil
	}))
}

// HyperliquidFund adds wei (10^-8 HYPE) to user's undelegated staking balance on network.
func (s *server) HyperliquidFund(network string, user common.Address, wei uint64) HyperliquidAccount {
	c := s.hl.chain(network, s.now)
	c.fund(user, wei)
	return c.account(user)
}
