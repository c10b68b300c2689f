package evm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/apiclient"
	evmchain "github.com/stakeflow/stakeflow/chain/evm"
)

// EVMCheckFresh proves the nonce is the address's next and used by no one else: the chain's next
// nonce for the staker (at the latest block) must equal it, or be past it only because one of the
// step's own builds (Hashes) holds it (LandedEarlier). A nonce used by another transaction, and a
// gap (the chain's next nonce below ours), are ErrNonceConflict, non-retryable, naming the nonce
// and, when the node can find it, the transaction that used it.
func (a *Activities) EVMCheckFresh(ctx context.Context, in FreshInput) (FreshResult, error) {
	n, err := a.network(in.Network)
	if err != nil {
		return FreshResult{}, err
	}
	staker, err := address("staker", in.Staker)
	if err != nil {
		return FreshResult{}, err
	}
	hashes, err := hashes(in.Hashes)
	if err != nil {
		return FreshResult{}, err
	}
	nonces, err := n.Chain.Nonces(ctx, staker)
	if err != nil {
		return FreshResult{}, chainErr("nonces of "+staker.Hex(), err)
	}
	switch {
	case nonces.Latest == in.Nonce:
		return FreshResult{}, nil
	case nonces.Latest < in.Nonce:
		return FreshResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the chain's next nonce for %s is %d, below this transaction's nonce %d: nonces %d to %d would be skipped (a gap); nothing was sent",
			staker.Hex(), nonces.Latest, in.Nonce, nonces.Latest, in.Nonce-1), ErrNonceConflict, nil)
	}
	// The nonce is used: by one of this step's builds, or by someone else.
	for _, h := range hashes {
		l, err := n.Chain.Transaction(ctx, h)
		if err != nil {
			return FreshResult{}, chainErr("looking up "+h.Hex(), err)
		}
		if l.State == evmchain.TxMined {
			activity.GetLogger(ctx).Info("An earlier build holds the nonce", "txHash", h.Hex(), "nonce", in.Nonce, "block", l.BlockNumber)
			return FreshResult{LandedEarlier: h.Hex()}, nil
		}
	}
	other := ""
	if len(hashes) > 0 {
		if st, err := n.Chain.NonceConsumedBy(ctx, staker, in.Nonce, hashes[len(hashes)-1]); err == nil && st.Other != (common.Hash{}) {
			other = st.Other.Hex()
		}
	}
	by := "by a transaction stakeflow did not send (not at finalized depth yet, so not named)"
	if other != "" {
		by = "by transaction " + other + ", which stakeflow did not send"
	}
	return FreshResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
		"nonce %d of %s is already used %s (the chain's next nonce is %d); nothing was sent",
		in.Nonce, staker.Hex(), by, nonces.Latest), ErrNonceConflict, nil)
}

func hashes(in []string) ([]common.Hash, error) {
	out := make([]common.Hash, 0, len(in))
	for _, s := range in {
		h, err := hash(s)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// refusal is what a 4xx answer of endpoint 4 says about the bytes sent.
type refusal int

const (
	// refusalNone: not an answer about the transaction (busy, throttled, unauthorized).
	refusalNone refusal = iota
	// refusalKnown: the node already has these bytes, or their nonce is used: a re-send after a
	// lost answer, or a build under the same nonce landed. Only the chain can tell.
	refusalKnown
	// refusalRejected: the transaction itself is refused.
	refusalRejected
)

// knownPhrases are the node's answers to bytes it already has or whose nonce is used, squashed
// (lower case, no spaces).
var knownPhrases = []string{"noncetoolow", "alreadyknown", "knowntransaction", "alreadyimported", "alreadyexists"}

// broadcastRefusal classifies endpoint 4's error.
func broadcastRefusal(err error) refusal {
	var apiErr *apiclient.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode < 400 || apiErr.StatusCode >= 500 ||
		apiErr.StatusCode == 429 || apiErr.StatusCode == 401 || apiErr.StatusCode == 403 || apiErr.Retryable() {
		return refusalNone
	}
	text := strings.ToLower(apiErr.Name + " " + apiErr.Message)
	for _, v := range apiErr.Errors {
		for _, c := range v.Constraints {
			text += " " + strings.ToLower(c)
		}
	}
	squashed := strings.ReplaceAll(text, " ", "")
	for _, p := range knownPhrases {
		if strings.Contains(squashed, p) {
			return refusalKnown
		}
	}
	return refusalRejected
}

// EVMBroadcast sends the signed bytes through the service (endpoint 4) and checks the hash it
// answers is theirs. A 429 is retried after the service's Retry-After, a 5xx or a network error
// with backoff. A refusal saying the node already has the bytes or their nonce is used ("already
// known", "nonce too low") is not a refusal of these bytes: ErrBroadcastUncertain, so that the
// workflow follows the chain; as is any refusal after an earlier attempt whose answer was lost.
// Any other refusal is ErrTransactionRejected. A service answering another hash than the bytes'
// is ErrWrongHash, naming both.
func (a *Activities) EVMBroadcast(ctx context.Context, in BroadcastInput) (BroadcastResult, error) {
	if _, err := a.network(in.Network); err != nil {
		return BroadcastResult{}, err
	}
	raw, err := decodeHex(in.SignedTransaction)
	var tx types.Transaction
	if err == nil {
		err = tx.UnmarshalBinary(raw)
	}
	if err != nil {
		return BroadcastResult{}, invalid(fmt.Sprintf("the signed transaction %s does not decode: %v", in.Hash, err))
	}
	if tx.Hash().Hex() != common.HexToHash(in.Hash).Hex() {
		return BroadcastResult{}, invalid(fmt.Sprintf("the signed bytes hash to %s, not to %s", tx.Hash().Hex(), in.Hash))
	}
	h := tx.Hash().Hex()
	record := func(outcome, reason string) {
		activities.RecordBroadcast(ctx, ChainPolygon, in.Network, outcome, reason)
	}
	logger := activity.GetLogger(ctx)
	out, err := a.Service.PolygonSend(ctx, apiclient.PolygonSendRequest{SignedTransaction: in.SignedTransaction, StakerAddress: in.Staker})
	if err != nil {
		if rerr := refused(ctx, "broadcast", h, broadcastRefusal(err), err); rerr != nil {
			record(activities.BroadcastRefused, activities.ReasonRejected)
			return BroadcastResult{}, rerr
		}
		record(activities.BroadcastRefused, activities.BroadcastErrorReason(err))
		return BroadcastResult{}, activities.ClassifyService("broadcast "+h, err)
	}
	answered := answeredHash(out)
	switch {
	case answered == "":
		logger.Warn("Broadcast answer names no transaction hash; following the signed bytes' hash", "txHash", h)
	case !strings.EqualFold(answered, h):
		record(activities.BroadcastRefused, activities.ReasonError)
		return BroadcastResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("broadcast %s: the service answered transaction hash %s, not the signed bytes' %s: the service is not to be trusted; the chain decides", h, answered, h),
			ErrWrongHash, nil)
	}
	record(activities.BroadcastSent, activities.ReasonNone)
	logger.Info("Broadcast", "txHash", h, "nonce", tx.Nonce())
	return BroadcastResult{Hash: h}, nil
}

// answeredHash reads the transaction hash from endpoint 4's result, whose shape the spec does not
// document: a string, or an object with transactionHash (the sandbox's), hash or txHash.
func answeredHash(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj map[string]any
	if json.Unmarshal(raw, &obj) != nil {
		return ""
	}
	for _, k := range []string{"transactionHash", "hash", "txHash", "transactionId"} {
		if v, ok := obj[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// codeLimitExceeded is the JSON-RPC code providers answer a request over their rate limit with:
// not an answer about the transaction.
const codeLimitExceeded = -32005

// rpcRefusal classifies the node's answer to eth_sendRawTransaction: only a JSON-RPC error is an
// answer about the bytes; network and HTTP failures, and rate limits, are not.
func rpcRefusal(err error) refusal {
	var rpcErr rpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.ErrorCode() == codeLimitExceeded {
		return refusalNone
	}
	squashed := strings.ReplaceAll(strings.ToLower(rpcErr.Error()), " ", "")
	if strings.Contains(squashed, "ratelimit") || strings.Contains(squashed, "toomanyrequests") {
		return refusalNone
	}
	for _, p := range knownPhrases {
		if strings.Contains(squashed, p) {
			return refusalKnown
		}
	}
	return refusalRejected
}

// EVMSendRPC sends the signed bytes through the worker's own RPC of the network
// (eth_sendRawTransaction, only while the RPC is proven to serve the network's chain), for
// transactions the staking service has no broadcast endpoint for (EigenLayer checkpoints). The
// bytes must decode, hash to Hash and be for the network's chain id; the same bytes are sent on
// every attempt. The node answering that it has the bytes already or that their nonce is used
// ("already known", "nonce too low") is ErrBroadcastUncertain, non-retryable: the chain decides,
// as for EVMBroadcast. Network and HTTP failures, rate limits and an unproven RPC are retried.
// Any other refusal is ErrTransactionRejected at the first attempt, and ErrBroadcastUncertain
// after an earlier attempt whose answer was lost. A node answering another hash than the bytes'
// is ErrWrongHash. The broadcast metric is recorded under in.Chain (default polygon).
func (a *Activities) EVMSendRPC(ctx context.Context, in BroadcastInput) (BroadcastResult, error) {
	n, err := a.network(in.Network)
	if err != nil {
		return BroadcastResult{}, err
	}
	raw, err := decodeHex(in.SignedTransaction)
	var tx types.Transaction
	if err == nil {
		err = tx.UnmarshalBinary(raw)
	}
	if err != nil {
		return BroadcastResult{}, invalid(fmt.Sprintf("the signed transaction %s does not decode: %v", in.Hash, err))
	}
	if tx.Hash().Hex() != common.HexToHash(in.Hash).Hex() {
		return BroadcastResult{}, invalid(fmt.Sprintf("the signed bytes hash to %s, not to %s", tx.Hash().Hex(), in.Hash))
	}
	h := tx.Hash().Hex()
	if want := n.Signer.Policy().ChainID; tx.ChainId().Cmp(new(big.Int).SetUint64(want)) != 0 {
		return BroadcastResult{}, invalid(fmt.Sprintf("transaction %s is for chain id %s, not network %s's %d", h, tx.ChainId(), in.Network, want))
	}
	chain := in.Chain
	if chain == "" {
		chain = ChainPolygon
	}
	record := func(outcome, reason string) {
		activities.RecordBroadcast(ctx, chain, in.Network, outcome, reason)
	}
	logger := activity.GetLogger(ctx)
	err = n.Chain.SendRawTransaction(ctx, raw)
	if err == nil {
		record(activities.BroadcastSent, activities.ReasonNone)
		logger.Info("Sent through the worker's RPC", "txHash", h, "nonce", tx.Nonce())
		return BroadcastResult{Hash: h}, nil
	}
	if errors.Is(err, evmchain.ErrHashMismatch) {
		record(activities.BroadcastRefused, activities.ReasonError)
		return BroadcastResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("send %s: %v: the node is not to be trusted; the chain decides", h, err), ErrWrongHash, nil)
	}
	if rerr := refused(ctx, "send", h, rpcRefusal(err), err); rerr != nil {
		record(activities.BroadcastRefused, activities.ReasonRejected)
		return BroadcastResult{}, rerr
	}
	record(activities.BroadcastRefused, rpcFailureReason(err))
	return BroadcastResult{}, chainErr("send "+h, err)
}

// rpcFailureReason is the broadcast metric's reason for a send that got no answer about the bytes.
func rpcFailureReason(err error) string {
	var httpErr rpc.HTTPError
	var rpcErr rpc.Error
	switch {
	case errors.As(err, &httpErr) && httpErr.StatusCode == http.StatusTooManyRequests,
		errors.As(err, &rpcErr) && rpcErr.ErrorCode() == codeLimitExceeded:
		return activities.ReasonThrottled
	case errors.As(err, &httpErr) && (httpErr.StatusCode == http.StatusUnauthorized || httpErr.StatusCode == http.StatusForbidden):
		return activities.ReasonUnauthorized
	case errors.Is(err, evmchain.ErrNetworkUnverified), evmchain.IsTransient(err):
		return activities.ReasonUnavailable
	}
	return activities.ReasonError
}

// refused is the error of a send (verb: "broadcast" through the service, "send" through the
// worker's RPC) of the bytes hashing to h that was refused as kind: the node has them or their
// nonce is used (the chain decides); refused outright at the first attempt (rejected), or at a
// later one (uncertain: an earlier attempt may have reached the chain). nil for any other kind.
func refused(ctx context.Context, verb, h string, kind refusal, err error) error {
	switch kind {
	case refusalKnown:
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%s %s: the node has these bytes already or their nonce is used (%v): the chain decides", verb, h, err),
			activities.ErrBroadcastUncertain, nil)
	case refusalRejected:
		if attempt := activity.GetInfo(ctx).Attempt; attempt > 1 {
			return temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("%s %s refused at attempt %d, after an earlier attempt that may have reached the chain: %v", verb, h, attempt, err),
				activities.ErrBroadcastUncertain, nil)
		}
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%s %s refused: %v", verb, h, err), activities.ErrTransactionRejected, nil)
	}
	return nil
}
