package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/api/enums/v1"

	"github.com/stakeflow/stakeflow/activities"
	actel "github.com/stakeflow/stakeflow/activities/eigenlayer"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/harness/sandbox/evmchain"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/lease"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
	"github.com/stakeflow/stakeflow/workflows"
	wfeigenlayer "github.com/stakeflow/stakeflow/workflows/eigenlayer"
	wfevm "github.com/stakeflow/stakeflow/workflows/evm"
)

// BareEigenLayer checkpoints a pod as EigenLayerCheckpointWorkflow does, with no Temporal server:
// it calls the worker's own EigenLayer and EVM activities in-process, in the workflow's order (the
// pod; when no checkpoint is active, the owner's pending nonce and startCheckpoint: build, verify
// and sign, prove new, send through the worker's RPC, confirm at finalized depth; the pod again;
// then, from the submitter's pending nonce, each proofs batch: endpoint 5's transaction verified
// and simulated, signed, proven new, sent, confirmed, and the pod read again, until the checkpoint
// completes). Each batch passes by reference, as in the workflow: the built and the signed
// transaction stay in the activities' RawCache and the calls name them by digest and hash. No
// history, no task queue, no lease workflow: the benchmark runs one checkpoint of a pod at a time.
type BareEigenLayer struct {
	// EVM and Eigen are the activities of one build of the EVM module (they share its RawCache).
	EVM     *actevm.Activities
	Eigen   *actel.Activities
	Network string
	Poll    time.Duration
}

// Checkpoint checkpoints owner's pod, the owner submitting the proofs, and returns how many
// proofs batches landed.
func (b *BareEigenLayer) Checkpoint(ctx context.Context, owner common.Address) (int, error) {
	chainID, ok := networks.EVM.ID(b.Network)
	if !ok {
		return 0, fmt.Errorf("no EVM network %q", b.Network)
	}
	evm, eigen := activityCaller(ctx, b.EVM), activityCaller(ctx, b.Eigen)
	var p actel.Pod
	read := func() error {
		if err := eigen(b.Eigen.EigenReadPod, actel.PodInput{Network: b.Network, Owner: owner.Hex()}, &p); err != nil {
			return fmt.Errorf("pod: %w", err)
		}
		return nil
	}
	nonces := func() (uint64, error) {
		var n lease.Nonces
		if err := evm(b.EVM.EVMReadNonces, lease.ReadInput{Network: b.Network, Address: owner.Hex()}, &n); err != nil {
			return 0, fmt.Errorf("nonces: %w", err)
		}
		return n.Pending, nil
	}
	// send proves a signed transaction new, sends it and confirms it final.
	send := func(kind string, nonce uint64, signed actevm.SignResult) error {
		hashes := []string{signed.Hash}
		var fresh actevm.FreshResult
		if err := evm(b.EVM.EVMCheckFresh, actevm.FreshInput{Network: b.Network, Staker: owner.Hex(), Nonce: nonce, Hashes: hashes}, &fresh); err != nil {
			return fmt.Errorf("freshness of %s: %w", kind, err)
		}
		var sent actevm.BroadcastResult
		if err := evm(b.EVM.EVMSendRPC, actevm.BroadcastInput{Network: b.Network, Staker: owner.Hex(), Hash: signed.Hash,
			SignedTransaction: signed.SignedTransaction, Chain: actel.ChainEigenLayer}, &sent); err != nil {
			return fmt.Errorf("send %s: %w", kind, err)
		}
		var conf actevm.ConfirmResult
		if err := evm(b.EVM.EVMConfirm, actevm.ConfirmInput{Network: b.Network, Staker: owner.Hex(), Nonce: nonce, Hashes: hashes,
			SignedTransaction: signed.SignedTransaction, ResendRPC: true, PollInterval: b.Poll}, &conf); err != nil {
			return fmt.Errorf("confirm %s: %w", kind, err)
		}
		if conf.Outcome != activities.OutcomeFinalized {
			return fmt.Errorf("%s %s ended %s: %s", kind, signed.Hash, conf.Outcome, conf.Error)
		}
		return nil
	}

	if err := read(); err != nil {
		return 0, err
	}
	if p.Pod == "" {
		return 0, fmt.Errorf("%s has no EigenPod on %s", owner.Hex(), b.Network)
	}
	pod := common.HexToAddress(p.Pod)
	var startTx string
	if p.CheckpointTimestamp == 0 {
		nonce, err := nonces()
		if err != nil {
			return 0, err
		}
		var built actel.StartBuildResult
		in := actel.StartBuildInput{Network: b.Network, Intent: signerevm.StartIntent{ChainID: chainID, Owner: owner, Pod: pod}, Build: 1}
		in.Intent.Nonce = nonce
		if err := eigen(b.Eigen.EigenBuildStart, in, &built); err != nil {
			return 0, fmt.Errorf("build %s: %w", wfeigenlayer.KindStart, err)
		}
		var signed actevm.SignResult
		if err := eigen(b.Eigen.EigenSignStart, actel.StartSignInput{Network: b.Network, Intent: built.Intent, UnsignedTransaction: built.UnsignedTransaction}, &signed); err != nil {
			return 0, fmt.Errorf("sign %s: %w", wfeigenlayer.KindStart, err)
		}
		if err := send(wfeigenlayer.KindStart, nonce, signed); err != nil {
			return 0, err
		}
		startTx = signed.Hash
		if err := read(); err != nil {
			return 0, err
		}
	}
	if p.CheckpointTimestamp == 0 {
		return 0, nil // completed at its start: a pod without active validators
	}
	ts := p.CheckpointTimestamp
	if startTx == "" {
		startTx = p.StartTx
	}
	nonce, err := nonces()
	if err != nil {
		return 0, err
	}
	batches, proven := 0, 0
	for p.CheckpointTimestamp == ts && p.LastCheckpointTimestamp != ts {
		var built actel.ProofsBuildResult
		err := eigen(b.Eigen.EigenBuildProofs, actel.ProofsBuildInput{Network: b.Network, Owner: owner.Hex(), Submitter: owner.Hex(),
			Pod: pod.Hex(), ActivateTx: startTx, CheckpointTimestamp: ts, Nonce: nonce, Build: 1}, &built)
		var signed actevm.SignResult
		if err == nil {
			err = eigen(b.Eigen.EigenSignProofs, actel.ProofsSignInput{Network: b.Network, Intent: built.Intent, Batch: built.Batch,
				ServedTransaction: built.ServedTransaction}, &signed)
		}
		switch {
		case err == nil:
			if err := send(wfeigenlayer.KindProofs, nonce, signed); err != nil {
				return batches, err
			}
			nonce++
			batches++
			proven = 0
		case workflows.IsErrorType(err, actel.ErrAlreadyProven):
			// As the workflow: read the pod again, a bounded number of times in a row.
			if proven++; proven > wfeigenlayer.MaxAlreadyProven {
				return batches, fmt.Errorf("%d batches in a row already proven: %w", proven, err)
			}
		case workflows.IsErrorType(err, actel.ErrNoCheckpoint), workflows.IsErrorType(err, actel.ErrBatchChanged):
		default:
			return batches, fmt.Errorf("batch %d: %w", batches+1, err)
		}
		if err := read(); err != nil {
			return batches, err
		}
	}
	return batches, nil
}

// CheckpointReport is the EigenLayer checkpoint measured through its workflow and through a bare
// client calling the same activities in-process (BareEigenLayer), on the first server mode's
// stack: one checkpoint at a time, the sides alternating, each on a pod of its own.
type CheckpointReport struct {
	// Operation says what each operation is; Validators how many active validators each pod has,
	// ProofsPerBatch how many of them the sandbox's endpoint 5 proves in one batch; Ops how many
	// checkpoints each side ran.
	Operation      string `json:"operation"`
	Validators     int    `json:"validators"`
	ProofsPerBatch int    `json:"proofsPerBatch"`
	Ops            int    `json:"ops"`
	// Orchestrated ran EigenLayerCheckpointWorkflow; Bare the same activities called in-process.
	Orchestrated CheckpointStats `json:"orchestrated"`
	Bare         CheckpointStats `json:"bare"`
	// WallVsBare is the orchestrated checkpoint's p50 wall time over the bare one's; PerBatchVsBare
	// the orchestrated time per batch over the bare one's; CPUVsBare the bare side's CPU per
	// checkpoint over the orchestrated side's (server, benchmark process and geth).
	WallVsBare     float64 `json:"wallVsBare"`
	PerBatchVsBare float64 `json:"perBatchVsBare"`
	CPUVsBare      float64 `json:"cpuVsBare"`
}

// CheckpointStats is one side's checkpoints: Stats over checkpoints (Ops checkpoints, their wall
// time's p50 and p95, CPU per checkpoint), with the proofs batches they sent.
type CheckpointStats struct {
	Stats
	// Batches is how many proofs batches the side's checkpoints sent, in all; PerBatch is their
	// wall time, each from its start to its completion (startCheckpoint included), over Batches.
	Batches  int      `json:"batches"`
	PerBatch Duration `json:"perBatch"`
}

func (r *CheckpointReport) ratios() {
	r.WallVsBare = ratio(float64(r.Orchestrated.P50), float64(r.Bare.P50))
	r.PerBatchVsBare = ratio(float64(r.Orchestrated.PerBatch), float64(r.Bare.PerBatch))
	r.CPUVsBare = 0
	if o, b := r.Orchestrated.CPU, r.Bare.CPU; o != nil && b != nil {
		r.CPUVsBare = ratio(float64(b.total()), float64(o.total()))
	}
}

// markdown is the report's section ("" without one).
func (r *CheckpointReport) markdown() string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## %s\n\n", r.Operation)
	fmt.Fprintf(&b, "%d checkpoints per side, one at a time, the sides alternating, each side on a pod of its own of %d validators (the sandbox proves %d a batch), "+
		"rewarded before each checkpoint. Each transaction (the startCheckpoint, then one a batch) waits to be final on geth --dev, which dominates the wall time; "+
		"the time per batch is the checkpoints' wall time over their batches.\n\n", r.Ops, r.Validators, r.ProofsPerBatch)
	b.WriteString("| side | checkpoints | wall p50 | wall p95 | batches | time per batch | errors | CPU ms/checkpoint: server | bench process | geth |\n" +
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, row := range []struct {
		name string
		s    CheckpointStats
	}{{"orchestrated", r.Orchestrated}, {"bare", r.Bare}} {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %d | %s | %d | %s |\n", row.name, row.s.Ops, ms(row.s.P50), ms(row.s.P95),
			row.s.Batches, ms(row.s.PerBatch), row.s.Errors, cpuCells(row.s.CPU))
	}
	fmt.Fprintf(&b, "\norchestrated/bare: wall p50 %.2f, time per batch %.2f, CPU per checkpoint (bare/orchestrated) %.2f\n", r.WallVsBare, r.PerBatchVsBare, r.CPUVsBare)
	return b.String()
}

// EigenLayer pods' validators hold 32 ETH; each checkpoint credits them this reward (gwei), paid
// in the sandbox's beacon state before it.
const (
	eigenBalanceGwei = 32_000_000_000
	eigenRewardGwei  = 1_000_000
)

// eigenOwner is a side's pod owner (0 orchestrated, 1 bare), who also submits its proofs: the
// EVM keys after the Polygon and Hyperliquid sides'.
func (e *env) eigenOwner(side int) common.Address {
	return e.st.EVM.Stakers[evmKeysOf(e.cfg).eigenlayer+side]
}

// eigenCheckpoint checkpoints the orchestrated side's pod through the workflow, started as the
// admin tool starts it (the pod's operation ID, a new run once the last ended), and returns the
// batches it sent.
func (e *env) eigenCheckpoint(ctx context.Context) (int, error) {
	owner := e.eigenOwner(0).Hex()
	in := wfeigenlayer.CheckpointInput{Network: stack.EVMNetwork, Owner: owner, Options: workflows.Options{ConfirmPollInterval: e.cfg.EigenLayerConfirmPoll}}
	opts := starter.StartOptions(wfeigenlayer.CheckpointWorkflowID(in.Network, owner),
		fmt.Sprintf("checkpoint the EigenPod of %s (%s)", owner, in.Network), benchQueue(wfevm.Module), wfeigenlayer.Attributes(in.Network, owner)...)
	opts.WorkflowIDReusePolicy = enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	run, err := e.c.ExecuteWorkflow(ctx, opts, wfeigenlayer.CheckpointWorkflowType, in)
	if err != nil {
		return 0, err
	}
	var res wfeigenlayer.Result
	if err := e.wait(ctx, run, &res); err != nil {
		return 0, err
	}
	return res.BatchesSent, nil
}

func (e *env) bareEigenCheckpoint(ctx context.Context) (int, error) {
	return e.bareEigenLayer.Checkpoint(ctx, e.eigenOwner(1))
}

// measureEigenLayer makes each side's pod, then runs Config.EigenLayerOps checkpoints per side,
// one at a time, the sides alternating in the rounds' balanced order, each pod rewarded before
// each of its checkpoints (unmeasured); CPU is read around each checkpoint, with geth as the
// chain's process.
func (e *env) measureEigenLayer(ctx context.Context) (*CheckpointReport, error) {
	el := e.st.EVM.EigenLayer
	var pods [2]common.Address
	for side := range pods {
		pod, err := el.CreatePod(ctx, e.eigenOwner(side), e.cfg.EigenLayerValidators, eigenBalanceGwei)
		if err != nil {
			return nil, fmt.Errorf("the %s side's pod: %w", [2]string{"orchestrated", "bare"}[side], err)
		}
		pods[side] = pod
	}
	rep := &CheckpointReport{Operation: "EigenLayer checkpoint (startCheckpoint + verifyCheckpointProofs batches, each final on geth --dev)",
		Validators: e.cfg.EigenLayerValidators, ProofsPerBatch: evmchain.MaxProofsPerBatch, Ops: e.cfg.EigenLayerOps}
	sides := []struct {
		name string
		run  func(context.Context) (int, error)
		into *CheckpointStats
	}{{"orchestrated", e.eigenCheckpoint, &rep.Orchestrated}, {"bare", e.bareEigenCheckpoint, &rep.Bare}}
	geth := e.st.EVM.Node.Pid()
	rounds := make([][]Stats, len(sides))
	var batches [2]int
	for r := range e.cfg.EigenLayerOps {
		for _, j := range balancedOrder(len(sides), r) {
			if err := el.Reward(ctx, pods[j], eigenRewardGwei); err != nil {
				return nil, fmt.Errorf("rewarding the %s side's pod: %w", sides[j].name, err)
			}
			cpu0 := e.cpuWith(geth)
			sent := 0
			s := RunLoad(ctx, 1, 1, func(ctx context.Context, _ int) error {
				n, err := sides[j].run(ctx)
				sent = n
				return err
			})
			e.settle(ctx)
			s.CPU = e.cpuWith(geth).perOp(cpu0, 1)
			if s.Errors > 0 {
				return nil, fmt.Errorf("%s checkpoint %d: %s", sides[j].name, r+1, s.FirstError)
			}
			batches[j] += sent
			rounds[j] = append(rounds[j], s)
		}
	}
	for j, side := range sides {
		side.into.Stats = Merge(rounds[j]...)
		side.into.Batches = batches[j]
		if batches[j] > 0 {
			side.into.PerBatch = side.into.Wall / Duration(batches[j])
		}
	}
	rep.ratios()
	return rep, nil
}
