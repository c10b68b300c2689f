package apiclient

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"iter"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stakeflow/stakeflow/amount"
	"github.com/stakeflow/stakeflow/chain/networks"
)

// Limits of the service interface.
const (
	// MaxLimit is the largest page size of endpoints 1, 2 and 8.
	MaxLimit = 1000
	// DefaultLimit is the service's page size when none is sent.
	DefaultLimit = 50
	// MaxDataOffset is the largest offset of endpoints 1 and 2.
	MaxDataOffset = 10_000_000
	// MaxSSVOffset is the largest offset of endpoint 8.
	MaxSSVOffset = 100_000
)

// ChainSolana is the chain value of the unified interface for Solana.
const ChainSolana = "solana"

const (
	pathPrefix         = "/api/v1/"
	errReasonRequired  = "required"
	errReasonPositiveN = "must hold a positive integer in decimal digits that fits in 64 bits"
)

// The chains' networks come from the one catalogue (chain/networks).
var (
	celestiaNetworks    = networks.Celestia.Names()
	hyperliquidNetworks = networks.Hyperliquid.Names()
	tonNetworks         = networks.TON.Names()
	// unifiedNetworks lists, per chain, the networks of the unified interface.
	unifiedNetworks = map[string][]string{ChainSolana: solanaNetworks}
)

// NetworkAPYNetworks are the network values of endpoint 2 (Get Network APY). They are the
// contract's list (data networks, most of them chains stakeflow does not operate), not a chain's
// network catalogue, so they stay here.
var NetworkAPYNetworks = []string{"solana", "polkadot", "kusama", "sui", "ethereum", "celestia"}

// DelegatorAPRNetworks are the network values of endpoint 1 (Get Delegator APR) (the contract's
// list, like NetworkAPYNetworks).
var DelegatorAPRNetworks = []string{"ethereum"}

// solanaNetworks are the Solana networks the service serves (endpoints 7 and 10 to 13), from the
// catalogue (networks.Solana).
var solanaNetworks = networks.Solana.Names()

// DelegatorAPR calls endpoint 1, GET /api/v1/{network}/data/delegator/apr.
// network must be "ethereum".
func (c *Client) DelegatorAPR(ctx context.Context, network string, q DelegatorAPRQuery) (*DelegatorRewardsPage, error) {
	if err := checkNetwork(network, DelegatorAPRNetworks); err != nil {
		return nil, err
	}
	if strings.TrimSpace(q.Address) == "" {
		return nil, argErr("address", errReasonRequired)
	}
	v := url.Values{"address": {q.Address}}
	if err := dataQuery(v, q.StartAt, q.FinishAt, q.StartNumber, q.FinishNumber, q.Limit, q.Offset, MaxDataOffset); err != nil {
		return nil, err
	}
	var out DelegatorRewardsPage
	err := c.do(ctx, request{endpoint: EndpointDelegatorAPR, method: http.MethodGet, path: pathPrefix + network + "/data/delegator/apr", query: v}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// NetworkAPY calls endpoint 2, GET /api/v1/{network}/data/network/apy.
// network is one of solana, polkadot, kusama, sui, ethereum, celestia.
func (c *Client) NetworkAPY(ctx context.Context, network string, q NetworkAPYQuery) (*NetworkAPYPage, error) {
	if err := checkNetwork(network, NetworkAPYNetworks); err != nil {
		return nil, err
	}
	v := url.Values{}
	if err := dataQuery(v, q.StartAt, q.FinishAt, q.StartNumber, q.FinishNumber, q.Limit, q.Offset, MaxDataOffset); err != nil {
		return nil, err
	}
	var out NetworkAPYPage
	err := c.do(ctx, request{endpoint: EndpointNetworkAPY, method: http.MethodGet, path: pathPrefix + network + "/data/network/apy", query: v}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// CelestiaSend calls endpoint 3, POST /api/v1/celestia/{network}/transaction/send.
// network is celestia-mainnet-beta or celestia-mocha-testnet; the signed
// transaction must be base64 or hexadecimal.
func (c *Client) CelestiaSend(ctx context.Context, network string, req CelestiaSendRequest) (*CelestiaBroadcastResult, error) {
	if err := checkNetwork(network, celestiaNetworks); err != nil {
		return nil, err
	}
	s := req.SignedTransaction
	switch {
	case s == "":
		return nil, argErr("signedTransaction", errReasonRequired)
	case !isHex(strings.TrimPrefix(s, "0x")) && !isBase64(s):
		return nil, argErr("signedTransaction", "must be base64 or hexadecimal")
	}
	var out CelestiaBroadcastResult
	err := c.do(ctx, request{endpoint: EndpointCelestiaSend, method: http.MethodPost, path: pathPrefix + "celestia/" + network + "/transaction/send", body: req}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// PolygonSend calls endpoint 4, POST /api/v1/polygon/transaction/send, and
// returns the envelope's result as raw JSON (its shape is not documented).
func (c *Client) PolygonSend(ctx context.Context, req PolygonSendRequest) (json.RawMessage, error) {
	s := req.SignedTransaction
	switch {
	case s == "":
		return nil, argErr("signedTransaction", errReasonRequired)
	case !strings.HasPrefix(s, "0x") || !isHex(s[2:]):
		return nil, argErr("signedTransaction", "must be 0x-prefixed hexadecimal")
	case strings.TrimSpace(req.StakerAddress) == "":
		return nil, argErr("stakerAddress", errReasonRequired)
	}
	var out json.RawMessage
	err := c.do(ctx, request{endpoint: EndpointPolygonSend, method: http.MethodPost, path: pathPrefix + "polygon/transaction/send", body: req}, &out)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EigenLayerVerifyCheckpointProofs calls endpoint 5,
// POST /api/v1/eth/staking/eigenlayer/tx/verify-checkpoint-proofs.
func (c *Client) EigenLayerVerifyCheckpointProofs(ctx context.Context, req VerifyCheckpointProofsRequest) (*SerializedEVMTransaction, error) {
	switch {
	case strings.TrimSpace(req.EigenPodOwnerAddress) == "":
		return nil, argErr("eigenPodOwnerAddress", errReasonRequired)
	case strings.TrimSpace(req.ActivateTx) == "":
		return nil, argErr("activateTx", errReasonRequired)
	}
	var out SerializedEVMTransaction
	err := c.do(ctx, request{endpoint: EndpointEigenLayerVerifyCheckpointProofs, method: http.MethodPost, path: pathPrefix + "eth/staking/eigenlayer/tx/verify-checkpoint-proofs", body: req}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// HyperliquidWithdraw calls endpoint 6, POST /api/v1/hyperliquid/{network}/staking/withdraw.
// network is mainnet or testnet; amount must be a positive number.
func (c *Client) HyperliquidWithdraw(ctx context.Context, network string, req HyperliquidWithdrawRequest) (*HyperliquidWithdrawal, error) {
	if err := checkNetwork(network, hyperliquidNetworks); err != nil {
		return nil, err
	}
	if err := checkPositiveNumber("amount", req.Amount); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.DelegatorAddress) == "" {
		return nil, argErr("delegatorAddress", errReasonRequired)
	}
	var out HyperliquidWithdrawal
	err := c.do(ctx, request{endpoint: EndpointHyperliquidWithdraw, method: http.MethodPost, path: pathPrefix + "hyperliquid/" + network + "/staking/withdraw", body: req}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// SolanaValidatorStatus calls endpoint 7, GET /api/v1/solana/{network}/validator/status,
// sending voteAccounts comma-separated in the query parameter set by
// WithValidatorStatusParam. network is mainnet-beta or testnet.
func (c *Client) SolanaValidatorStatus(ctx context.Context, network string, voteAccounts []string) (*ValidatorStatusResult, error) {
	if err := checkNetwork(network, solanaNetworks); err != nil {
		return nil, err
	}
	if len(voteAccounts) == 0 {
		return nil, argErr(c.statusParam, errReasonRequired)
	}
	for i, a := range voteAccounts {
		if a == "" || strings.ContainsAny(a, ", \t\r\n") {
			return nil, argErr(fmt.Sprintf("%s[%d]", c.statusParam, i), "must be a non-empty public key without commas or white space")
		}
	}
	v := url.Values{c.statusParam: {strings.Join(voteAccounts, ",")}}
	var out ValidatorStatusResult
	err := c.do(ctx, request{endpoint: EndpointValidatorStatus, method: http.MethodGet, path: pathPrefix + "solana/" + network + "/validator/status", query: v}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// SSVRequests calls endpoint 8, GET /api/v1/eth/staking/ssv/request: the
// set-up requests created with the client's token.
func (c *Client) SSVRequests(ctx context.Context, q SSVRequestsQuery) (*SetupRequestPage, error) {
	v := url.Values{}
	if err := pageQuery(v, q.Limit, q.Offset, MaxSSVOffset); err != nil {
		return nil, err
	}
	var out SetupRequestPage
	err := c.do(ctx, request{endpoint: EndpointSSVRequests, method: http.MethodGet, path: pathPrefix + "eth/staking/ssv/request", query: v}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// TONTransactionStatus calls endpoint 9,
// GET /api/v1/ton/{network}/transactions/status/{transactionHash}. network is
// mainnet or testnet; txHash is path-escaped (a base64 hash may hold '/').
func (c *Client) TONTransactionStatus(ctx context.Context, network, txHash string) (*TONTransactionStatus, error) {
	if err := checkNetwork(network, tonNetworks); err != nil {
		return nil, err
	}
	if strings.TrimSpace(txHash) == "" || txHash == "." || txHash == ".." {
		return nil, argErr("transactionHash", errReasonRequired)
	}
	var out TONTransactionStatus
	err := c.do(ctx, request{endpoint: EndpointTONTransactionStatus, method: http.MethodGet, path: pathPrefix + "ton/" + network + "/transactions/status/" + url.PathEscape(txHash)}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Stake calls endpoint 10, POST /api/v1/unified/staking/stake.
func (c *Client) Stake(ctx context.Context, req StakeRequest) (*UnsignedTransaction, error) {
	if err := checkUnified(req.Chain, req.Network, req.StakerAddress); err != nil {
		return nil, err
	}
	if err := checkAmount("amount", req.Amount); err != nil {
		return nil, err
	}
	return c.unsigned(ctx, EndpointStake, "unified/staking/stake", req)
}

// Unstake calls endpoint 11, POST /api/v1/unified/staking/unstake.
func (c *Client) Unstake(ctx context.Context, req UnstakeRequest) (*UnsignedTransaction, error) {
	if err := checkUnified(req.Chain, req.Network, req.StakerAddress); err != nil {
		return nil, err
	}
	if err := checkAmount("extra.amount", req.Extra.Amount); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Extra.StakeAccount) == "" {
		return nil, argErr("extra.stakeAccount", errReasonRequired)
	}
	return c.unsigned(ctx, EndpointUnstake, "unified/staking/unstake", req)
}

// Withdraw calls endpoint 12, POST /api/v1/unified/staking/withdraw.
func (c *Client) Withdraw(ctx context.Context, req WithdrawRequest) (*UnsignedTransaction, error) {
	if err := checkUnified(req.Chain, req.Network, req.StakerAddress); err != nil {
		return nil, err
	}
	if err := checkAmount("extra.amount", req.Extra.Amount); err != nil {
		return nil, err
	}
	return c.unsigned(ctx, EndpointWithdraw, "unified/staking/withdraw", req)
}

// Broadcast calls endpoint 13, POST /api/v1/unified/transaction/broadcast.
// The signed transaction is sent as given and never logged.
func (c *Client) Broadcast(ctx context.Context, req BroadcastRequest) (*BroadcastResult, error) {
	if err := checkUnified(req.Chain, req.Network, req.StakerAddress); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.SignedTransaction) == "" {
		return nil, argErr("signedTransaction", errReasonRequired)
	}
	var out BroadcastResult
	err := c.do(ctx, request{endpoint: EndpointBroadcast, method: http.MethodPost, path: pathPrefix + "unified/transaction/broadcast", body: req}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func (c *Client) unsigned(ctx context.Context, ep Endpoint, path string, body any) (*UnsignedTransaction, error) {
	var out UnsignedTransaction
	if err := c.do(ctx, request{endpoint: ep, method: http.MethodPost, path: pathPrefix + path, body: body}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DelegatorAPRAll walks endpoint 1 page by page from q.Offset, yielding every
// record until a short or empty page. A failure is yielded once, last.
func (c *Client) DelegatorAPRAll(ctx context.Context, network string, q DelegatorAPRQuery) iter.Seq2[DelegatorRewardRecord, error] {
	return paginate(q.Limit, q.Offset, MaxDataOffset, func(limit, offset int) ([]DelegatorRewardRecord, int, int, error) {
		q.Limit, q.Offset = limit, offset
		p, err := c.DelegatorAPR(ctx, network, q)
		if err != nil {
			return nil, 0, -1, err
		}
		return p.List, int(p.Limit), -1, nil
	})
}

// NetworkAPYAll walks endpoint 2 page by page from q.Offset, yielding every
// record until a short or empty page. A failure is yielded once, last.
func (c *Client) NetworkAPYAll(ctx context.Context, network string, q NetworkAPYQuery) iter.Seq2[NetworkAPYRecord, error] {
	return paginate(q.Limit, q.Offset, MaxDataOffset, func(limit, offset int) ([]NetworkAPYRecord, int, int, error) {
		q.Limit, q.Offset = limit, offset
		p, err := c.NetworkAPY(ctx, network, q)
		if err != nil {
			return nil, 0, -1, err
		}
		return p.List, p.Limit, -1, nil
	})
}

// SSVRequestsAll walks endpoint 8 page by page from q.Offset, yielding every
// set-up request until totalCount is reached or a page is short or empty. A
// failure is yielded once, last.
func (c *Client) SSVRequestsAll(ctx context.Context, q SSVRequestsQuery) iter.Seq2[SetupRequest, error] {
	return paginate(q.Limit, q.Offset, MaxSSVOffset, func(limit, offset int) ([]SetupRequest, int, int, error) {
		p, err := c.SSVRequests(ctx, SSVRequestsQuery{Limit: limit, Offset: offset})
		if err != nil {
			return nil, 0, -1, err
		}
		return p.List, p.Limit, p.TotalCount, nil
	})
}

// paginate drives fetch, which returns a page's items, the page size the
// service reports, and the total count (-1 when unknown; 0 is treated as
// unknown too, since a page that holds records cannot belong to an empty set).
func paginate[T any](limit, offset, maxOffset int, fetch func(limit, offset int) ([]T, int, int, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		for {
			items, pageLimit, total, err := fetch(limit, offset)
			if err != nil {
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			offset += len(items)
			size := limit
			if size == 0 {
				size = pageLimit
			}
			if size <= 0 {
				size = DefaultLimit
			}
			if len(items) == 0 || len(items) < size || (total > 0 && offset >= total) {
				return
			}
			if offset > maxOffset {
				yield(zero, fmt.Errorf("apiclient: pagination stopped at offset %d: the service accepts offsets up to %d", offset, maxOffset))
				return
			}
		}
	}
}

func checkNetwork(network string, allowed []string) error {
	if !slices.Contains(allowed, network) {
		return argErr("network", "%q is not one of %s", network, strings.Join(allowed, ", "))
	}
	return nil
}

func checkUnified(chain, network, staker string) error {
	nets, ok := unifiedNetworks[chain]
	if !ok {
		return argErr("chain", "%q is not supported by the unified interface (supported: %s)", chain, ChainSolana)
	}
	if err := checkNetwork(network, nets); err != nil {
		return err
	}
	if strings.TrimSpace(staker) == "" {
		return argErr("stakerAddress", errReasonRequired)
	}
	return nil
}

// checkAmount accepts a positive whole number of the base unit under the amount package's rule
// (decimal digits only, no leading zero), fitting in uint64.
func checkAmount(field, s string) error {
	if s == "" {
		return argErr(field, errReasonRequired)
	}
	a, err := amount.Parse(s)
	if err == nil {
		err = a.Positive()
	}
	if err == nil {
		_, err = a.Uint64()
	}
	if err != nil {
		return argErr(field, errReasonPositiveN)
	}
	return nil
}

// checkPositiveNumber accepts a JSON number literal greater than zero.
func checkPositiveNumber(field string, n json.Number) error {
	s := string(n)
	if s == "" {
		return argErr(field, errReasonRequired)
	}
	if !json.Valid([]byte(s)) || strings.ContainsAny(s, "\"[{tfn ") {
		return argErr(field, "must be a JSON number")
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Sign() <= 0 {
		return argErr(field, "must be greater than zero")
	}
	return nil
}

func pageQuery(v url.Values, limit, offset, maxOffset int) error {
	if limit < 0 || limit > MaxLimit {
		return argErr("limit", "must be between 1 and %d (0 for the service default), got %d", MaxLimit, limit)
	}
	if offset < 0 || offset > maxOffset {
		return argErr("offset", "must be between 0 and %d, got %d", maxOffset, offset)
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	return nil
}

func dataQuery(v url.Values, startAt, finishAt time.Time, startNumber, finishNumber *int64, limit, offset, maxOffset int) error {
	if !startAt.IsZero() && !finishAt.IsZero() && finishAt.Before(startAt) {
		return argErr("finishAt", "must not be before startAt")
	}
	if startNumber != nil && finishNumber != nil && *finishNumber < *startNumber {
		return argErr("finishNumber", "must not be less than startNumber")
	}
	if err := pageQuery(v, limit, offset, maxOffset); err != nil {
		return err
	}
	if !startAt.IsZero() {
		v.Set("startAt", startAt.UTC().Format(time.RFC3339Nano))
	}
	if !finishAt.IsZero() {
		v.Set("finishAt", finishAt.UTC().Format(time.RFC3339Nano))
	}
	if startNumber != nil {
		v.Set("startNumber", strconv.FormatInt(*startNumber, 10))
	}
	if finishNumber != nil {
		v.Set("finishNumber", strconv.FormatInt(*finishNumber, 10))
	}
	return nil
}

func isHex(s string) bool {
	if s == "" || len(s)%2 != 0 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
			return false
		}
	}
	return true
}

func isBase64(s string) bool {
	if _, err := base64.StdEncoding.Strict().DecodeString(s); err == nil {
		return true
	}
	_, err := base64.RawStdEncoding.Strict().DecodeString(s)
	return err == nil
}
