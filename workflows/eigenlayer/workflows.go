package eigenlayer

import (
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actel "github.com/stakeflow/stakeflow/activities/eigenlayer"
	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/lease"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
	"github.com/stakeflow/stakeflow/workflows"
)

// DefaultBatchesPerRun is how many proofs batches one run sends, at most, before the checkpoint
// continues as new; HistoryBudgetBytes the history size past which it continues sooner. A
// batch's events weigh a few kilobytes (its bytes stay in the worker: see tx.go), so a run's
// history stays well under the 2 MB the operation is held to, whatever the pod's size; and a
// run's transactions (its batches, the start, a few replacements) fit in StakeflowSignatures
// (workflows.MaxSignaturesAttribute).
const (
	DefaultBatchesPerRun = 16
	HistoryBudgetBytes   = 1 << 20
)

// errContinue ends a run that continues as new.
var errContinue = errors.New("continue as new")

// MaxAlreadyProven is how many batches in a row may turn out already proven (by another party)
// before the operation stops: a service that keeps answering proven validators is not believed.
const MaxAlreadyProven = 10

// Register registers the checkpoint workflow. The EVM family's nonce lease it leases nonces from
// is registered with Polygon's workflows (polygon.Register), once on the EVM task queue.
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Checkpoint, workflow.RegisterOptions{Name: CheckpointWorkflowType})
}

// checkpointOp is a checkpoint operation: the core's Operation and what it acts on.
type checkpointOp struct {
	*workflows.Operation
	network   string
	chainID   uint64
	owner     common.Address
	submitter common.Address
	pod       common.Address
	progress  *workflows.CheckpointProgress
	resumed   bool
	// batchesPerRun bounds the batches this run sends before it continues as new.
	batchesPerRun int
	// held is the nonce lease withLease holds, of heldFor, while its steps run.
	held    *lease.Lease
	heldFor common.Address
}

// Checkpoint (workflow type EigenLayerCheckpointWorkflow) checkpoints the owner's EigenPod: the
// owner's startCheckpoint when none is active, then proofs transactions from the staking service
// (endpoint 5), each verified, simulated, signed by the submitter and confirmed final, until the
// pod's checkpoint completes.
func Checkpoint(ctx workflow.Context, in CheckpointInput) (Result, error) {
	if err := in.Validate(); err != nil {
		return Result{}, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrInvalidInput, nil)
	}
	owner := common.HexToAddress(in.Owner)
	submitter := owner
	if in.Submitter != "" {
		submitter = common.HexToAddress(in.Submitter)
	}
	setup := workflows.Setup{
		Chain: Chain, Network: in.Network, Operation: OpCheckpoint, Staker: owner.Hex(), Unit: Unit,
		RequestedBy: in.RequestedBy, Options: in.Options,
		Waits:  []string{lease.StepWaitingNonce},
		Labels: workflows.Labels{Validator: "pod", Account: "checkpoint", Block: "block"},
	}
	if in.Continued != nil {
		setup.Continued = in.Continued.Operation
	}
	o, err := workflows.NewOperation(ctx, setup)
	if err != nil {
		return Result{}, err
	}
	chainID, _ := networks.EVM.ID(in.Network)
	c := &checkpointOp{Operation: o, network: in.Network, chainID: chainID, owner: owner, submitter: submitter,
		batchesPerRun: in.BatchesPerRun}
	if c.batchesPerRun == 0 {
		c.batchesPerRun = DefaultBatchesPerRun
	}
	err = c.run(ctx, in.Continued)
	if errors.Is(err, errContinue) {
		next := in
		next.Continued = &CheckpointContinued{Operation: o.Continue(), Progress: *c.progress, Resumed: c.resumed, Run: 1}
		if in.Continued != nil {
			next.Continued.Run = in.Continued.Run + 1
		}
		o.Flush(ctx)
		o.Logger().Info("Continuing as new", "batchesSent", c.progress.BatchesSent, "run", next.Continued.Run,
			"historyBytes", workflow.GetInfo(ctx).GetCurrentHistorySize())
		return Result{}, workflow.NewContinueAsNewError(ctx, CheckpointWorkflowType, next)
	}
	if err != nil {
		return Result{}, o.Fail(ctx, err)
	}
	o.Done(ctx)
	return c.result(), nil
}

func (c *checkpointOp) result() Result {
	st := c.Status()
	r := Result{Operation: OpCheckpoint, Network: c.network, Owner: c.owner.Hex(), Submitter: c.submitter.Hex(),
		Pod: c.pod.Hex(), Resumed: c.resumed, Transactions: st.Transactions, Fee: c.TotalFee().String()}
	if p := c.progress; p != nil {
		r.CheckpointTimestamp, r.StartTx, r.BatchesSent = p.Timestamp, p.StartTx, p.BatchesSent
	}
	return r
}

// readPod reads the owner's pod. A read that fails for good once a transaction landed stalls the
// operation visibly.
func (c *checkpointOp) readPod(ctx workflow.Context) (actel.Pod, error) {
	actx := workflow.WithActivityOptions(ctx, workflows.ReadOptions())
	stalls := func(err error) bool { return c.HalfDone() && workflows.MayHeal(err) }
	return workflows.UntilUnstalled(ctx, c.Operation, stalls, func() (actel.Pod, error) {
		var p actel.Pod
		err := c.Get(ctx, workflow.ExecuteActivity(actx, el.EigenReadPod, actel.PodInput{Network: c.network, Owner: c.owner.Hex()}), &p)
		return p, err
	})
}

// show records what the pod read says in the status and the Web UI's details.
func (c *checkpointOp) show(ctx workflow.Context, p actel.Pod) {
	if p.CheckpointTimestamp != 0 && p.CheckpointTimestamp == c.progress.Timestamp {
		c.progress.ProofsRemaining = p.ProofsRemaining
	}
	if c.progress.Timestamp != 0 && c.progress.Timestamp != p.CheckpointTimestamp {
		c.progress.ProofsRemaining = 0 // completed
	}
	c.SetStep(ctx, c.Status().Step)
}

// withLease runs steps holding address's nonce lease and gives it back whatever happens. Steps
// nested in steps that hold the same address's lease run under it: the owner who submits the
// proofs itself leases its nonces once for the start and every batch.
func (c *checkpointOp) withLease(ctx workflow.Context, address common.Address, steps func(*lease.Lease) error) error {
	if c.held != nil && c.heldFor == address {
		return steps(c.held)
	}
	held, err := lease.Acquire(ctx, c.Operation, lease.EVM, c.network, address.Hex(), ea.EVMRequestLease)
	if err != nil {
		return err
	}
	c.held, c.heldFor = held, address
	err = steps(held)
	c.held = nil
	if rerr := held.Release(ctx); rerr != nil {
		c.Logger().Warn("Nonce lease not released", "error", rerr)
	}
	return err
}

// run checkpoints the pod; a run continued from an earlier one (cont) proves on the checkpoint it
// carries. errContinue: the run's budget is spent, the next run goes on.
func (c *checkpointOp) run(ctx workflow.Context, cont *CheckpointContinued) error {
	p, err := c.readPod(ctx)
	if err != nil {
		return err
	}
	if p.Pod == "" {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s has no EigenPod on %s; nothing was signed", c.owner.Hex(), c.network), actel.ErrNoPod, nil)
	}
	c.pod = common.HexToAddress(p.Pod)
	c.SetValidator(c.pod.Hex())
	c.progress = &workflows.CheckpointProgress{Pod: c.pod.Hex()}
	c.Status().Checkpoint = c.progress
	if cont != nil {
		if common.HexToAddress(cont.Progress.Pod) != c.pod {
			return temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("the EigenPodManager names %s as %s's pod, not %s, which the operation proves", c.pod.Hex(), c.owner.Hex(), cont.Progress.Pod), actel.ErrNoPod, nil)
		}
		*c.progress = cont.Progress
		c.resumed = cont.Resumed
		c.show(ctx, p)
		return c.prove(ctx, p)
	}
	if p.CheckpointTimestamp == 0 && c.owner == c.submitter {
		// The owner starts the checkpoint and proves it: one lease for both.
		return c.withLease(ctx, c.owner, func(*lease.Lease) error { return c.startAndProve(ctx, p) })
	}
	return c.startAndProve(ctx, p)
}

// startAndProve starts the checkpoint unless pod p shows one active, then proves it.
func (c *checkpointOp) startAndProve(ctx workflow.Context, p actel.Pod) error {
	if p.CheckpointTimestamp == 0 {
		var err error
		if p, err = c.start(ctx); err != nil {
			return err
		}
	} else {
		c.resumed = true
		c.Logger().Info("Checkpoint already active: proving on, not starting another", "checkpoint", p.CheckpointTimestamp, "startTx", p.StartTx)
	}
	if p.CheckpointTimestamp == 0 {
		// Completed at its start (a pod without active validators).
		c.progress.Timestamp = p.LastCheckpointTimestamp
		c.show(ctx, p)
		return nil
	}
	c.progress.Timestamp = p.CheckpointTimestamp
	if c.progress.StartTx == "" {
		c.progress.StartTx = p.StartTx
	}
	c.show(ctx, p)
	return c.prove(ctx, p)
}

// start sends the owner's startCheckpoint and reads the pod once it is final. Another party's
// checkpoint started meanwhile is proven on instead.
func (c *checkpointOp) start(ctx workflow.Context) (actel.Pod, error) {
	var rec workflows.TxRecord
	err := c.withLease(ctx, c.owner, func(held *lease.Lease) error {
		var err error
		rec, err = transact(ctx, c.Operation, &tx{o: c.Operation, network: c.network, sender: c.owner.Hex(),
			start: &signerevm.StartIntent{ChainID: c.chainID, Owner: c.owner, Pod: c.pod}}, held)
		return err
	})
	switch {
	case workflows.IsErrorType(err, actel.ErrCheckpointActive):
		c.resumed = true
		c.Logger().Info("A checkpoint was started meanwhile: proving on, not starting another")
	case err != nil:
		return actel.Pod{}, err
	default:
		c.progress.StartTx = rec.TxID
	}
	return c.readPod(ctx)
}

// done reports whether the checkpoint of timestamp ts completed, as p shows the pod.
func done(p actel.Pod, ts uint64) bool {
	return p.CheckpointTimestamp != ts || p.LastCheckpointTimestamp == ts
}

// prove sends proofs batches until the checkpoint completes, re-reading the pod after each.
func (c *checkpointOp) prove(ctx workflow.Context, p actel.Pod) error {
	ts := c.progress.Timestamp
	proven := 0
	return c.withLease(ctx, c.submitter, func(held *lease.Lease) error {
		for tried := 0; !done(p, ts); tried++ {
			if c.spent(ctx, tried) {
				return errContinue
			}
			t := &tx{o: c.Operation, network: c.network, sender: c.submitter.Hex(), proofs: &actel.ProofsBuildInput{
				Network: c.network, Owner: c.owner.Hex(), Submitter: c.submitter.Hex(), Pod: c.pod.Hex(),
				ActivateTx: c.progress.StartTx, CheckpointTimestamp: ts,
			}}
			_, err := transact(ctx, c.Operation, t, held)
			switch {
			case err == nil:
				c.progress.BatchesSent++
				proven = 0
			case workflows.IsErrorType(err, actel.ErrAlreadyProven):
				proven++
				if proven > MaxAlreadyProven {
					return temporal.NewNonRetryableApplicationError(
						fmt.Sprintf("%d batches in a row proved validators already proven: %v", proven, err), actel.ErrAlreadyProven, err)
				}
				c.Logger().Info("Batch already proven by another party; reading the pod again", "error", err)
			case workflows.IsErrorType(err, actel.ErrNoCheckpoint), workflows.IsErrorType(err, actel.ErrBatchChanged):
			default:
				return err
			}
			if p, err = c.readPod(ctx); err != nil {
				return err
			}
			c.show(ctx, p)
		}
		c.Logger().Info("Checkpoint completed", "checkpoint", ts, "batchesSent", c.progress.BatchesSent)
		return nil
	})
}

// spent reports whether this run, having tried batches, has spent its budget: its batches, or
// its history's size (HistoryBudgetBytes, or the server suggesting to continue as new).
func (c *checkpointOp) spent(ctx workflow.Context, tried int) bool {
	if tried == 0 {
		return false
	}
	info := workflow.GetInfo(ctx)
	return tried >= c.batchesPerRun || info.GetCurrentHistorySize() >= HistoryBudgetBytes || info.GetContinueAsNewSuggested()
}
