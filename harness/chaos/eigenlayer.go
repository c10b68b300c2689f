package chaos

import (
	"context"
	"fmt"
	wfevm "github.com/stakeflow/stakeflow/workflows/evm"
	"math/big"
	"sync"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/stakeflow/stakeflow/harness/stack"
	wfeigenlayer "github.com/stakeflow/stakeflow/workflows/eigenlayer"
)

// Each checkpointed pod has checkpointValidators validators of 32 ETH, each paid
// checkpointRewardGwei in the beacon state before its checkpoint: 1 startCheckpoint and 2
// proofs batches.
const (
	checkpointValidators = 120
	checkpointRewardGwei = 1_000_000
)

// CheckpointOutcome is how an EigenLayer checkpoint operation ended, and its pod on chain before
// and after.
type CheckpointOutcome struct {
	ID, Owner, Pod string
	Validators     int
	State          string
	FailedType     string
	Failure        string
	Result         *wfeigenlayer.Result
	// Started counts the pod's CheckpointCreated logs: each startCheckpoint that landed.
	Started int
	// Active is the pod's currentCheckpointTimestamp at the end (0: none active); Last its
	// lastCheckpointTimestamp.
	Active, Last uint64
	// SharesBefore and SharesAfter are podOwnerShares (wei).
	SharesBefore, SharesAfter *big.Int
	// NonceBefore and NonceAfter are the owner's (who also submits the proofs).
	NonceBefore, NonceAfter uint64
}

// CheckCheckpoints compares the checkpoints with the chain: each completed; its pod's checkpoint
// was started once and completed (the one the operation reports); the balance was credited
// exactly once (shares grew by one reward per validator); the owner's nonce moved by exactly the
// transactions the operation reported.
func CheckCheckpoints(outs []CheckpointOutcome, rewardGwei uint64) []Violation {
	var vs []Violation
	bad := func(id, format string, args ...any) {
		vs = append(vs, Violation{Op: id, What: fmt.Sprintf(format, args...)})
	}
	for _, o := range outs {
		if o.State != StateCompleted || o.Result == nil {
			bad(o.ID, "did not complete: %s %s %s", o.State, o.FailedType, o.Failure)
			continue
		}
		if o.Started != 1 {
			bad(o.ID, "pod %s: %d checkpoints started, want 1", o.Pod, o.Started)
		}
		if o.Active != 0 || o.Last != o.Result.CheckpointTimestamp {
			bad(o.ID, "pod %s: checkpoint %d reported done, the chain has %d active and %d last completed", o.Pod, o.Result.CheckpointTimestamp, o.Active, o.Last)
		}
		want := new(big.Int).Mul(new(big.Int).SetUint64(uint64(o.Validators)*rewardGwei), big.NewInt(1_000_000_000))
		want.Add(want, o.SharesBefore)
		if o.SharesAfter.Cmp(want) != 0 {
			bad(o.ID, "pod %s: shares %s after the checkpoint, want %s (the rewards credited once)", o.Pod, o.SharesAfter, want)
		}
		if got := o.NonceAfter - o.NonceBefore; got != uint64(len(o.Result.Transactions)) {
			bad(o.ID, "owner %s sent %d transactions, the operation reported %d", o.Owner, got, len(o.Result.Transactions))
		}
	}
	return vs
}

// checkpointEvents are the webhook events the checkpoints' ends must have posted.
func checkpointEvents(outs []CheckpointOutcome) []string {
	var out []string
	for _, o := range outs {
		switch o.State {
		case StateCompleted:
			out = append(out, o.ID+"/completed")
		case StateFailed:
			out = append(out, o.ID+"/failed")
		}
	}
	return out
}

// runCheckpoints runs one checkpoint per owner (the EVM stakers after the Polygon ones) beside the
// other operations: checkpoint i of n starts once the Solana operations are i/3n of the way
// through, so that the run's kills and restart meet them. Their transactions go through the
// worker's own RPC, not endpoint 4: endpoint 4's faults are the Polygon operations' alone.
func (r *runner) runCheckpoints(ctx context.Context) []CheckpointOutcome {
	e := r.polygon.evm
	owners := e.Stakers[r.cfg.PolygonStakers:]
	outs := make([]CheckpointOutcome, len(owners))
	var wg sync.WaitGroup
	for i, owner := range owners {
		r.awaitProgress(ctx, float64(i)/float64(3*len(owners)))
		outs[i] = CheckpointOutcome{ID: wfeigenlayer.CheckpointWorkflowID(stack.EVMNetwork, owner.Hex()), Owner: owner.Hex(), State: StateNotStarted}
		if ctx.Err() != nil {
			continue
		}
		wg.Go(func() { r.runCheckpoint(ctx, &outs[i], owner) })
	}
	wg.Wait()
	return outs
}

func (r *runner) runCheckpoint(ctx context.Context, o *CheckpointOutcome, owner common.Address) {
	el := r.polygon.evm.EigenLayer
	pod, err := el.CreatePod(ctx, owner, checkpointValidators, 32_000_000_000)
	if err == nil {
		err = el.Reward(ctx, pod, checkpointRewardGwei)
	}
	if err != nil {
		o.Failure = fmt.Sprintf("setting up the pod: %v", err)
		return
	}
	o.Pod, o.Validators = pod.Hex(), checkpointValidators
	ps, err := el.ReadPod(ctx, pod)
	if err != nil {
		o.Failure = err.Error()
		return
	}
	o.SharesBefore = ps.Shares
	if o.NonceBefore, err = r.polygon.evm.Node.Client().NonceAt(ctx, owner, nil); err != nil {
		o.Failure = err.Error()
		return
	}
	in := wfeigenlayer.CheckpointInput{Network: stack.EVMNetwork, Owner: owner.Hex(), RequestedBy: "chaos"}
	if !r.start(ctx, wfevm.Module, o.ID, "checkpoint the EigenPod of "+owner.Hex(), wfeigenlayer.CheckpointWorkflowType, in) {
		return
	}
	var res wfeigenlayer.Result
	if r.awaitResult(ctx, o.ID, &res, &o.State, &o.FailedType, &o.Failure) {
		o.Result, o.State = &res, StateCompleted
	}
}

// observeCheckpoints reads each pod and owner at the end of the run.
func (r *runner) observeCheckpoints(ctx context.Context, outs []CheckpointOutcome) error {
	e := r.polygon.evm
	topic := crypto.Keccak256Hash([]byte("CheckpointCreated(uint64,bytes32,uint256)"))
	for i := range outs {
		o := &outs[i]
		if o.Pod == "" {
			continue
		}
		pod := common.HexToAddress(o.Pod)
		ps, err := e.EigenLayer.ReadPod(ctx, pod)
		if err != nil {
			return err
		}
		o.Active, o.Last, o.SharesAfter = ps.CurrentTimestamp, ps.LastTimestamp, ps.Shares
		logs, err := e.Node.Logs(ctx, ethereum.FilterQuery{FromBlock: big.NewInt(0), Addresses: []common.Address{pod}, Topics: [][]common.Hash{{topic}}})
		if err != nil {
			return fmt.Errorf("chaos: CheckpointCreated logs of %s: %w", o.Pod, err)
		}
		o.Started = len(logs)
		if o.NonceAfter, err = e.Node.Client().NonceAt(ctx, common.HexToAddress(o.Owner), nil); err != nil {
			return err
		}
	}
	return nil
}

// finishCheckpoints checks the checkpoints against the chain and fills the report's figures.
func (r *runner) finishCheckpoints(ctx context.Context, rep *Report) error {
	if err := r.observeCheckpoints(ctx, r.checkpointOutcomes); err != nil {
		return err
	}
	rep.Violations = append(rep.Violations, CheckCheckpoints(r.checkpointOutcomes, checkpointRewardGwei)...)
	for _, o := range r.checkpointOutcomes {
		rep.CheckpointOps++
		if o.State == StateCompleted {
			rep.CheckpointsCompleted++
			rep.CheckpointTransactions += len(o.Result.Transactions)
		}
	}
	return nil
}
