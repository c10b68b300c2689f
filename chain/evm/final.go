package evmchain

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
)

// Receipt is a transaction's receipt at finalized depth.
type Receipt struct {
	// TxHash is the transaction's hash.
	TxHash common.Hash
	// Status is 1 for success, 0 for a reverted transaction.
	Status uint64
	// BlockNumber and BlockHash name the finalized, canonical block that holds it.
	BlockNumber uint64
	BlockHash   common.Hash
	// Index is the transaction's position in the block.
	Index uint
	// GasUsed is the gas the transaction used.
	GasUsed uint64
	// EffectiveGasPrice is the price per gas paid, in wei.
	EffectiveGasPrice *big.Int
	// Logs are the events the transaction emitted (none when it reverted).
	Logs []*types.Log
	// Revert is why a status-0 transaction reverted, as a replay of its call found; nil on
	// success.
	Revert *RevertError
}

// Succeeded reports whether the transaction succeeded.
func (r *Receipt) Succeeded() bool { return r.Status == types.ReceiptStatusSuccessful }

// Reasons a receipt is not final, as NotFinalError.Reason says.
const (
	NotFinalNoReceipt = "the node has no receipt: the transaction is absent or pending"
	NotFinalIndexing  = "the node is still indexing transactions and cannot tell yet"
	NotFinalAbove     = "its block is above the finalized block"
	NotFinalReorged   = "its block is no longer canonical at its height (reorged out)"
)

// NotFinalError says why a transaction has no receipt at finalized depth. It wraps
// ErrNotFinal. Callers keep confirming the same transaction (or re-send the same bytes): it is
// an answer, not a failure of the RPC.
type NotFinalError struct {
	// Hash is the transaction asked about.
	Hash common.Hash
	// Reason is one of the NotFinal* constants.
	Reason string
	// BlockNumber is the receipt's block height, when the node had a receipt.
	BlockNumber uint64
	// FinalizedBlock is the finalized height the receipt was judged against (0 when not read).
	FinalizedBlock uint64
}

// Error names the transaction, the reason and the heights.
func (e *NotFinalError) Error() string {
	switch e.Reason {
	case NotFinalAbove, NotFinalReorged:
		return fmt.Sprintf("transaction %s: %v: %s (receipt block %d, finalized block %d)", e.Hash.Hex(), ErrNotFinal, e.Reason, e.BlockNumber, e.FinalizedBlock)
	}
	return fmt.Sprintf("transaction %s: %v: %s", e.Hash.Hex(), ErrNotFinal, e.Reason)
}

// Unwrap returns ErrNotFinal.
func (e *NotFinalError) Unwrap() error { return ErrNotFinal }

// RevertError is a call or transaction that reverted.
type RevertError struct {
	// Reason is the revert data decoded by [DecodeRevert]: the Error(string) message, "panic 0x11:
	// arithmetic overflow or underflow" for Panic(uint256), ErrorName(arg=value, ...) for a custom
	// error of the contracts stakeflow calls; empty when the data is none of those, or there is
	// none.
	Reason string
	// Data is the raw revert data.
	Data []byte
	// Replayed is false when the replay of a reverted transaction did not revert: the state it
	// reverted on is gone, and Reason and Data are empty.
	Replayed bool
	// OutOfGas is set for a failed transaction that used its whole gas limit (OutOfGas gas): it
	// ran out of gas, or met an invalid instruction, which also takes all the gas (a revert
	// returns the gas left). Its call is not replayed.
	OutOfGas uint64
	// Unreplayed is the node's answer to a replay of the call that neither reverted nor
	// succeeded: its state at the block is gone ("historical state ... is not available"), or
	// the call halted otherwise. The reason is then unknown; the receipt's status still stands.
	Unreplayed string
}

// Error describes the revert.
func (e *RevertError) Error() string {
	switch {
	case e.OutOfGas > 0:
		return fmt.Sprintf("execution ran out of gas: the transaction used its whole gas limit of %d (or met an invalid instruction)", e.OutOfGas)
	case e.Unreplayed != "":
		return "execution reverted (reason unknown: a replay of the call was answered " + strconv.Quote(e.Unreplayed) + ")"
	case !e.Replayed:
		return "execution reverted (a replay of the call did not revert: reason unknown)"
	case e.Reason != "":
		return "execution reverted: " + e.Reason
	case len(e.Data) > 0:
		return "execution reverted with data 0x" + hex.EncodeToString(e.Data)
	}
	return "execution reverted without data"
}

// Summary says the revert in one line, cause first: the decoded reason, then "(execution
// reverted)"; without a reason, what Error says.
func (e *RevertError) Summary() string {
	if e.Replayed && e.Reason != "" {
		return e.Reason + " (execution reverted)"
	}
	return e.Error()
}

// newRevert decodes revert data with [DecodeRevert].
func newRevert(data []byte) *RevertError {
	r := &RevertError{Data: data, Replayed: true}
	r.Reason, _ = DecodeRevert(data)
	return r
}

// asRevert turns an RPC "execution reverted" answer into a *RevertError; other errors pass.
func asRevert(err error) error {
	var re rpc.Error
	if !errors.As(err, &re) || (re.ErrorCode() != codeExecutionReverted && !strings.HasPrefix(re.Error(), "execution reverted")) {
		return err
	}
	var data []byte
	var de rpc.DataError
	if errors.As(err, &de) {
		if s, ok := de.ErrorData().(string); ok {
			if b, derr := hexutil.Decode(s); derr == nil {
				data = b
			}
		}
	}
	return newRevert(data)
}

// receipt reads hash's receipt; nil when the node has none. indexing is true when the node
// could not tell because it was still indexing after indexingPatience.
func (c *Client) receipt(ctx context.Context, hash common.Hash) (r *types.Receipt, indexing bool, err error) {
	err = patientLookup(ctx, func() (err error) {
		r, err = c.eth.TransactionReceipt(ctx, hash)
		return err
	})
	switch {
	case errors.Is(err, ethereum.NotFound):
		return nil, false, nil
	case isIndexing(err):
		return nil, true, nil
	case err != nil:
		return nil, false, c.wrap("eth_getTransactionReceipt", err)
	}
	return r, false, nil
}

// ReceiptFinal returns hash's receipt only when it is final: its block is at or below the
// finalized block and is still the canonical block at its height. Otherwise it returns a
// [*NotFinalError] (errors.Is ErrNotFinal) saying why: no receipt, node still indexing, block
// above finality, or block reorged out (which callers treat as "not found": the same signed
// bytes can land again). For a reverted transaction (status 0), Receipt.Revert holds the
// reason found by replaying the call with eth_call at the receipt's block.
func (c *Client) ReceiptFinal(ctx context.Context, hash common.Hash) (*Receipt, error) {
	r, indexing, err := c.receipt(ctx, hash)
	if err != nil {
		return nil, err
	}
	if indexing {
		return nil, &NotFinalError{Hash: hash, Reason: NotFinalIndexing}
	}
	if r == nil {
		return nil, &NotFinalError{Hash: hash, Reason: NotFinalNoReceipt}
	}
	fin, err := c.FinalizedHeader(ctx)
	if err != nil {
		return nil, err
	}
	height, finHeight := r.BlockNumber.Uint64(), fin.Number.Uint64()
	if height > finHeight {
		return nil, &NotFinalError{Hash: hash, Reason: NotFinalAbove, BlockNumber: height, FinalizedBlock: finHeight}
	}
	canon, err := c.canonicalHash(ctx, height)
	if err != nil {
		return nil, err
	}
	if canon != r.BlockHash {
		return nil, &NotFinalError{Hash: hash, Reason: NotFinalReorged, BlockNumber: height, FinalizedBlock: finHeight}
	}
	out := &Receipt{
		TxHash: hash, Status: r.Status, BlockNumber: height, BlockHash: r.BlockHash, Index: r.TransactionIndex,
		GasUsed: r.GasUsed, EffectiveGasPrice: r.EffectiveGasPrice, Logs: r.Logs,
	}
	if r.Status != types.ReceiptStatusSuccessful {
		if out.Revert, err = c.replay(ctx, hash, r.BlockNumber, r.GasUsed); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// replay says why a failed transaction failed: out of gas when it used its whole gas limit (gasUsed),
// else what its call, run again with eth_call at block, reverts with. The state at the end of the
// block can differ from the state the transaction ran on; a replay that does not revert yields a
// RevertError with Replayed false, one the node answers with another error (its state at block
// pruned, say) a RevertError naming that answer: the receipt is the chain's final word, and a
// reason the node can no longer give must not hold it back. Only a replay the node did not answer
// (the connection) is an error, to ask again.
func (c *Client) replay(ctx context.Context, hash common.Hash, block *big.Int, gasUsed uint64) (*RevertError, error) {
	l, err := c.Transaction(ctx, hash)
	if err != nil {
		return nil, err
	}
	if l.Tx == nil {
		return nil, c.wrap("eth_getTransactionByHash", fmt.Errorf("transaction %s has a receipt but the node does not return it", hash.Hex()))
	}
	if gasUsed >= l.Tx.Gas() {
		return &RevertError{OutOfGas: l.Tx.Gas()}, nil
	}
	msg := ethereum.CallMsg{From: l.From, To: l.Tx.To(), Gas: l.Tx.Gas(), Value: l.Tx.Value(), Data: l.Tx.Data(), AccessList: l.Tx.AccessList()}
	_, err = c.eth.CallContract(ctx, msg, block)
	if err == nil {
		return &RevertError{}, nil
	}
	var rev *RevertError
	if errors.As(asRevert(err), &rev) {
		return rev, nil
	}
	var answered rpc.Error
	if errors.As(err, &answered) {
		return &RevertError{Unreplayed: answered.Error()}, nil
	}
	return nil, c.wrap("eth_call", err)
}

// NonceUse says what happened to an account's nonce at finalized depth.
type NonceUse int

// Nonce uses.
const (
	// NonceNotConsumed: at the finalized block the account has not used the nonce yet.
	NonceNotConsumed NonceUse = iota
	// NonceConsumedByTx: the nonce is used, finally, by the transaction asked about.
	NonceConsumedByTx
	// NonceConsumedByOther: the nonce is used, finally, by another transaction: the one asked
	// about can never land.
	NonceConsumedByOther
)

// String names the use.
func (u NonceUse) String() string {
	switch u {
	case NonceNotConsumed:
		return "not consumed"
	case NonceConsumedByTx:
		return "consumed by this transaction"
	case NonceConsumedByOther:
		return "consumed by another transaction"
	}
	return fmt.Sprintf("NonceUse(%d)", int(u))
}

// NonceStatus is the answer of [Client.NonceConsumedBy].
type NonceStatus struct {
	// Use says whether and by what the nonce is consumed.
	Use NonceUse
	// FinalizedBlock is the finalized height the answer holds at.
	FinalizedBlock uint64
	// FinalizedNonce is the account's nonce at FinalizedBlock.
	FinalizedNonce uint64
	// Receipt is the transaction's final receipt when Use is NonceConsumedByTx.
	Receipt *Receipt
	// Other is the transaction that consumed the nonce when Use is NonceConsumedByOther and it
	// could be found (the node must still hold the state of the block it landed in); zero
	// otherwise.
	Other common.Hash
}

// NonceConsumedBy judges, at finalized depth, whether addr's nonce is consumed and whether by
// the transaction hash: the proof that a transaction built on that nonce can or cannot still
// land. A hash the node knows as another sender's or another nonce's is refused with
// ErrWrongTransaction. While the node is still indexing transactions it cannot tell, and the
// answer is a transient [*RPCError].
func (c *Client) NonceConsumedBy(ctx context.Context, addr common.Address, nonce uint64, hash common.Hash) (*NonceStatus, error) {
	l, err := c.Transaction(ctx, hash)
	if err != nil {
		return nil, err
	}
	if l.Tx != nil && (l.From != addr || l.Tx.Nonce() != nonce) {
		return nil, fmt.Errorf("%w: %s is nonce %d of %s, not nonce %d of %s", ErrWrongTransaction, hash.Hex(), l.Tx.Nonce(), l.From.Hex(), nonce, addr.Hex())
	}
	fin, err := c.FinalizedHeader(ctx)
	if err != nil {
		return nil, err
	}
	st := &NonceStatus{FinalizedBlock: fin.Number.Uint64()}
	if st.FinalizedNonce, err = c.eth.NonceAtHash(ctx, addr, fin.Hash()); err != nil {
		return nil, c.wrap("eth_getTransactionCount(finalized)", err)
	}
	if st.FinalizedNonce <= nonce {
		st.Use = NonceNotConsumed
		return st, nil
	}
	r, err := c.ReceiptFinal(ctx, hash)
	var nf *NotFinalError
	switch {
	case err == nil:
		if l.Tx == nil {
			return nil, c.wrap("eth_getTransactionByHash", fmt.Errorf("transaction %s has a final receipt but the node does not return it", hash.Hex()))
		}
		st.Use, st.Receipt = NonceConsumedByTx, r
		return st, nil
	case errors.As(err, &nf) && nf.Reason == NotFinalIndexing:
		return nil, &RPCError{Method: "eth_getTransactionReceipt", Transient: true, Err: fmt.Errorf("nonce %d of %s is consumed at block %d but %s", nonce, addr.Hex(), st.FinalizedBlock, nf.Reason), endpoint: c.endpoint}
	case errors.As(err, &nf):
		// The nonce is used for good below the finalized block and not by hash in a final,
		// canonical block: by another transaction.
		st.Use = NonceConsumedByOther
		st.Other, err = c.findNonceTx(ctx, addr, nonce, st.FinalizedBlock)
		if err != nil && ctx.Err() != nil {
			return nil, c.wrap("eth_getTransactionCount", err)
		}
		return st, nil
	default:
		return nil, err
	}
}

// findNonceTx finds the transaction from addr with nonce in the canonical chain up to block
// top, where the nonce is used. A full node holds the state of recent blocks only (geth: the
// last 128), so the search walks down from top in doubling steps to the first block whose
// state shows the nonce unused, then bisects between the two and scans the block found. A
// recent transaction is found on any node; it fails when the node no longer holds the state
// searched.
func (c *Client) findNonceTx(ctx context.Context, addr common.Address, nonce, top uint64) (common.Hash, error) {
	used := func(block uint64) (bool, error) {
		n, err := c.eth.NonceAt(ctx, addr, new(big.Int).SetUint64(block))
		return n > nonce, err
	}
	// The nonce is used at hi and unused at lo-1 (or lo is 0).
	lo, hi := uint64(0), top
	for step := uint64(1); hi > 0; step *= 2 {
		probe := hi - min(step, hi)
		u, err := used(probe)
		if err != nil {
			return common.Hash{}, err
		}
		if !u {
			lo = probe + 1
			break
		}
		hi = probe
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		u, err := used(mid)
		if err != nil {
			return common.Hash{}, err
		}
		if u {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	var block struct {
		Transactions []struct {
			Hash  common.Hash    `json:"hash"`
			From  common.Address `json:"from"`
			Nonce hexutil.Uint64 `json:"nonce"`
		} `json:"transactions"`
	}
	if err := c.rpc.CallContext(ctx, &block, "eth_getBlockByNumber", hexutil.EncodeUint64(lo), true); err != nil {
		return common.Hash{}, err
	}
	for _, tx := range block.Transactions {
		if tx.From == addr && uint64(tx.Nonce) == nonce {
			return tx.Hash, nil
		}
	}
	return common.Hash{}, fmt.Errorf("block %d holds no transaction from %s with nonce %d", lo, addr.Hex(), nonce)
}

// Call calls method of the contract at to with args (packed and unpacked with contract), at
// block (nil: latest; rpc.FinalizedBlockNumber and the other tags as negative numbers). A call
// that reverts is a [*RevertError] (wrapped in an [*RPCError]).
func (c *Client) Call(ctx context.Context, block *big.Int, to common.Address, contract *abi.ABI, method string, args ...any) ([]any, error) {
	input, err := contract.Pack(method, args...)
	if err != nil {
		return nil, fmt.Errorf("evm call %s on %s: pack arguments: %w", method, to.Hex(), err)
	}
	out, err := c.eth.CallContract(ctx, ethereum.CallMsg{To: &to, Data: input}, block)
	if err != nil {
		return nil, c.wrap("eth_call "+method, asRevert(err))
	}
	if len(out) == 0 && len(contract.Methods[method].Outputs) > 0 {
		return nil, &RPCError{Method: "eth_call " + method, Err: fmt.Errorf("%s returned no data: no contract at %s, or not this ABI", method, to.Hex()), endpoint: c.endpoint}
	}
	vals, err := contract.Unpack(method, out)
	if err != nil {
		return nil, &RPCError{Method: "eth_call " + method, Err: fmt.Errorf("unpack %s's result from %s: %w", method, to.Hex(), err), endpoint: c.endpoint}
	}
	return vals, nil
}
