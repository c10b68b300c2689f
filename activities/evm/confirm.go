package evm

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/sdk/activity"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/apiclient"
	evmchain "github.com/stakeflow/stakeflow/chain/evm"
)

// confirmQuiet is how long Confirm runs before it starts heartbeating (at most a quarter of the
// activity's heartbeat timeout): a transaction final within it needs no heartbeat.
const confirmQuiet = 5 * time.Second

// confirmProgress is what Confirm heartbeats, so that a retry resumes with the same clock.
type confirmProgress struct {
	// Started is when confirmation of these builds began (Unix nanoseconds): ReplaceAfter runs
	// from it, across retries.
	Started int64 `json:"started"`
	// Mined is the newest build seen mined (in a block, final or not), if any.
	Mined string `json:"mined,omitempty"`
	// Resent counts re-sends of the newest build.
	Resent int `json:"resent,omitempty"`
}

// EVMConfirm follows the step's builds (Hashes, all under Nonce) until one is final or the newest
// is to be replaced. It answers:
//   - finalized: a build's receipt with status 1 at finalized depth, in a block still canonical
//     (Hash, Block, Fee = gas used × effective gas price);
//   - failed: the same with status 0, Error the revert reason;
//   - cannot-land: the nonce was used at finalized depth by a transaction none of Hashes (Other,
//     when the node finds it; Error says which): none of them can ever land;
//   - replace: no build was mined within ReplaceAfter and the nonce is not used: a replacement
//     under the same nonce with higher fees is safe (at most one of them can land); a step that
//     stopped replacing reads it as "no final word yet".
//
// A receipt that disappears (a reorg) is followed on; while no build is pending or mined the
// newest signed bytes are re-sent (a node may drop them), through endpoint 4 or, with ResendRPC,
// the worker's RPC. Confirm heartbeats and resumes from its heartbeat.
func (a *Activities) EVMConfirm(ctx context.Context, in ConfirmInput) (ConfirmResult, error) {
	n, err := a.network(in.Network)
	if err != nil {
		return ConfirmResult{}, err
	}
	staker, err := address("staker", in.Staker)
	if err != nil {
		return ConfirmResult{}, err
	}
	hs, err := hashes(in.Hashes)
	if err != nil {
		return ConfirmResult{}, err
	}
	if len(hs) == 0 {
		return ConfirmResult{}, invalid(fmt.Sprintf("nothing to confirm under nonce %d: no transaction hash", in.Nonce))
	}
	poll := in.PollInterval
	if poll <= 0 {
		poll = time.Second
	}
	replaceAfter := in.ReplaceAfter
	if replaceAfter <= 0 {
		replaceAfter = a.ReplaceAfter
	}
	if replaceAfter <= 0 {
		replaceAfter = DefaultReplaceAfter
	}
	resendEvery := a.ResendEvery
	if resendEvery <= 0 {
		resendEvery = DefaultResendEvery
	}
	quiet := confirmQuiet
	if a.ConfirmHeartbeatAfter > 0 {
		quiet = a.ConfirmHeartbeatAfter
	}
	if hb := activity.GetInfo(ctx).HeartbeatTimeout; hb > 0 {
		quiet = min(quiet, hb/4)
	}
	logger := activity.GetLogger(ctx)
	began := time.Now()
	var progress confirmProgress
	if activity.HasHeartbeatDetails(ctx) {
		if err := activity.GetHeartbeatDetails(ctx, &progress); err != nil {
			progress = confirmProgress{}
		}
	}
	if progress.Started == 0 {
		progress.Started = began.UnixNano()
	}
	started := time.Unix(0, progress.Started)
	var lastResend time.Time
	newest := hs[len(hs)-1]
	for {
		res, done, err := a.finalOutcome(ctx, n.Chain, hs)
		if err != nil || done {
			if done {
				if res.Outcome == activities.OutcomeFailed {
					logger.Warn("Transaction failed on chain", "txHash", res.Hash, "block", res.Block, "error", res.Error, "feeWei", res.Fee)
				}
			}
			return res, err
		}
		nonces, err := n.Chain.Nonces(ctx, staker)
		if err != nil {
			return ConfirmResult{}, chainErr("nonces of "+staker.Hex(), err)
		}
		if nonces.Finalized > in.Nonce {
			// The nonce is used for good: by one of ours (final any moment now) or by someone else.
			res, done, err := a.consumedBy(ctx, n.Chain, staker, in.Nonce, hs)
			if err != nil || done {
				return res, err
			}
		}
		// Where do our builds stand on the node?
		mined, pending := "", false
		for _, h := range hs {
			l, err := n.Chain.Transaction(ctx, h)
			if err != nil {
				return ConfirmResult{}, chainErr("looking up "+h.Hex(), err)
			}
			switch l.State {
			case evmchain.TxMined:
				mined = h.Hex()
			case evmchain.TxPending:
				pending = true
			}
		}
		if progress.Mined != "" && mined == "" {
			logger.Warn("Mined build no longer in a block (reorg); following on", "txHash", progress.Mined, "nonce", in.Nonce)
		}
		progress.Mined = mined
		if mined == "" && !pending && (in.SignedTransaction != "" || in.ResendRPC) && time.Since(lastResend) >= resendEvery {
			// Dropped by the node, or reorged out and not back in its pool: send the same bytes again.
			lastResend = time.Now()
			progress.Resent++
			if err := a.resend(ctx, n.Chain, in, staker); err != nil {
				logger.Info("Re-send of the newest build not accepted", "txHash", newest.Hex(), "error", err)
			} else {
				logger.Info("Re-sent the newest build", "txHash", newest.Hex(), "nonce", in.Nonce)
			}
		}
		if mined == "" && nonces.Latest <= in.Nonce && time.Since(started) >= replaceAfter {
			logger.Info("No build mined in time; to be replaced under the same nonce", "txHash", newest.Hex(), "nonce", in.Nonce, "after", replaceAfter)
			return ConfirmResult{Outcome: activities.OutcomeReplace}, nil
		}
		if time.Since(began) >= quiet {
			activity.RecordHeartbeat(ctx, progress)
		}
		if err := sleep(ctx, poll); err != nil {
			return ConfirmResult{}, err
		}
	}
}

// resend sends the newest build's bytes again: through the worker's RPC when the step sends that
// way (ResendRPC), else through the service's endpoint 4.
func (a *Activities) resend(ctx context.Context, c Chain, in ConfirmInput, staker common.Address) error {
	if !in.ResendRPC {
		_, err := a.Service.PolygonSend(ctx, apiclient.PolygonSendRequest{SignedTransaction: in.SignedTransaction, StakerAddress: staker.Hex()})
		return err
	}
	raw, err := a.signedBytes(ctx, c, common.HexToHash(in.Hashes[len(in.Hashes)-1]), in.SignedTransaction)
	if err != nil {
		return err
	}
	return c.SendRawTransaction(ctx, raw)
}

// finalOutcome looks for a build with a receipt at finalized depth.
func (a *Activities) finalOutcome(ctx context.Context, c Chain, hs []common.Hash) (ConfirmResult, bool, error) {
	for _, h := range hs {
		r, err := c.ReceiptFinal(ctx, h)
		if errors.Is(err, evmchain.ErrNotFinal) {
			continue
		}
		if err != nil {
			return ConfirmResult{}, false, chainErr("final receipt of "+h.Hex(), err)
		}
		return outcome(r), true, nil
	}
	return ConfirmResult{}, false, nil
}

// consumedBy judges a nonce used at finalized depth: by one of hs (its outcome), or by another
// transaction: the chain's proof that none of hs can land (OutcomeCannotLand, naming it).
func (a *Activities) consumedBy(ctx context.Context, c Chain, staker common.Address, nonce uint64, hs []common.Hash) (ConfirmResult, bool, error) {
	var other common.Hash
	for _, h := range hs {
		st, err := c.NonceConsumedBy(ctx, staker, nonce, h)
		if err != nil {
			return ConfirmResult{}, false, chainErr(fmt.Sprintf("who used nonce %d of %s", nonce, staker.Hex()), err)
		}
		switch st.Use {
		case evmchain.NonceNotConsumed:
			// Finality moved between the reads: look again next round.
			return ConfirmResult{}, false, nil
		case evmchain.NonceConsumedByTx:
			return outcome(st.Receipt), true, nil
		case evmchain.NonceConsumedByOther:
			other = st.Other
		}
	}
	by := "a transaction the node could not find"
	res := ConfirmResult{Outcome: activities.OutcomeCannotLand}
	if other != (common.Hash{}) {
		by = "transaction " + other.Hex()
		res.Other = other.Hex()
	}
	res.Error = fmt.Sprintf("nonce %d of %s was used, finally, by %s, none of this step's builds %v: they can never land",
		nonce, staker.Hex(), by, hexes(hs))
	return res, true, nil
}

func outcome(r *evmchain.Receipt) ConfirmResult {
	fee := new(big.Int).SetUint64(r.GasUsed)
	if r.EffectiveGasPrice != nil {
		fee.Mul(fee, r.EffectiveGasPrice)
	} else {
		fee.SetInt64(0)
	}
	res := ConfirmResult{Outcome: activities.OutcomeFinalized, Hash: r.TxHash.Hex(), Block: r.BlockNumber, Fee: fee.String()}
	if !r.Succeeded() {
		res.Outcome = activities.OutcomeFailed
		res.Error = "execution reverted"
		if r.Revert != nil {
			res.Error = r.Revert.Summary()
		}
	}
	return res
}

func hexes(hs []common.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Hex()
	}
	return out
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
