package evm

import (
	"bytes"
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
	"github.com/stakeflow/stakeflow/lease"
)

// EVMCheckFresh proves the nonce is the address's next and used by no one else: the chain's next
// nonce for the staker (at the latest block) must equal it, or be past it only because one of the
// step's own builds (Hashes) holds it (LandedEarlier). A nonce used by another transaction, and a
// gap (the chain's next nonce below ours), are lease.ErrNonceConflict, non-retryable, naming the nonce
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
			staker.Hex(), nonces.Latest, in.Nonce, nonces.Latest, in.Nonce-1), lease.ErrNonceConflict, nil)
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
	by := "by a transaction stakeflow did not send"
	if len(hashes) > 0 {
		st, err := n.Chain.NonceConsumedBy(ctx, staker, in.Nonce, hashes[len(hashes)-1])
		switch {
		case err != nil:
			by += fmt.Sprintf(" (not named: %v)", err)
		case st.Other != (common.Hash{}):
			by = "by transaction " + st.Other.Hex() + ", which stakeflow did not send"
		case st.Use == evmchain.NonceNotConsumed:
			by += " (not at finalized depth yet, so not named)"
		default:
			by += " (the node no longer holds the state to name it)"
		}
	}
	return FreshResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
		"nonce %d of %s is already used %s (the chain's next nonce is %d); nothing was sent",
		in.Nonce, staker.Hex(), by, nonces.Latest), lease.ErrNonceConflict, nil)
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
// with backoff. A service answering another hash than the bytes' is ErrWrongHash, naming both.
//
// A refusal of the bytes (a 4xx other than 401, 403 and 429) is not trusted alone: the service
// may have forwarded them and answered 400 all the same, and on a nonce chain such bytes can
// land at any later moment. The same bytes go through the worker's own RPC of the network
// (checkRefusal), whose answer decides:
//   - the RPC takes them, has them already ("already known"), holds them in its pool while
//     refusing a "replacement underpriced", or the nonce is consumed by them: sent (the
//     workflow follows them on chain);
//   - the RPC proves they can never land: their nonce consumed at finalized depth by another
//     transaction, identified by hash, that is not a build of the same call; their signature
//     or sender invalid; an intrinsic invalidity no re-send changes (gas below the intrinsic
//     gas, a tip above the fee cap, a fee over 2^256-1): ErrTransactionRejected;
//   - any other answer (insufficient funds, underpriced, a nonce used but not at final depth
//     or by a transaction not identified, a node answering another hash): ErrBroadcastUncertain,
//     so that the chain decides;
//   - no answer (network or HTTP failure, rate limit, RPC not proven): retried.
//
// Every error names what the service said and what the RPC said.
func (a *Activities) EVMBroadcast(ctx context.Context, in BroadcastInput) (BroadcastResult, error) {
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
	record := func(outcome, reason string) {
		activities.RecordBroadcast(ctx, ChainPolygon, in.Network, outcome, reason)
	}
	logger := activity.GetLogger(ctx)
	out, err := a.Service.PolygonSend(ctx, apiclient.PolygonSendRequest{SignedTransaction: in.SignedTransaction, StakerAddress: in.Staker})
	if err != nil {
		if broadcastRefusal(err) == refusalNone {
			record(activities.BroadcastRefused, activities.BroadcastErrorReason(err))
			return BroadcastResult{}, activities.ClassifyService("broadcast "+h, err)
		}
		staker, aerr := address("staker", in.Staker)
		if aerr != nil {
			return BroadcastResult{}, aerr
		}
		v := checkRefusal(ctx, n.Chain, staker, &tx, raw)
		said := fmt.Sprintf("broadcast %s (nonce %d): the service refused it (%v)", h, tx.Nonce(), err)
		switch v.kind {
		case verdictSent:
			record(activities.BroadcastSent, activities.ReasonNone)
			logger.Warn("The service refused the transaction; the worker's RPC says it is sent", "txHash", h, "nonce", tx.Nonce(),
				"service", err.Error(), "rpc", v.rpc)
			return BroadcastResult{Hash: h}, nil
		case verdictCannotLand:
			record(activities.BroadcastRefused, activities.ReasonRejected)
			return BroadcastResult{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("%s, and the worker's RPC proves it can never land: %s", said, v.rpc), activities.ErrTransactionRejected, nil)
		case verdictUncertain:
			record(activities.BroadcastRefused, activities.ReasonRejected)
			return BroadcastResult{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("%s, which alone does not prove it cannot land; the worker's RPC: %s: the chain decides", said, v.rpc),
				activities.ErrBroadcastUncertain, nil)
		}
		record(activities.BroadcastRefused, rpcFailureReason(v.err))
		return BroadcastResult{}, chainErr(said+", and the worker's RPC could not be asked about the same bytes", v.err)
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
// transactions the staking service has no broadcast endpoint for (EigenLayer checkpoints). A step
// that names its transaction by Hash only (no SignedTransaction) has its bytes read from the
// worker's RawCache, else from the node (ErrSignedUnavailable when neither has them). The
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
	raw, err := a.signedBytes(ctx, n.Chain, common.HexToHash(in.Hash), in.SignedTransaction)
	if err != nil && in.SignedTransaction == "" {
		// Named by hash only, and the bytes are not to be had: nothing was sent from here.
		return BroadcastResult{}, err
	}
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

// verdictKind is what the worker's RPC says of signed bytes the service refused.
type verdictKind int

const (
	// verdictUnanswered: the RPC gave no answer about the bytes (network or HTTP failure, rate
	// limit, not proven to serve the network); verdict.err says why.
	verdictUnanswered verdictKind = iota
	// verdictSent: the bytes are with the chain (taken, known, in the pool or landed).
	verdictSent
	// verdictCannotLand: the chain proves the bytes can never land.
	verdictCannotLand
	// verdictUncertain: refused again, without a proof that they cannot land: the chain decides.
	verdictUncertain
)

// verdict is the RPC's answer about bytes the service refused; rpc says in words what the RPC
// answered and what the chain showed.
type verdict struct {
	kind verdictKind
	rpc  string
	err  error
}

// Squashed phrases (lower case, no spaces) of a node's refusals that prove bytes can never land,
// whatever is re-sent or waited for, from go-ethereum's own errors (core/error.go,
// core/txpool/errors.go, core/types): a signature or sender that does not recover on this
// chain, and transactions invalid in themselves.
var (
	invalidSignaturePhrases = []string{
		"invalidsender",                 // txpool.ErrInvalidSender
		"invalidtransactionv,r,svalues", // types.ErrInvalidSig
		"invalidchainidforsigner",       // types.ErrInvalidChainId
		"invalidsignature",              // other clients' wording
	}
	intrinsicPhrases = []string{
		"intrinsicgastoolow",                         // core.ErrIntrinsicGas
		"insufficientgasforfloordatagascost",         // core.ErrFloorDataGas
		"maxpriorityfeepergashigherthanmaxfeepergas", // core.ErrTipAboveFeeCap
		"higherthan2^256-1",                          // core.ErrTipVeryHigh, core.ErrFeeCapVeryHigh
		"gasuint64overflow",                          // core.ErrGasUintOverflow
	}
	// alreadyHeldPhrases: the node has these very bytes.
	alreadyHeldPhrases = []string{"alreadyknown", "knowntransaction", "alreadyimported", "alreadyexists"}
)

func containsAny(squashed string, phrases []string) bool {
	for _, p := range phrases {
		if strings.Contains(squashed, p) {
			return true
		}
	}
	return false
}

// checkRefusal sends raw, the signed bytes of tx by staker that the service refused, through
// the worker's RPC and judges from its answer, and from the chain, whether they are sent, can
// never land, or may still land (see EVMBroadcast).
func checkRefusal(ctx context.Context, c Chain, staker common.Address, tx *types.Transaction, raw []byte) verdict {
	err := c.SendRawTransaction(ctx, raw)
	if err == nil {
		return verdict{kind: verdictSent, rpc: "it took the same bytes"}
	}
	if errors.Is(err, evmchain.ErrHashMismatch) {
		return verdict{kind: verdictUncertain, rpc: fmt.Sprintf("it answered for other bytes (%v)", err)}
	}
	var rpcErr rpc.Error
	if rpcRefusal(err) == refusalNone || !errors.As(err, &rpcErr) {
		return verdict{kind: verdictUnanswered, err: err}
	}
	said := rpcErr.Error()
	squashed := strings.ReplaceAll(strings.ToLower(said), " ", "")
	switch {
	case containsAny(squashed, alreadyHeldPhrases):
		return verdict{kind: verdictSent, rpc: fmt.Sprintf("it has the same bytes already (%q)", said)}
	case strings.Contains(squashed, "replacementtransactionunderpriced") || strings.Contains(squashed, "replacementunderpriced"):
		l, lerr := c.Transaction(ctx, tx.Hash())
		if lerr == nil && l.State != evmchain.TxAbsent {
			return verdict{kind: verdictSent, rpc: fmt.Sprintf("it refused them as a replacement (%q) while it holds these very bytes (%s)", said, l.State)}
		}
		looked := "it does not hold these bytes"
		if lerr != nil {
			looked = fmt.Sprintf("whether it holds these bytes could not be read (%v)", lerr)
		}
		return verdict{kind: verdictUncertain, rpc: fmt.Sprintf("it refused them as a replacement of another transaction under nonce %d (%q) and %s", tx.Nonce(), said, looked)}
	case strings.Contains(squashed, "noncetoolow"):
		return nonceUsed(ctx, c, staker, tx, said)
	case containsAny(squashed, invalidSignaturePhrases):
		return verdict{kind: verdictCannotLand, rpc: fmt.Sprintf("their signature or sender is invalid on this chain (%q)", said)}
	case containsAny(squashed, intrinsicPhrases):
		return verdict{kind: verdictCannotLand, rpc: fmt.Sprintf("they are invalid in themselves, which no re-send or wait changes (%q)", said)}
	}
	return verdict{kind: verdictUncertain, rpc: fmt.Sprintf("it refused them too (%q), which does not prove they cannot land", said)}
}

// nonceUsed judges bytes the RPC refused with "nonce too low" (said): sent when their nonce is
// consumed at finalized depth by them, cannot land when by another transaction, identified by
// hash, that is not the same call (an earlier build of the step is: the chain decides which
// build landed), uncertain otherwise.
func nonceUsed(ctx context.Context, c Chain, staker common.Address, tx *types.Transaction, said string) verdict {
	h, nonce := tx.Hash(), tx.Nonce()
	st, err := c.NonceConsumedBy(ctx, staker, nonce, h)
	switch {
	case err != nil:
		return verdict{kind: verdictUncertain, rpc: fmt.Sprintf("it says nonce %d is used (%q); by what, at finalized depth, could not be read (%v)", nonce, said, err)}
	case st.Use == evmchain.NonceConsumedByTx:
		return verdict{kind: verdictSent, rpc: fmt.Sprintf("it says nonce %d is used (%q): by these bytes, final at block %d", nonce, said, st.FinalizedBlock)}
	case st.Use == evmchain.NonceNotConsumed:
		return verdict{kind: verdictUncertain, rpc: fmt.Sprintf("it says nonce %d is used (%q), not at finalized depth yet (finalized block %d, nonce %d)", nonce, said, st.FinalizedBlock, st.FinalizedNonce)}
	case st.Other == (common.Hash{}):
		return verdict{kind: verdictUncertain, rpc: fmt.Sprintf("it says nonce %d is used (%q): at finalized block %d, by a transaction it could not identify", nonce, said, st.FinalizedBlock)}
	}
	l, err := c.Transaction(ctx, st.Other)
	if err != nil || l.Tx == nil {
		return verdict{kind: verdictUncertain, rpc: fmt.Sprintf("it says nonce %d is used (%q): at finalized block %d, by transaction %s, which could not be read (%v)", nonce, said, st.FinalizedBlock, st.Other.Hex(), err)}
	}
	if sameCall(l.Tx, tx) {
		return verdict{kind: verdictUncertain, rpc: fmt.Sprintf("it says nonce %d is used (%q): at finalized block %d, by transaction %s, the same call under the same nonce (a build of this step)", nonce, said, st.FinalizedBlock, st.Other.Hex())}
	}
	return verdict{kind: verdictCannotLand, rpc: fmt.Sprintf("nonce %d of %s is consumed at finalized block %d by transaction %s, another call (%q)", nonce, staker.Hex(), st.FinalizedBlock, st.Other.Hex(), said)}
}

// sameCall reports whether a and b make the same call: recipient, value and calldata (a
// rebuild under the same nonce changes only the fees).
func sameCall(a, b *types.Transaction) bool {
	return a.To() != nil && b.To() != nil && *a.To() == *b.To() && a.Value().Cmp(b.Value()) == 0 && bytes.Equal(a.Data(), b.Data())
}
