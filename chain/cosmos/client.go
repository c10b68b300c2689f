package cosmos

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Errors of the client.
var (
	// ErrNetworkUnverified: the endpoint has not been proven to serve the configured chain id.
	ErrNetworkUnverified = errors.New("cosmos REST endpoint not verified")
	// ErrUnavailable: the endpoint failed or could not be reached; asking again may help.
	ErrUnavailable = errors.New("cosmos REST endpoint unavailable")
	// ErrRejected: the endpoint refused the request in a way asking again will not change.
	ErrRejected = errors.New("cosmos REST endpoint refused the request")
)

// Client reads one chain.
type Client struct {
	base     string
	chainID  string
	http     *http.Client
	verified atomic.Bool
	expect   *Expect
	params   atomic.Pointer[Params]
}

// New returns a client of the REST endpoint at base that must serve chainID.
func New(base, chainID string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{Timeout: 20 * time.Second}
	}
	return &Client{base: strings.TrimRight(base, "/"), chainID: chainID, http: hc}
}

// ChainID is the chain id the client must serve.
func (c *Client) ChainID() string { return c.chainID }

// Verify reads the node's network and proves it is the configured chain id; with an Expect set,
// it then reads the chain's parameters (ReadParams) and proves them against it. Until both
// hold, every read fails with ErrNetworkUnverified.
func (c *Client) Verify(ctx context.Context) error {
	var out struct {
		DefaultNodeInfo struct {
			Network string `json:"network"`
		} `json:"default_node_info"`
	}
	if _, err := c.get(ctx, "/cosmos/base/tendermint/v1beta1/node_info", &out); err != nil {
		return err
	}
	if out.DefaultNodeInfo.Network != c.chainID {
		c.verified.Store(false)
		return fmt.Errorf("%w: %s serves chain id %q, want %q", ErrNetworkUnverified, c.base, out.DefaultNodeInfo.Network, c.chainID)
	}
	if c.expect != nil {
		p, err := c.ReadParams(ctx)
		if err != nil {
			c.verified.Store(false)
			return err
		}
		c.params.Store(&p)
		if err := c.expect.Check(p); err != nil {
			c.verified.Store(false)
			return fmt.Errorf("%w: %s: %w", ErrNetworkUnverified, c.base, err)
		}
	}
	c.verified.Store(true)
	return nil
}

// Verified reports whether Verify succeeded.
func (c *Client) Verified() bool { return c.verified.Load() }

// get reads path into out; found is false on a 404 (an unknown account, transaction, delegation).
func (c *Client) get(ctx context.Context, path string, out any) (found bool, err error) {
	return c.do(ctx, http.MethodGet, path, nil, out)
}

// do sends one request and decodes its answer into out; found is false on a 404.
func (c *Client) do(ctx context.Context, method, path string, in []byte, out any) (found bool, err error) {
	var body io.Reader
	if in != nil {
		body = bytes.NewReader(in)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrRejected, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return false, fmt.Errorf("%w: %s %s: %v", ErrUnavailable, method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return false, fmt.Errorf("%w: %s %s: %v", ErrUnavailable, method, path, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return false, nil
	case resp.StatusCode == http.StatusNotImplemented:
		return false, &notServedError{method: method, path: path}
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return false, fmt.Errorf("%w: %s %s: status %d", ErrUnavailable, method, path, resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return false, &statusError{method: method, path: path, status: resp.StatusCode, body: excerpt(raw)}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return false, fmt.Errorf("%w: %s %s: undecodable answer: %v", ErrUnavailable, method, path, err)
	}
	return true, nil
}

// statusError is a refusal (4xx other than 404 and 429): ErrRejected.
type statusError struct {
	method, path string
	status       int
	body         string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%v: %s %s: status %d: %s", ErrRejected, e.method, e.path, e.status, e.body)
}

func (e *statusError) Unwrap() error { return ErrRejected }

func excerpt(b []byte) string {
	s := string(b)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// read is get behind the proof of the chain id.
func (c *Client) read(ctx context.Context, path string, out any) (bool, error) {
	if !c.Verified() {
		return false, fmt.Errorf("%w: %s (chain id %s)", ErrNetworkUnverified, c.base, c.chainID)
	}
	return c.get(ctx, path, out)
}

// Account is an account's number and next sequence.
type Account struct {
	Number   uint64
	Sequence uint64
}

// Account reads addr's account; nil when the chain does not know it.
func (c *Client) Account(ctx context.Context, addr string) (*Account, error) {
	var out struct {
		Account struct {
			AccountNumber string `json:"account_number"`
			Sequence      string `json:"sequence"`
		} `json:"account"`
	}
	found, err := c.read(ctx, "/cosmos/auth/v1beta1/accounts/"+url.PathEscape(addr), &out)
	if err != nil || !found {
		return nil, err
	}
	n, err1 := strconv.ParseUint(out.Account.AccountNumber, 10, 64)
	s, err2 := strconv.ParseUint(out.Account.Sequence, 10, 64)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("%w: account %s: bad number or sequence", ErrUnavailable, addr)
	}
	return &Account{Number: n, Sequence: s}, nil
}

// TxResult is an included transaction.
type TxResult struct {
	Hash      string
	Height    uint64
	Code      uint32
	Codespace string
	Log       string
	GasWanted uint64
	GasUsed   uint64
}

// Tx reads a transaction by hash (hex, either case); nil when it is not included (or not indexed
// yet).
func (c *Client) Tx(ctx context.Context, hash string) (*TxResult, error) {
	hash = strings.ToUpper(hash)
	var out struct {
		TxResponse struct {
			Height    string `json:"height"`
			TxHash    string `json:"txhash"`
			Code      uint32 `json:"code"`
			Codespace string `json:"codespace"`
			RawLog    string `json:"raw_log"`
			GasWanted string `json:"gas_wanted"`
			GasUsed   string `json:"gas_used"`
		} `json:"tx_response"`
	}
	found, err := c.read(ctx, "/cosmos/tx/v1beta1/txs/"+url.PathEscape(hash), &out)
	if err != nil || !found {
		return nil, err
	}
	r := out.TxResponse
	h, err := strconv.ParseUint(r.Height, 10, 64)
	if err != nil || h == 0 || !strings.EqualFold(r.TxHash, hash) {
		return nil, fmt.Errorf("%w: transaction %s: answer for %q at height %q", ErrUnavailable, hash, r.TxHash, r.Height)
	}
	gw, _ := strconv.ParseUint(r.GasWanted, 10, 64)
	gu, _ := strconv.ParseUint(r.GasUsed, 10, 64)
	return &TxResult{Hash: strings.ToUpper(r.TxHash), Height: h, Code: r.Code, Codespace: r.Codespace, Log: r.RawLog, GasWanted: gw, GasUsed: gu}, nil
}

// BlockTxs is one block's height and its transactions' bytes (TxRaw, as the chain holds them).
type BlockTxs struct {
	Height uint64
	Txs    [][]byte
}

// Block reads the block at height with its transactions' bytes
// (/cosmos/base/tendermint/v1beta1/blocks/{height}, block.data.txs in base64). It is nil when the
// node does not have the block yet: a 404, or the SDK's "requested block height is bigger then the
// chain length" (InvalidArgument, 400) from a node behind the one that gave the latest height.
func (c *Client) Block(ctx context.Context, height uint64) (*BlockTxs, error) {
	var out struct {
		Block struct {
			Header struct {
				Height string `json:"height"`
			} `json:"header"`
			Data struct {
				Txs []string `json:"txs"`
			} `json:"data"`
		} `json:"block"`
	}
	found, err := c.read(ctx, "/cosmos/base/tendermint/v1beta1/blocks/"+strconv.FormatUint(height, 10), &out)
	var se *statusError
	if errors.As(err, &se) && se.status == http.StatusBadRequest && strings.Contains(se.body, "bigger") {
		return nil, nil
	}
	if err != nil || !found {
		return nil, err
	}
	h, err := strconv.ParseUint(out.Block.Header.Height, 10, 64)
	if err != nil || h != height {
		return nil, fmt.Errorf("%w: block %d: answer for height %q", ErrUnavailable, height, out.Block.Header.Height)
	}
	b := &BlockTxs{Height: h}
	for i, t := range out.Block.Data.Txs {
		raw, err := base64.StdEncoding.DecodeString(t)
		if err != nil {
			return nil, fmt.Errorf("%w: block %d: transaction %d is not base64", ErrUnavailable, height, i)
		}
		b.Txs = append(b.Txs, raw)
	}
	return b, nil
}

// CheckResult is a node's answer to a broadcast in BROADCAST_MODE_SYNC: CheckTx's code and log
// (code 0: accepted into its mempool).
type CheckResult struct {
	Hash      string
	Code      uint32
	Codespace string
	Log       string
}

// BroadcastSync sends signed TxRaw bytes to the node (POST /cosmos/tx/v1beta1/txs,
// BROADCAST_MODE_SYNC) and returns its CheckTx answer.
func (c *Client) BroadcastSync(ctx context.Context, raw []byte) (*CheckResult, error) {
	if !c.Verified() {
		return nil, fmt.Errorf("%w: %s (chain id %s)", ErrNetworkUnverified, c.base, c.chainID)
	}
	req, err := json.Marshal(map[string]string{"tx_bytes": base64.StdEncoding.EncodeToString(raw), "mode": "BROADCAST_MODE_SYNC"})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRejected, err)
	}
	var out struct {
		TxResponse struct {
			TxHash    string `json:"txhash"`
			Code      uint32 `json:"code"`
			Codespace string `json:"codespace"`
			RawLog    string `json:"raw_log"`
		} `json:"tx_response"`
	}
	found, err := c.do(ctx, http.MethodPost, "/cosmos/tx/v1beta1/txs", req, &out)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%w: POST /cosmos/tx/v1beta1/txs: not found", ErrRejected)
	}
	r := out.TxResponse
	return &CheckResult{Hash: strings.ToUpper(r.TxHash), Code: r.Code, Codespace: r.Codespace, Log: r.RawLog}, nil
}

// UnbondingTime reads the staking params' unbonding time.
func (c *Client) UnbondingTime(ctx context.Context) (time.Duration, error) {
	var out struct {
		Params struct {
			UnbondingTime string `json:"unbonding_time"`
		} `json:"params"`
	}
	if _, err := c.read(ctx, "/cosmos/staking/v1beta1/params", &out); err != nil {
		return 0, err
	}
	d, err := time.ParseDuration(out.Params.UnbondingTime)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%w: unbonding time %q", ErrUnavailable, out.Params.UnbondingTime)
	}
	return d, nil
}

// Block is the latest block's height and time.
type Block struct {
	Height uint64
	Time   time.Time
}

// LatestBlock reads the latest block header.
func (c *Client) LatestBlock(ctx context.Context) (Block, error) {
	var out struct {
		Block struct {
			Header struct {
				Height string    `json:"height"`
				Time   time.Time `json:"time"`
			} `json:"header"`
		} `json:"block"`
	}
	if _, err := c.read(ctx, "/cosmos/base/tendermint/v1beta1/blocks/latest", &out); err != nil {
		return Block{}, err
	}
	h, err := strconv.ParseUint(out.Block.Header.Height, 10, 64)
	if err != nil {
		return Block{}, fmt.Errorf("%w: latest block height %q", ErrUnavailable, out.Block.Header.Height)
	}
	return Block{Height: h, Time: out.Block.Header.Time}, nil
}

// Delegation reads the amount delegator has delegated to validator, in the bond denom (0 when none).
func (c *Client) Delegation(ctx context.Context, delegator, validator string) (*big.Int, error) {
	var out struct {
		DelegationResponse struct {
			Balance struct {
				Amount string `json:"amount"`
			} `json:"balance"`
		} `json:"delegation_response"`
	}
	found, err := c.read(ctx, "/cosmos/staking/v1beta1/validators/"+url.PathEscape(validator)+"/delegations/"+url.PathEscape(delegator), &out)
	if err != nil {
		return nil, err
	}
	if !found {
		return new(big.Int), nil
	}
	return integer("delegation", out.DelegationResponse.Balance.Amount)
}

// Balance reads addr's balance of denom (0 when none).
func (c *Client) Balance(ctx context.Context, addr, denom string) (*big.Int, error) {
	var out struct {
		Balances []struct {
			Denom  string `json:"denom"`
			Amount string `json:"amount"`
		} `json:"balances"`
	}
	if _, err := c.read(ctx, "/cosmos/bank/v1beta1/balances/"+url.PathEscape(addr), &out); err != nil {
		return nil, err
	}
	for _, b := range out.Balances {
		if b.Denom == denom {
			return integer("balance", b.Amount)
		}
	}
	return new(big.Int), nil
}

// Rewards reads delegator's rewards with validator in denom, rounded down to a whole unit.
func (c *Client) Rewards(ctx context.Context, delegator, validator, denom string) (*big.Int, error) {
	var out struct {
		Rewards []struct {
			Denom  string `json:"denom"`
			Amount string `json:"amount"`
		} `json:"rewards"`
	}
	found, err := c.read(ctx, "/cosmos/distribution/v1beta1/delegators/"+url.PathEscape(delegator)+"/rewards/"+url.PathEscape(validator), &out)
	if err != nil || !found {
		return new(big.Int), err
	}
	for _, r := range out.Rewards {
		if r.Denom == denom {
			whole, _, _ := strings.Cut(r.Amount, ".")
			return integer("rewards", whole)
		}
	}
	return new(big.Int), nil
}

// UnbondingEntry is one entry of a delegator's unbonding queue.
type UnbondingEntry struct {
	Validator      string
	CreationHeight uint64
	CompletionTime time.Time
	Balance        *big.Int
}

// Unbonding reads delegator's unbonding queue.
func (c *Client) Unbonding(ctx context.Context, delegator string) ([]UnbondingEntry, error) {
	var out struct {
		UnbondingResponses []struct {
			ValidatorAddress string `json:"validator_address"`
			Entries          []struct {
				CreationHeight string    `json:"creation_height"`
				CompletionTime time.Time `json:"completion_time"`
				Balance        string    `json:"balance"`
			} `json:"entries"`
		} `json:"unbonding_responses"`
	}
	if _, err := c.read(ctx, "/cosmos/staking/v1beta1/delegators/"+url.PathEscape(delegator)+"/unbonding_delegations", &out); err != nil {
		return nil, err
	}
	var entries []UnbondingEntry
	for _, r := range out.UnbondingResponses {
		for _, e := range r.Entries {
			h, err := strconv.ParseUint(e.CreationHeight, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: unbonding creation height %q", ErrUnavailable, e.CreationHeight)
			}
			b, err := integer("unbonding balance", e.Balance)
			if err != nil {
				return nil, err
			}
			entries = append(entries, UnbondingEntry{Validator: r.ValidatorAddress, CreationHeight: h, CompletionTime: e.CompletionTime, Balance: b})
		}
	}
	return entries, nil
}

func integer(what, s string) (*big.Int, error) {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || v.Sign() < 0 {
		return nil, fmt.Errorf("%w: %s %q is not a whole amount", ErrUnavailable, what, s)
	}
	return v, nil
}
