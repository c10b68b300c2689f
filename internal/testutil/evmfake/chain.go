// Package evmfake is the one scripted EVM network the tests share: every read and send the EVM
// activities make through chain/evm's Network (Polygon's activities.Chain and EigenLayer's, a subset),
// each answered from a field the test sets. It is imported by tests only; no product package
// imports it.
package evmfake

import (
	"context"
	"errors"
	"math/big"
	"sync"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	evmchain "github.com/stakeflow/stakeflow/chain/evm"
)

// PollLimit bounds the nonce reads of one test: an activity that polls a chain which never
// answers what it waits for fails the test instead of hanging it.
const PollLimit = 5000

// Chain is a scripted EVM network. Each field answers one read; a nil field answers zero values
// (an absent transaction, a receipt not final, no nonce consumed, no logs), except Balance, which
// holds plenty. Set the fields before the code under test runs, or between its calls.
type Chain struct {
	mu sync.Mutex

	// Head is the latest block's number.
	Head uint64
	// NonceState answers Nonces.
	NonceState func() *evmchain.Nonces
	// FeeQuote answers Fees.
	FeeQuote *evmchain.Fees
	// Gas and GasErr answer EstimateGas; Estimated records the messages it was given.
	Gas       uint64
	GasErr    error
	Estimated []ethereum.CallMsg
	// Txs answers Transaction by hash.
	Txs map[common.Hash]func() *evmchain.TxLookup
	// Receipts answers ReceiptFinal by hash; a hash without one has no final receipt.
	Receipts map[common.Hash]func() (*evmchain.Receipt, error)
	// Consumed answers NonceConsumedBy for the hash asked.
	Consumed func(hash common.Hash) *evmchain.NonceStatus
	// Calls answers Call by "0xContract.method" first, then by method; CallErrs fails a method.
	Calls    map[string][]any
	CallErrs map[string]error
	// Funds is every address's ether; nil holds plenty.
	Funds *big.Int
	// Events answers Logs, whatever the query.
	Events []types.Log
	// SendErr answers SendRawTransaction (nil: accepted); the bytes sent are in RawSends.
	SendErr error

	nonceReads int
	rawSent    []string
}

// Balance answers Funds.
func (f *Chain) Balance(context.Context, common.Address) (*big.Int, error) {
	if f.Funds == nil {
		return new(big.Int).Exp(big.NewInt(10), big.NewInt(30), nil), nil
	}
	return f.Funds, nil
}

// LatestHeader answers a header at Head.
func (f *Chain) LatestHeader(context.Context) (*types.Header, error) {
	return &types.Header{Number: new(big.Int).SetUint64(f.Head)}, nil
}

// Nonces answers NonceState; past PollLimit reads it fails.
func (f *Chain) Nonces(context.Context, common.Address) (*evmchain.Nonces, error) {
	f.mu.Lock()
	f.nonceReads++
	over := f.nonceReads > PollLimit
	f.mu.Unlock()
	if over {
		return nil, errors.New("evmfake: more nonce reads than any test needs: the activity does not conclude")
	}
	if f.NonceState == nil {
		return &evmchain.Nonces{}, nil
	}
	return f.NonceState(), nil
}

// Fees answers FeeQuote.
func (f *Chain) Fees(context.Context) (*evmchain.Fees, error) { return f.FeeQuote, nil }

// EstimateGas records msg and answers Gas and GasErr.
func (f *Chain) EstimateGas(_ context.Context, msg ethereum.CallMsg) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Estimated = append(f.Estimated, msg)
	return f.Gas, f.GasErr
}

// Transaction answers Txs; a hash not there is absent.
func (f *Chain) Transaction(_ context.Context, h common.Hash) (*evmchain.TxLookup, error) {
	if l, ok := f.Txs[h]; ok {
		return l(), nil
	}
	return &evmchain.TxLookup{State: evmchain.TxAbsent}, nil
}

// ReceiptFinal answers Receipts; a hash not there has no receipt yet.
func (f *Chain) ReceiptFinal(_ context.Context, h common.Hash) (*evmchain.Receipt, error) {
	if r, ok := f.Receipts[h]; ok {
		return r()
	}
	return nil, &evmchain.NotFinalError{Hash: h, Reason: evmchain.NotFinalNoReceipt}
}

// NonceConsumedBy answers Consumed.
func (f *Chain) NonceConsumedBy(_ context.Context, _ common.Address, _ uint64, h common.Hash) (*evmchain.NonceStatus, error) {
	if f.Consumed == nil {
		return &evmchain.NonceStatus{}, nil
	}
	return f.Consumed(h), nil
}

// Call answers CallErrs, then Calls by contract and method, then by method; a method with no
// answer is an error naming it.
func (f *Chain) Call(_ context.Context, _ *big.Int, to common.Address, _ *abi.ABI, method string, _ ...any) ([]any, error) {
	if err := f.CallErrs[method]; err != nil {
		return nil, err
	}
	v, ok := f.Calls[to.Hex()+"."+method]
	if !ok {
		v, ok = f.Calls[method]
	}
	if !ok {
		return nil, errors.New("evmfake: no answer for " + method)
	}
	return v, nil
}

// Logs answers Events.
func (f *Chain) Logs(context.Context, ethereum.FilterQuery) ([]types.Log, error) {
	return f.Events, nil
}

// SendRawTransaction records the bytes sent and answers SendErr.
func (f *Chain) SendRawTransaction(_ context.Context, raw []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rawSent = append(f.rawSent, hexutil.Encode(raw))
	return f.SendErr
}

// RawSends are the bytes SendRawTransaction was given, 0x hex, in order.
func (f *Chain) RawSends() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.rawSent...)
}
