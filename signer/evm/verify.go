package evm

import (
	"bytes"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rlp"
)

// The gate: verification by exact expectation.
//
// From the intent and the few values a builder may choose (gas limit, maxFeePerGas,
// maxPriorityFeePerGas and, for delegate and unstake, the shares bound), each checked against
// the intent and the policy, the verifier builds the transaction it expects with go-ethereum's
// types and abi packages, and accepts the received one only if it is that transaction, byte for
// byte, in the form it arrived in. Named checks run first so that a refusal says what differs in
// the operator's terms; the gate then catches anything they did not name.

// choices are the values a builder chose, read from the transaction and checked.
type choices struct {
	gas         uint64
	feeCap, tip *big.Int
	shares      *big.Int // delegate: minSharesToMint; unstake: maximumSharesToBurn; else nil
}

// label names an address in the operator's terms.
func (s *Signer) label(a common.Address) string {
	switch a {
	case s.policy.POLToken:
		return "POL token"
	case s.policy.StakeManager:
		return "StakeManager"
	case common.Address{}:
		return "the zero address"
	}
	if id, ok := s.shares[a]; ok {
		return fmt.Sprintf("validator share of validator %d", id)
	}
	return "not on the allow-list"
}

func (s *Signer) labelled(a common.Address) string {
	return fmt.Sprintf("%s (%s)", a.Hex(), s.label(a))
}

func (s *Signer) allowList() string {
	if len(s.policy.ValidatorShares) == 0 {
		return "(none configured)"
	}
	parts := make([]string, len(s.policy.ValidatorShares))
	for i, v := range s.policy.ValidatorShares {
		parts[i] = fmt.Sprintf("%s (validator %d)", v.Address.Hex(), v.ValidatorID)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// target is the contract the intent's call goes to.
func (s *Signer) target(in *Intent) common.Address {
	if in.Operation == OpApprove {
		return s.policy.POLToken
	}
	return in.ValidatorShare
}

func wei(v *big.Int) string {
	if v == nil {
		return "none"
	}
	if v.Cmp(math.MaxBig256) == 0 {
		return "2^256-1 (unlimited)"
	}
	return v.String() + " wei"
}

func gwei(v *big.Int) string {
	f, _ := new(big.Rat).SetFrac(v, big.NewInt(params.GWei)).Float64()
	return fmt.Sprintf("%s wei (%g gwei)", v, f)
}

// verify checks the decoded transaction against the intent (already checked by checkIntent) and
// the policy and returns the expected transaction, which is the received one.
func (s *Signer) verify(in *Intent, d *decoded) (*Verified, error) {
	tx := d.tx
	if want := new(big.Int).SetUint64(s.policy.ChainID); tx.ChainId().Cmp(want) != 0 {
		return nil, mismatch("chainId", fmt.Sprintf("%s (the policy's chain)", want), tx.ChainId().String())
	}
	target := s.target(in)
	if tx.To() == nil {
		return nil, mismatch("to", s.labelled(target), "none (contract creation)")
	}
	if to := *tx.To(); to != target {
		return nil, mismatch("to", s.labelled(target), s.labelled(to))
	}
	if tx.Value().Sign() != 0 {
		return nil, mismatch("value", "0 wei", wei(tx.Value()))
	}
	if n := len(tx.AccessList()); n != 0 {
		return nil, mismatch("access list", "empty", fmt.Sprintf("%d entries", n))
	}
	if tx.Nonce() != in.Nonce {
		return nil, mismatch("nonce", fmt.Sprintf("%d (the lease's)", in.Nonce), fmt.Sprint(tx.Nonce()))
	}
	shares, err := s.checkCall(in, tx.Data())
	if err != nil {
		return nil, err
	}
	c := &choices{gas: tx.Gas(), feeCap: tx.GasFeeCap(), tip: tx.GasTipCap(), shares: shares}
	maxFee, err := s.checkFees(in, c)
	if err != nil {
		return nil, err
	}
	want, err := s.expect(in, c)
	if err != nil {
		return nil, err
	}
	if err := s.gate(want, d); err != nil {
		return nil, err
	}
	v := &Verified{
		Operation: in.Operation, Sender: in.Staker, To: target, Nonce: in.Nonce,
		GasLimit: c.gas, MaxFeePerGas: c.feeCap, MaxPriorityFeePerGas: c.tip, MaxFee: maxFee,
		tx: want,
	}
	if in.Operation != OpApprove {
		v.ValidatorID = s.shares[in.ValidatorShare]
	}
	if shares != nil {
		v.SharesBound = new(big.Int).Set(shares)
	}
	return v, nil
}

// checkCall checks the calldata: the operation's selector, each argument decoded with
// go-ethereum's abi package and compared with the intent, and nothing after the arguments. It
// returns the shares bound of a delegate or unstake.
func (s *Signer) checkCall(in *Intent, data []byte) (*big.Int, error) {
	method := stakingABI.Methods[in.Operation.Method()]
	wantSel := fmt.Sprintf("%s (%s)", method.Name, hexutil.Encode(method.ID))
	if len(data) < 4 {
		return nil, mismatch("selector", wantSel, fmt.Sprintf("%d bytes of calldata", len(data)))
	}
	if !bytes.Equal(data[:4], method.ID) {
		got := "unknown method"
		if m, err := stakingABI.MethodById(data[:4]); err == nil {
			got = m.Name
		}
		return nil, mismatch("selector", wantSel, fmt.Sprintf("%s (%s)", got, hexutil.Encode(data[:4])))
	}
	args, err := method.Inputs.Unpack(data[4:])
	if err != nil {
		return nil, mismatch("arguments of "+method.Name, fmt.Sprintf("%d ABI-encoded arguments (%s)", len(method.Inputs), method.Sig),
			fmt.Sprintf("%d bytes that do not decode: %v", len(data)-4, err))
	}
	var shares *big.Int
	switch in.Operation {
	case OpApprove:
		if spender := args[0].(common.Address); spender != s.policy.StakeManager {
			return nil, mismatch("approve spender", s.labelled(s.policy.StakeManager), s.labelled(spender))
		}
		if amount := args[1].(*big.Int); amount.Cmp(in.Amount) != 0 {
			return nil, mismatch("approve amount", wei(in.Amount)+" (exactly the request)", wei(amount))
		}
	case OpDelegate:
		if amount := args[0].(*big.Int); amount.Cmp(in.Amount) != 0 {
			return nil, mismatch("delegate amount", wei(in.Amount)+" (exactly the request)", wei(amount))
		}
		shares = args[1].(*big.Int)
		if err := s.checkShares("minSharesToMint", in, shares, in.MinSharesToMint); err != nil {
			return nil, err
		}
	case OpUnstake:
		if amount := args[0].(*big.Int); amount.Cmp(in.Amount) != 0 {
			return nil, mismatch("unstake claimAmount", wei(in.Amount)+" (exactly the request)", wei(amount))
		}
		shares = args[1].(*big.Int)
		if err := s.checkShares("maximumSharesToBurn", in, shares, in.MaximumSharesToBurn); err != nil {
			return nil, err
		}
	case OpClaim:
		if nonce := args[0].(*big.Int); nonce.Cmp(in.UnbondNonce) != 0 {
			return nil, mismatch("unbondNonce", in.UnbondNonce.String(), nonce.String())
		}
	}
	packed, err := method.Inputs.Pack(args...)
	if err != nil {
		return nil, mismatch("arguments of "+method.Name, "re-encodable", err.Error())
	}
	if extra := len(data) - 4 - len(packed); extra > 0 {
		return nil, mismatch("calldata", fmt.Sprintf("%d bytes (selector and arguments of %s)", 4+len(packed), method.Sig),
			fmt.Sprintf("%d bytes (%d extra after the arguments)", len(data), extra))
	}
	return shares, nil
}

// checkShares checks a shares bound against the slippage the policy allows around the intent's
// ExpectedShares, and against the intent's exact value when it names one.
func (s *Signer) checkShares(name string, in *Intent, got, exact *big.Int) error {
	q, bps := in.ExpectedShares, big.NewInt(int64(s.policy.SlippageBps))
	slip := new(big.Int).Mul(q, bps)
	slip.Div(slip, big.NewInt(maxBps)) // rounded down: the allowed range never exceeds the slippage
	lo, hi := new(big.Int).Set(q), new(big.Int).Set(q)
	if in.Operation == OpDelegate {
		lo.Sub(lo, slip)
	} else {
		hi.Add(hi, slip)
	}
	if got.Cmp(lo) < 0 || got.Cmp(hi) > 0 {
		return mismatch(name, fmt.Sprintf("from %s to %s (expected shares %s, slippage %d bps)", lo, hi, q, s.policy.SlippageBps), got.String())
	}
	if exact != nil && got.Cmp(exact) != 0 {
		return mismatch(name, exact.String()+" (the intent's)", got.String())
	}
	return nil
}

// checkFees checks the gas limit and fees against the policy and the intent, and returns the
// most the transaction can pay, maxFeePerGas × gas.
func (s *Signer) checkFees(in *Intent, c *choices) (*big.Int, error) {
	p := s.policy
	if c.gas < params.TxGas {
		return nil, mismatch("gas limit", fmt.Sprintf("at least %d (the intrinsic gas of a transaction)", params.TxGas), fmt.Sprint(c.gas))
	}
	if c.gas > p.MaxGasLimit {
		return nil, mismatch("gas limit", fmt.Sprintf("at most %d (the policy's cap)", p.MaxGasLimit), fmt.Sprint(c.gas))
	}
	if in.GasLimit != 0 && c.gas != in.GasLimit {
		return nil, mismatch("gas limit", fmt.Sprintf("%d (the intent's)", in.GasLimit), fmt.Sprint(c.gas))
	}
	if c.feeCap.Cmp(p.MaxFeePerGas) > 0 {
		return nil, mismatch("maxFeePerGas", "at most "+gwei(p.MaxFeePerGas)+" (the policy's cap)", gwei(c.feeCap))
	}
	if in.MaxFeePerGas != nil && c.feeCap.Cmp(in.MaxFeePerGas) != 0 {
		return nil, mismatch("maxFeePerGas", gwei(in.MaxFeePerGas)+" (the intent's)", gwei(c.feeCap))
	}
	if c.tip.Cmp(c.feeCap) > 0 {
		return nil, mismatch("maxPriorityFeePerGas", "at most maxFeePerGas "+gwei(c.feeCap), gwei(c.tip))
	}
	if in.MaxPriorityFeePerGas != nil && c.tip.Cmp(in.MaxPriorityFeePerGas) != 0 {
		return nil, mismatch("maxPriorityFeePerGas", gwei(in.MaxPriorityFeePerGas)+" (the intent's)", gwei(c.tip))
	}
	total := new(big.Int).Mul(c.feeCap, new(big.Int).SetUint64(c.gas))
	if total.Cmp(p.MaxTotalFee) > 0 {
		return nil, mismatch("max total fee", fmt.Sprintf("at most %s (the policy's cap)", wei(p.MaxTotalFee)),
			fmt.Sprintf("%s (maxFeePerGas %s × gas %d)", wei(total), gwei(c.feeCap), c.gas))
	}
	return total, nil
}

// expect builds the transaction the intent and the checked choices call for.
func (s *Signer) expect(in *Intent, c *choices) (*types.Transaction, error) {
	var args []any
	switch in.Operation {
	case OpApprove:
		args = []any{s.policy.StakeManager, in.Amount}
	case OpDelegate, OpUnstake:
		args = []any{in.Amount, c.shares}
	case OpClaim:
		args = []any{in.UnbondNonce}
	}
	data, err := stakingABI.Pack(in.Operation.Method(), args...)
	if err != nil {
		return nil, mismatch("expected transaction", "buildable from the intent", fmt.Sprintf("calldata: %v", err))
	}
	to := s.target(in)
	return types.NewTx(&types.DynamicFeeTx{
		ChainID:    new(big.Int).SetUint64(s.policy.ChainID),
		Nonce:      in.Nonce,
		GasTipCap:  new(big.Int).Set(c.tip),
		GasFeeCap:  new(big.Int).Set(c.feeCap),
		Gas:        c.gas,
		To:         &to,
		Value:      new(big.Int),
		Data:       data,
		AccessList: types.AccessList{},
	}), nil
}

// gate accepts the received transaction only if its bytes are the expected transaction's in the
// same form. Otherwise it names the first RLP field that differs, in the order of the encoding.
func (s *Signer) gate(want *types.Transaction, d *decoded) error {
	wantRaw, err := encodeIn(want, d.form)
	if err != nil {
		return mismatch("expected transaction", "encodable", err.Error())
	}
	if bytes.Equal(wantRaw, d.raw) {
		return nil
	}
	w, g := payloadOf(want), payloadOf(d.tx)
	addr := func(a *common.Address) string {
		if a == nil {
			return "none (contract creation)"
		}
		return s.labelled(*a)
	}
	fields := []struct {
		name        string
		want, got   any
		wantS, gotS string
	}{
		{"chainId", w.ChainID, g.ChainID, w.ChainID.String(), g.ChainID.String()},
		{"nonce", w.Nonce, g.Nonce, fmt.Sprint(w.Nonce), fmt.Sprint(g.Nonce)},
		{"maxPriorityFeePerGas", w.GasTipCap, g.GasTipCap, gwei(w.GasTipCap), gwei(g.GasTipCap)},
		{"maxFeePerGas", w.GasFeeCap, g.GasFeeCap, gwei(w.GasFeeCap), gwei(g.GasFeeCap)},
		{"gas limit", w.Gas, g.Gas, fmt.Sprint(w.Gas), fmt.Sprint(g.Gas)},
		{"to", w.To, g.To, addr(w.To), addr(g.To)},
		{"value", w.Value, g.Value, wei(w.Value), wei(g.Value)},
		{"data", w.Data, g.Data, hexutil.Encode(w.Data), hexutil.Encode(g.Data)},
		{"access list", w.AccessList, g.AccessList, fmt.Sprint(len(w.AccessList)) + " entries", fmt.Sprint(len(g.AccessList)) + " entries"},
	}
	for _, f := range fields {
		wb, werr := rlp.EncodeToBytes(f.want)
		gb, gerr := rlp.EncodeToBytes(f.got)
		if werr != nil || gerr != nil || !bytes.Equal(wb, gb) {
			return mismatch(f.name, f.wantS, f.gotS)
		}
	}
	return mismatch("encoding", fmt.Sprintf("%s as the canonical %s", hexutil.Encode(wantRaw), d.form), hexutil.Encode(d.raw))
}
