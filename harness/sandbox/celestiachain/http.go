package celestiachain

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"time"
)

// Handler serves the ledger's Cosmos REST paths and its controls.
func (l *Ledger) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /cosmos/auth/v1beta1/accounts/{addr}", l.getAccount)
	mux.HandleFunc("GET /cosmos/tx/v1beta1/txs/{hash}", l.getTx)
	mux.HandleFunc("POST /cosmos/tx/v1beta1/txs", l.postTx)
	mux.HandleFunc("GET /cosmos/bank/v1beta1/balances/{addr}", l.getBalances)
	mux.HandleFunc("GET /cosmos/staking/v1beta1/params", l.getParams)
	mux.HandleFunc("GET /cosmos/staking/v1beta1/delegations/{addr}", l.getDelegations)
	mux.HandleFunc("GET /cosmos/staking/v1beta1/validators/{val}/delegations/{addr}", l.getDelegation)
	mux.HandleFunc("GET /cosmos/staking/v1beta1/delegators/{addr}/unbonding_delegations", l.getUnbonding)
	mux.HandleFunc("GET /cosmos/distribution/v1beta1/delegators/{addr}/rewards/{val}", l.getRewards)
	mux.HandleFunc("GET /cosmos/base/tendermint/v1beta1/node_info", l.getNodeInfo)
	mux.HandleFunc("GET /cosmos/auth/v1beta1/bech32", l.getBech32)
	mux.HandleFunc("GET /cosmos/base/node/v1beta1/config", l.getNodeConfig)
	mux.HandleFunc("GET /cosmos/base/tendermint/v1beta1/blocks/latest", l.getLatestBlock)
	mux.HandleFunc("GET /cosmos/base/tendermint/v1beta1/blocks/{height}", l.getBlock)
	mux.HandleFunc("GET /sandbox/state", func(w http.ResponseWriter, _ *http.Request) { reply(w, l.Snapshot()) })
	mux.HandleFunc("POST /sandbox/fund", l.postFund)
	mux.HandleFunc("POST /sandbox/rewards", l.postRewards)
	mux.HandleFunc("POST /sandbox/warp", l.postWarp)
	mux.HandleFunc("POST /sandbox/index-lag", l.postIndexLag)
	mux.HandleFunc("POST /sandbox/blocks", l.postBlocks)
	return mux
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// grpcError answers as the gRPC gateway does.
func grpcError(w http.ResponseWriter, status, code int, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": code, "message": fmt.Sprintf(format, args...), "details": []any{}})
}

func u64(v uint64) string { return strconv.FormatUint(v, 10) }

func coins(amount string) []map[string]string {
	return []map[string]string{{"denom": Denom, "amount": amount}}
}

func pagination(n int) map[string]any {
	return map[string]any{"next_key": nil, "total": strconv.Itoa(n)}
}

func (l *Ledger) getAccount(w http.ResponseWriter, r *http.Request) {
	addr := r.PathValue("addr")
	if _, err := accountBytes("celestia", addr); err != nil {
		grpcError(w, http.StatusBadRequest, 3, "%v: invalid address", err)
		return
	}
	a, ok := l.Account(addr)
	if !ok {
		grpcError(w, http.StatusNotFound, 5, "account %s not found", addr)
		return
	}
	var pk any
	if a.PubKey != nil {
		pk = map[string]string{"@type": "/cosmos.crypto.secp256k1.PubKey", "key": base64.StdEncoding.EncodeToString(a.PubKey)}
	}
	reply(w, map[string]any{"account": map[string]any{
		"@type": "/cosmos.auth.v1beta1.BaseAccount", "address": addr, "pub_key": pk,
		"account_number": u64(a.Number), "sequence": u64(a.Sequence),
	}})
}

func txResponse(res Result) map[string]any {
	return map[string]any{
		"height": strconv.FormatInt(res.Height, 10), "txhash": res.Hash, "codespace": res.Codespace,
		"code": res.Code, "data": "", "raw_log": res.Log, "logs": []any{}, "info": "",
		"gas_wanted": u64(res.GasWanted), "gas_used": u64(res.GasUsed), "tx": nil,
		"timestamp": timestamp(res.Time), "events": []any{},
	}
}

func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func (l *Ledger) getTx(w http.ResponseWriter, r *http.Request) {
	res, ok := l.IndexedTx(r.PathValue("hash"))
	if !ok {
		grpcError(w, http.StatusNotFound, 5, "tx not found: %s", r.PathValue("hash"))
		return
	}
	reply(w, map[string]any{"tx": map[string]any{}, "tx_response": txResponse(res)})
}

func (l *Ledger) postTx(w http.ResponseWriter, r *http.Request) {
	var body struct {
		TxBytes string `json:"tx_bytes"`
		Mode    string `json:"mode"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		grpcError(w, http.StatusBadRequest, 3, "invalid body: %v", err)
		return
	}
	raw, err := base64.StdEncoding.DecodeString(body.TxBytes)
	if err != nil || len(raw) == 0 {
		grpcError(w, http.StatusBadRequest, 3, "invalid empty tx")
		return
	}
	reply(w, map[string]any{"tx_response": txResponse(l.Broadcast(raw))})
}

func (l *Ledger) getBalances(w http.ResponseWriter, r *http.Request) {
	s := l.Snapshot()
	bal, ok := s.Balances[r.PathValue("addr")]
	if !ok || bal == "0" {
		reply(w, map[string]any{"balances": []any{}, "pagination": pagination(0)})
		return
	}
	reply(w, map[string]any{"balances": coins(bal), "pagination": pagination(1)})
}

func (l *Ledger) getParams(w http.ResponseWriter, _ *http.Request) {
	reply(w, map[string]any{"params": map[string]any{
		"unbonding_time": fmt.Sprintf("%ds", int64(l.opts.UnbondingTime/time.Second)), "max_validators": 100,
		"max_entries": 7, "historical_entries": 10000, "bond_denom": Denom, "min_commission_rate": "0.050000000000000000",
	}})
}

func delegationResponse(d Delegation) map[string]any {
	return map[string]any{
		"delegation": map[string]any{"delegator_address": d.Delegator, "validator_address": d.Validator,
			"shares": d.Amount + ".000000000000000000"},
		"balance": map[string]string{"denom": Denom, "amount": d.Amount},
	}
}

func (l *Ledger) getDelegations(w http.ResponseWriter, r *http.Request) {
	addr := r.PathValue("addr")
	out := []any{}
	for _, d := range l.Snapshot().Delegations {
		if d.Delegator == addr {
			out = append(out, delegationResponse(d))
		}
	}
	reply(w, map[string]any{"delegation_responses": out, "pagination": pagination(len(out))})
}

func (l *Ledger) getDelegation(w http.ResponseWriter, r *http.Request) {
	addr, val := r.PathValue("addr"), r.PathValue("val")
	for _, d := range l.Snapshot().Delegations {
		if d.Delegator == addr && d.Validator == val {
			reply(w, map[string]any{"delegation_response": delegationResponse(d)})
			return
		}
	}
	grpcError(w, http.StatusNotFound, 5, "delegation with delegator %s not found for validator %s", addr, val)
}

func (l *Ledger) getUnbonding(w http.ResponseWriter, r *http.Request) {
	addr := r.PathValue("addr")
	byVal := map[string][]any{}
	var vals []string
	for _, u := range l.Snapshot().Unbonding {
		if u.Delegator != addr {
			continue
		}
		if _, ok := byVal[u.Validator]; !ok {
			vals = append(vals, u.Validator)
		}
		byVal[u.Validator] = append(byVal[u.Validator], map[string]any{
			"creation_height": strconv.FormatInt(u.CreationHeight, 10), "completion_time": u.CompletionTime.Format(time.RFC3339Nano),
			"initial_balance": u.Amount, "balance": u.Amount, "unbonding_id": u64(u.ID), "unbonding_on_hold_ref_count": "0",
		})
	}
	out := []any{}
	for _, v := range vals {
		out = append(out, map[string]any{"delegator_address": addr, "validator_address": v, "entries": byVal[v]})
	}
	reply(w, map[string]any{"unbonding_responses": out, "pagination": pagination(len(out))})
}

func (l *Ledger) getRewards(w http.ResponseWriter, r *http.Request) {
	addr, val := r.PathValue("addr"), r.PathValue("val")
	for _, d := range l.Snapshot().Rewards {
		if d.Delegator == addr && d.Validator == val {
			reply(w, map[string]any{"rewards": []map[string]string{{"denom": Denom, "amount": d.Amount + ".000000000000000000"}}})
			return
		}
	}
	reply(w, map[string]any{"rewards": []any{}})
}

func (l *Ledger) getNodeInfo(w http.ResponseWriter, _ *http.Request) {
	reply(w, map[string]any{"default_node_info": map[string]any{"network": l.opts.ChainID, "moniker": "stakeflow-sandbox"},
		"application_version": map[string]any{"name": "celestia-app", "app_name": "celestia-appd"}})
}

// getBech32 answers the auth module's Bech32Prefix query (cosmos-sdk v0.50.13
// proto/cosmos/auth/v1beta1/query.proto: Bech32PrefixResponse{bech32_prefix}).
func (l *Ledger) getBech32(w http.ResponseWriter, _ *http.Request) {
	reply(w, map[string]any{"bech32_prefix": AccountPrefix})
}

// getNodeConfig answers the node service's Config query (cosmos-sdk v0.50.13
// proto/cosmos/base/node/v1beta1/query.proto ConfigResponse; client/grpc/node/service.go
// answers minimum_gas_price with sdk.DecCoins.String(), 18 decimals, and "" when app.toml sets
// none). Its pruning settings are the SDK's "default" strategy's; halt height none.
func (l *Ledger) getNodeConfig(w http.ResponseWriter, _ *http.Request) {
	price := ""
	if m := l.opts.MinGasPriceMilli; m > 0 {
		price = fmt.Sprintf("%d.%03d000000000000000%s", m/1000, m%1000, Denom)
	}
	reply(w, map[string]any{"minimum_gas_price": price, "pruning_keep_recent": "362880", "pruning_interval": "10", "halt_height": "0"})
}

func (l *Ledger) getLatestBlock(w http.ResponseWriter, _ *http.Request) {
	s := l.Snapshot()
	reply(w, map[string]any{"block": map[string]any{"header": map[string]any{
		"chain_id": s.ChainID, "height": strconv.FormatInt(s.Height, 10), "time": s.Time.Format(time.RFC3339Nano),
	}}})
}

// getBlock answers a block by height as the SDK's CometBFT service does: the header and
// block.data.txs, the transactions' bytes in base64; a height past the chain's is refused
// InvalidArgument (400) with the SDK's message.
func (l *Ledger) getBlock(w http.ResponseWriter, r *http.Request) {
	h, err := strconv.ParseInt(r.PathValue("height"), 10, 64)
	if err != nil {
		grpcError(w, http.StatusBadRequest, 3, "strconv.ParseInt: parsing %q: invalid syntax", r.PathValue("height"))
		return
	}
	txs, ok := l.Block(h)
	if !ok {
		grpcError(w, http.StatusBadRequest, 3, "requested block height is bigger then the chain length")
		return
	}
	enc := make([]string, len(txs))
	for i, t := range txs {
		enc[i] = base64.StdEncoding.EncodeToString(t)
	}
	block := map[string]any{
		"header": map[string]any{"chain_id": l.opts.ChainID, "height": strconv.FormatInt(h, 10)},
		"data":   map[string]any{"txs": enc},
	}
	reply(w, map[string]any{"block_id": map[string]any{}, "block": block, "sdk_block": block})
}

func (l *Ledger) postIndexLag(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Polls int `json:"polls"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Polls < 0 {
		grpcError(w, http.StatusBadRequest, 3, "body must be {\"polls\": <integer, 0 or more>}")
		return
	}
	l.SetIndexLag(body.Polls)
	reply(w, map[string]int{"polls": body.Polls})
}

func (l *Ledger) postBlocks(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Blocks int64 `json:"blocks"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Blocks <= 0 {
		grpcError(w, http.StatusBadRequest, 3, "body must be {\"blocks\": <positive integer>}")
		return
	}
	reply(w, map[string]int64{"height": l.AdvanceBlocks(body.Blocks)})
}

func amountArg(s string) (*big.Int, bool) {
	v, ok := new(big.Int).SetString(s, 10)
	return v, ok && v.Sign() > 0
}

func (l *Ledger) postFund(w http.ResponseWriter, r *http.Request) {
	var body struct{ Address, Amount string }
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		grpcError(w, http.StatusBadRequest, 3, "body must be {address, amount}: %v", err)
		return
	}
	amt, ok := amountArg(body.Amount)
	if !ok {
		grpcError(w, http.StatusBadRequest, 3, "amount must be a positive integer of utia")
		return
	}
	if err := l.Fund(body.Address, amt); err != nil {
		grpcError(w, http.StatusBadRequest, 3, "%v", err)
		return
	}
	a, _ := l.Account(body.Address)
	reply(w, map[string]any{"address": body.Address, "accountNumber": a.Number, "balance": l.Snapshot().Balances[body.Address]})
}

func (l *Ledger) postRewards(w http.ResponseWriter, r *http.Request) {
	var body struct{ Delegator, Validator, Amount string }
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		grpcError(w, http.StatusBadRequest, 3, "body must be {delegator, validator, amount}: %v", err)
		return
	}
	amt, ok := amountArg(body.Amount)
	if !ok {
		grpcError(w, http.StatusBadRequest, 3, "amount must be a positive integer of utia")
		return
	}
	if err := l.AddRewards(body.Delegator, body.Validator, amt); err != nil {
		grpcError(w, http.StatusBadRequest, 3, "%v", err)
		return
	}
	reply(w, map[string]bool{"ok": true})
}

func (l *Ledger) postWarp(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Seconds int64 `json:"seconds"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Seconds <= 0 {
		grpcError(w, http.StatusBadRequest, 3, "body must be {\"seconds\": <positive integer>}")
		return
	}
	reply(w, map[string]any{"time": l.Warp(time.Duration(body.Seconds) * time.Second)})
}
