package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// Rules of the emulated Hyperliquid L1.
const (
	// HyperliquidMaxPending is how many staking withdrawals a user may have pending.
	HyperliquidMaxPending = 5
	// hlNonceAge and hlNonceAhead bound a nonce around the exchange's clock, as Hyperliquid's
	// nonce rules do ("The nonce must be within (T - 2 days, T + 1 day), where T is the unix
	// millisecond timestamp on the block of the transaction").
	hlNonceAge   = 48 * time.Hour
	hlNonceAhead = 24 * time.Hour
)

// HyperliquidQueue is how long a staking withdrawal waits before it reaches spot: 7 days on
// mainnet, 5 minutes on testnet.
func HyperliquidQueue(network string) time.Duration {
	if network == "mainnet" {
		return 7 * 24 * time.Hour
	}
	return 5 * time.Minute
}

// hyperliquidL1 emulates what the worker uses of one Hyperliquid network: the exchange's
// cWithdraw (signature recovered over the EIP-712 typed data, nonce window and reuse, the
// 5-pending limit, the staking balance debited) and the info reads in the public API's shapes
// (delegatorSummary, delegatorHistory, spotClearinghouseState). Withdrawals reach spot once the
// queue has passed on the L1's clock, which the warp control moves forward; the history's times
// are the sandbox's own clock's, as the exchange's nonce window is, so that a warp shortens the
// queue without moving an action away from its nonce.
type hyperliquidL1 struct {
	network string
	now     func() time.Time

	mu    sync.Mutex
	warp  time.Duration
	users map[common.Address]*hlUser
}

type hlUser struct {
	staking, spot uint64
	pending, done []hlWithdrawal
	// deposits are the cDeposit entries of the history (the fund control's).
	deposits []hlDeposit
	// seq orders the history's events that share a millisecond.
	seq int
	// nonces maps each nonce the user's actions used to their digest.
	nonces map[uint64]common.Hash
}

type hlWithdrawal struct {
	Nonce uint64
	Wei   uint64
	// Hash names the L1 transaction that took the action (not the EIP-712 digest).
	Hash string
	// At is when the exchange took it (the history's time); CompletesAt when it reaches spot on
	// the warped clock, and FinalizedAt when it did.
	At          time.Time
	CompletesAt time.Time
	FinalizedAt time.Time
	// Seq and FinalSeq order the initiation and the finalization among the user's events.
	Seq, FinalSeq int
}

type hlDeposit struct {
	Wei  uint64
	Hash string
	At   time.Time
	Seq  int
}

func newHyperliquidL1(network string, now func() time.Time) *hyperliquidL1 {
	return &hyperliquidL1{network: network, now: now, users: map[common.Address]*hlUser{}}
}

// clock is the L1's time: the sandbox's, warped.
func (c *hyperliquidL1) clock() time.Time { return c.now().Add(c.warp) }

func (c *hyperliquidL1) user(a common.Address) *hlUser {
	u, ok := c.users[a]
	if !ok {
		u = &hlUser{nonces: map[uint64]common.Hash{}}
		c.users[a] = u
	}
	return u
}

// settle moves every withdrawal whose queue has passed to spot.
func (c *hyperliquidL1) settle(u *hlUser) {
	now := c.clock()
	kept := u.pending[:0]
	for _, w := range u.pending {
		if !now.Before(w.CompletesAt) {
			u.spot += w.Wei
			w.FinalizedAt = w.At.Add(HyperliquidQueue(c.network))
			u.seq++
			w.FinalSeq = u.seq
			u.done = append(u.done, w)
			continue
		}
		kept = append(kept, w)
	}
	u.pending = kept
}

// hlExchangeRequest is the body of POST /exchange.
type hlExchangeRequest struct {
	Action       json.RawMessage `json:"action"`
	Nonce        uint64          `json:"nonce"`
	Signature    hlSignature     `json:"signature"`
	VaultAddress *string         `json:"vaultAddress,omitempty"`
}

type hlSignature struct {
	R string `json:"r"`
	S string `json:"s"`
	V uint8  `json:"v"`
}

type hlCWithdraw struct {
	Type             string `json:"type"`
	SignatureChainID string `json:"signatureChainId"`
	HyperliquidChain string `json:"hyperliquidChain"`
	Wei              uint64 `json:"wei"`
	Nonce            uint64 `json:"nonce"`
}

// hlOK and hlErr are the exchange's answers (HTTP 200 both).
func hlOK() map[string]any {
	return map[string]any{"status": "ok", "response": map[string]string{"type": "default"}}
}

func hlErr(format string, args ...any) map[string]any {
	return map[string]any{"status": "err", "response": fmt.Sprintf(format, args...)}
}

// exchange answers POST /exchange for a cWithdraw.
func (c *hyperliquidL1) exchange(body []byte) map[string]any {
	var req hlExchangeRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || len(req.Action) == 0 {
		return hlErr("Failed to deserialize the JSON body into the target type")
	}
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(req.Action, &head)
	if head.Type != "cWithdraw" {
		return hlErr("Unsupported action type %q on this exchange", head.Type)
	}
	var a hlCWithdraw
	adec := json.NewDecoder(bytes.NewReader(req.Action))
	adec.DisallowUnknownFields()
	if err := adec.Decode(&a); err != nil {
		return hlErr("Failed to deserialize the action: %v", err)
	}
	wantChain := "Mainnet"
	if c.network == "testnet" {
		wantChain = "Testnet"
	}
	if a.HyperliquidChain != wantChain {
		return hlErr("Invalid hyperliquidChain %q on %s", a.HyperliquidChain, c.network)
	}
	if a.Nonce != req.Nonce {
		return hlErr("Action nonce %d differs from request nonce %d", a.Nonce, req.Nonce)
	}
	digest, err := hlDigest(a)
	if err != nil {
		return hlErr("Invalid signatureChainId: %v", err)
	}
	signer, err := hlRecover(digest, req.Signature)
	if err != nil {
		return hlErr("Unable to recover signer: %v", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	at := time.UnixMilli(int64(min(a.Nonce, uint64(1)<<62)))
	if at.Before(now.Add(-hlNonceAge)) || at.After(now.Add(hlNonceAhead)) {
		return hlErr("Invalid nonce: %d is outside the accepted window", a.Nonce)
	}
	u := c.user(signer)
	c.settle(u)
	if _, used := u.nonces[a.Nonce]; used {
		return hlErr("Invalid nonce: %d already used by %s", a.Nonce, strings.ToLower(signer.Hex()))
	}
	if len(u.pending) >= HyperliquidMaxPending {
		return hlErr("Too many pending withdrawals: %d of %d", len(u.pending), HyperliquidMaxPending)
	}
	if a.Wei == 0 || u.staking < a.Wei {
		return hlErr("Insufficient staking balance: %s HYPE available, %s asked", hype(u.staking), hype(a.Wei))
	}
	u.nonces[a.Nonce] = digest
	u.staking -= a.Wei
	u.seq++
	u.pending = append(u.pending, hlWithdrawal{Nonce: a.Nonce, Wei: a.Wei, Hash: hlTxHash(digest, req.Signature), At: now, Seq: u.seq,
		CompletesAt: c.clock().Add(HyperliquidQueue(c.network))})
	return hlOK()
}

// hlTxHash names the L1 transaction of a signed action: a hash of its digest and signature.
func hlTxHash(digest common.Hash, sig hlSignature) string {
	return crypto.Keccak256Hash(digest[:], []byte(sig.R), []byte(sig.S), []byte{sig.V}).Hex()
}

// hlDigest is the EIP-712 hash the exchange recovers a cWithdraw's signer from.
func hlDigest(a hlCWithdraw) (common.Hash, error) {
	id, err := hexutil.DecodeBig(a.SignatureChainID)
	if err != nil {
		return common.Hash{}, err
	}
	td := apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": {{Name: "name", Type: "string"}, {Name: "version", Type: "string"},
				{Name: "chainId", Type: "uint256"}, {Name: "verifyingContract", Type: "address"}},
			"HyperliquidTransaction:CWithdraw": {{Name: "hyperliquidChain", Type: "string"}, {Name: "wei", Type: "uint64"}, {Name: "nonce", Type: "uint64"}},
		},
		PrimaryType: "HyperliquidTransaction:CWithdraw",
		Domain: apitypes.TypedDataDomain{Name: "HyperliquidSignTransaction", Version: "1", ChainId: (*math.HexOrDecimal256)(id),
			VerifyingContract: "0x0000000000000000000000000000000000000000"},
		Message: apitypes.TypedDataMessage{"hyperliquidChain": a.HyperliquidChain,
			"wei": new(big.Int).SetUint64(a.Wei), "nonce": new(big.Int).SetUint64(a.Nonce)},
	}
	h, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		return common.Hash{}, err
	}
	return common.BytesToHash(h), nil
}

func hlRecover(digest common.Hash, sig hlSignature) (common.Address, error) {
	r, err1 := hexutil.Decode(sig.R)
	s, err2 := hexutil.Decode(sig.S)
	if err1 != nil || err2 != nil || len(r) > 32 || len(s) > 32 || (sig.V != 27 && sig.V != 28) {
		return common.Address{}, fmt.Errorf("malformed signature")
	}
	raw := make([]byte, 65)
	copy(raw[32-len(r):32], r)
	copy(raw[64-len(s):64], s)
	raw[64] = sig.V - 27
	pub, err := crypto.SigToPub(digest[:], raw)
	if err != nil {
		return common.Address{}, err
	}
	return crypto.PubkeyToAddress(*pub), nil
}

// hype renders wei (10^-8 HYPE) as a decimal HYPE amount.
func hype(wei uint64) string {
	s := fmt.Sprintf("%d.%08d", wei/100_000_000, wei%100_000_000)
	s = strings.TrimRight(s, "0")
	if strings.HasSuffix(s, ".") {
		s += "0"
	}
	return s
}

// HyperliquidPending is one pending staking withdrawal, as the account control shows it.
type HyperliquidPending struct {
	Nonce       uint64 `json:"nonce"`
	Amount      string `json:"amount"`
	Hash        string `json:"hash"`
	Time        int64  `json:"time"`
	CompletesAt int64  `json:"completesAt"`
}

// hlZeroHash is the hash of history entries no user transaction made (a withdrawal finalized).
const hlZeroHash = "0x0000000000000000000000000000000000000000000000000000000000000000"

// info answers POST /info for the types the worker reads, in the public info API's shapes.
func (c *hyperliquidL1) info(body []byte) (any, int) {
	var req struct {
		Type string `json:"type"`
		User string `json:"user"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return "Failed to deserialize the JSON body into the target type", http.StatusUnprocessableEntity
	}
	if !isEVMAddress(req.User) {
		return "Failed to deserialize the JSON body into the target type", http.StatusUnprocessableEntity
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.user(common.HexToAddress(req.User))
	c.settle(u)
	var pendingWei uint64
	for _, w := range u.pending {
		pendingWei += w.Wei
	}
	switch req.Type {
	case "delegatorSummary":
		return map[string]any{"delegated": "0.0", "undelegated": hype(u.staking), "totalPendingWithdrawal": hype(pendingWei),
			"nPendingWithdrawals": len(u.pending)}, http.StatusOK
	case "spotClearinghouseState":
		return map[string]any{"balances": []map[string]any{{"coin": "HYPE", "token": 150, "hold": "0.0", "total": hype(u.spot), "entryNtl": "0.0"}}}, http.StatusOK
	case "delegatorHistory":
		type entry struct {
			Time  int64          `json:"time"`
			Hash  string         `json:"hash"`
			Delta map[string]any `json:"delta"`
			seq   int
		}
		withdrawal := func(w hlWithdrawal, phase string) map[string]any {
			return map[string]any{"withdrawal": map[string]string{"amount": hype(w.Wei), "phase": phase}}
		}
		out := []entry{}
		for _, d := range u.deposits {
			out = append(out, entry{d.At.UnixMilli(), d.Hash, map[string]any{"cDeposit": map[string]string{"amount": hype(d.Wei)}}, d.Seq})
		}
		for _, w := range u.done {
			out = append(out, entry{w.At.UnixMilli(), w.Hash, withdrawal(w, "initiated"), w.Seq}, entry{w.FinalizedAt.UnixMilli(), hlZeroHash, withdrawal(w, "finalized"), w.FinalSeq})
		}
		for _, w := range u.pending {
			out = append(out, entry{w.At.UnixMilli(), w.Hash, withdrawal(w, "initiated"), w.Seq})
		}
		// Newest first.
		sort.Slice(out, func(i, j int) bool {
			if out[i].Time != out[j].Time {
				return out[i].Time > out[j].Time
			}
			return out[i].seq > out[j].seq
		})
		return out, http.StatusOK
	}
	return "Failed to deserialize the JSON body into the target type", http.StatusUnprocessableEntity
}

// fund adds wei to a user's undelegated staking balance.
func (c *hyperliquidL1) fund(user common.Address, wei uint64) (staking uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.user(user)
	u.staking += wei
	u.seq++
	u.deposits = append(u.deposits, hlDeposit{Wei: wei, At: c.now(), Seq: u.seq,
		Hash: crypto.Keccak256Hash(user[:], []byte(fmt.Sprintf("cDeposit %d %d", len(u.deposits), wei))).Hex()})
	return u.staking
}

// advance moves the L1's clock forward by d.
func (c *hyperliquidL1) advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.warp += d
	return c.clock()
}

// HyperliquidAccount is a user's balances on the emulated L1, in wei (10^-8 HYPE).
type HyperliquidAccount struct {
	Staking uint64               `json:"staking"`
	Spot    uint64               `json:"spot"`
	Pending []HyperliquidPending `json:"pending"`
	// Submitted counts the cWithdraw actions the exchange accepted.
	Submitted int `json:"submitted"`
}

func (c *hyperliquidL1) account(user common.Address) HyperliquidAccount {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.user(user)
	c.settle(u)
	out := HyperliquidAccount{Staking: u.staking, Spot: u.spot, Pending: []HyperliquidPending{}, Submitted: len(u.nonces)}
	for _, w := range u.pending {
		out.Pending = append(out.Pending, HyperliquidPending{Nonce: w.Nonce, Amount: hype(w.Wei), Hash: w.Hash, Time: w.At.UnixMilli(), CompletesAt: w.CompletesAt.UnixMilli()})
	}
	return out
}
