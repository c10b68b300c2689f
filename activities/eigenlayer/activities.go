package eigenlayer

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/apiclient"
	evmchain "github.com/stakeflow/stakeflow/chain/evm"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// Chain is the read-only access to one EVM network the activities use (chain/evm's Network).
type Chain interface {
	LatestHeader(ctx context.Context) (*types.Header, error)
	Fees(ctx context.Context) (*evmchain.Fees, error)
	EstimateGas(ctx context.Context, msg ethereum.CallMsg) (uint64, error)
	Call(ctx context.Context, block *big.Int, to common.Address, contract *abi.ABI, method string, args ...any) ([]any, error)
	Logs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error)
}

var _ Chain = (*evmchain.Network)(nil)

// Service is endpoint 5 of the staking service.
type Service interface {
	EigenLayerVerifyCheckpointProofs(ctx context.Context, req apiclient.VerifyCheckpointProofsRequest) (*apiclient.SerializedEVMTransaction, error)
}

var _ Service = (*apiclient.Client)(nil)

// Network is what the activities use on one EVM network.
type Network struct {
	Chain Chain
	// Signer verifies and signs; its policy's chain id is the network's.
	Signer *signerevm.CheckpointSigner
	// PodManager is the EigenPodManager whose getPod names each owner's pod.
	PodManager common.Address
}

// DefaultGasMarginPercent is added to the node's gas estimate.
const DefaultGasMarginPercent = 25

// startLogWindow is how many blocks back EigenReadPod looks for the CheckpointCreated log of the
// active checkpoint (about a week of Ethereum blocks).
const startLogWindow = 50_000

// Activities are the checkpoint activities. Networks and Service are required.
type Activities struct {
	Networks map[string]Network
	Service  Service
	// GasMarginPercent is added to the gas estimate (0: DefaultGasMarginPercent).
	GasMarginPercent uint64
	// Raw keeps the served proofs transactions (by digest) and the signed ones (by hash), so that
	// they never enter workflow history: the EVM activities' (actevm.Activities.Raw), which send
	// and re-send the signed ones. Nil: the results carry the bytes.
	Raw *actevm.RawCache
}

var podABI = signerevm.CheckpointABI()

func (a *Activities) network(name string) (Network, error) {
	n, ok := a.Networks[name]
	if !ok || n.Chain == nil || n.Signer == nil || n.PodManager == (common.Address{}) {
		return Network{}, invalid(fmt.Sprintf("EigenLayer checkpoints are not configured on network %q", name))
	}
	return n, nil
}

func invalid(msg string) error {
	return temporal.NewNonRetryableApplicationError(msg, activities.ErrInvalidInput, nil)
}

func address(what, s string) (common.Address, error) {
	if !common.IsHexAddress(s) {
		return common.Address{}, invalid(fmt.Sprintf("%s %q is not an address", what, s))
	}
	return common.HexToAddress(s), nil
}

// checkpoint is the EigenPod's Checkpoint struct.
type checkpoint struct {
	BeaconBlockRoot       [32]byte
	ProofsRemaining       *big.Int
	PodBalanceGwei        uint64
	BalanceDeltasGwei     int64
	PrevBeaconBalanceGwei uint64
}

// EigenReadPod reads the owner's pod and its checkpoint at the latest block.
func (a *Activities) EigenReadPod(ctx context.Context, in PodInput) (Pod, error) {
	n, err := a.network(in.Network)
	if err != nil {
		return Pod{}, err
	}
	owner, err := address("owner", in.Owner)
	if err != nil {
		return Pod{}, err
	}
	head, err := n.Chain.LatestHeader(ctx)
	if err != nil {
		return Pod{}, actevm.ChainError("latest block", err)
	}
	block := head.Number
	out := Pod{Block: block.Uint64()}
	call := func(to common.Address, method string, args ...any) (any, error) {
		vals, err := n.Chain.Call(ctx, block, to, &podABI, method, args...)
		if err != nil {
			return nil, actevm.ChainError(method, err)
		}
		return vals[0], nil
	}
	v, err := call(n.PodManager, signerevm.MethodGetPod, owner)
	if err != nil {
		return Pod{}, err
	}
	pod := v.(common.Address)
	if pod == (common.Address{}) {
		return out, nil
	}
	out.Pod = pod.Hex()
	for _, r := range []struct {
		method string
		into   *uint64
	}{{"currentCheckpointTimestamp", &out.CheckpointTimestamp}, {"lastCheckpointTimestamp", &out.LastCheckpointTimestamp}} {
		v, err := call(pod, r.method)
		if err != nil {
			return Pod{}, err
		}
		*r.into = v.(uint64)
	}
	if v, err = call(pod, "activeValidatorCount"); err != nil {
		return Pod{}, err
	}
	out.ActiveValidators = v.(*big.Int).Uint64()
	if out.CheckpointTimestamp == 0 {
		return out, nil
	}
	if v, err = call(pod, "currentCheckpoint"); err != nil {
		return Pod{}, err
	}
	cp := *abi.ConvertType(v, new(checkpoint)).(*checkpoint)
	out.BeaconBlockRoot, out.ProofsRemaining = common.Hash(cp.BeaconBlockRoot).Hex(), cp.ProofsRemaining.Uint64()
	from := new(big.Int)
	if block.Uint64() > startLogWindow {
		from.SetUint64(block.Uint64() - startLogWindow)
	}
	logs, err := n.Chain.Logs(ctx, ethereum.FilterQuery{FromBlock: from, ToBlock: block, Addresses: []common.Address{pod},
		Topics: [][]common.Hash{{podABI.Events["CheckpointCreated"].ID}, {common.BigToHash(new(big.Int).SetUint64(out.CheckpointTimestamp))}}})
	if err != nil {
		return Pod{}, actevm.ChainError("CheckpointCreated logs of "+pod.Hex(), err)
	}
	if len(logs) > 0 {
		out.StartTx = logs[len(logs)-1].TxHash.Hex()
	}
	return out, nil
}

// readPod is EigenReadPod for the activities that check the pod before building.
func (a *Activities) readPod(ctx context.Context, network string, owner, pod common.Address) (Pod, error) {
	p, err := a.EigenReadPod(ctx, PodInput{Network: network, Owner: owner.Hex()})
	if err != nil {
		return Pod{}, err
	}
	if p.Pod == "" || common.HexToAddress(p.Pod) != pod {
		return Pod{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the EigenPodManager names %q as %s's pod, not %s; nothing was signed", p.Pod, owner.Hex(), pod.Hex()), ErrNoPod, nil)
	}
	return p, nil
}

func (a *Activities) gasLimit(estimate, maxGas uint64) (uint64, error) {
	margin := a.GasMarginPercent
	if margin == 0 {
		margin = DefaultGasMarginPercent
	}
	// No headroom (activities/evm's cause, a payout the chain adds between the estimate and the
	// block, is not a checkpoint batch's): the margin in percent only, as before.
	gas, err := actevm.GasLimit(estimate, margin, 0, maxGas)
	if err != nil {
		return 0, temporal.NewNonRetryableApplicationError(err.Error()+"; nothing was signed", actevm.ErrFeeCap, nil)
	}
	return gas, nil
}

// fees chooses the fee caps (a replacement's bumped over prev's) under the policy's caps.
func fees(ctx context.Context, c Chain, p signerevm.CheckpointPolicy, gas uint64, build int, prevFee, prevTip string) (actevm.Fees, error) {
	var prev *actevm.Fees
	if build > 1 {
		fee, ok1 := new(big.Int).SetString(prevFee, 10)
		tip, ok2 := new(big.Int).SetString(prevTip, 10)
		if !ok1 || !ok2 {
			return actevm.Fees{}, invalid(fmt.Sprintf("build %d replaces a transaction whose fees are not known", build))
		}
		prev = &actevm.Fees{MaxFeePerGas: fee, MaxPriorityFeePerGas: tip}
	}
	cf, err := c.Fees(ctx)
	if err != nil {
		return actevm.Fees{}, actevm.ChainError("fees", err)
	}
	f, err := actevm.ChooseFees(cf.BaseFee, cf.Tip, gas, prev, actevm.FeeCaps{MaxFeePerGas: p.MaxFeePerGas, MaxTotalFee: p.MaxTotalFee})
	if err != nil {
		return actevm.Fees{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("build %d: %v; nothing new was signed", build, err), actevm.ErrFeeCap, nil)
	}
	return f, nil
}

// EigenBuildStart builds the owner's startCheckpoint locally, under the intent's nonce, once the
// chain shows the pod is the owner's and no checkpoint is active.
func (a *Activities) EigenBuildStart(ctx context.Context, in StartBuildInput) (StartBuildResult, error) {
	n, err := a.network(in.Network)
	if err != nil {
		return StartBuildResult{}, err
	}
	intent := in.Intent
	p := n.Signer.Policy()
	if intent.ChainID != p.ChainID {
		return StartBuildResult{}, invalid(fmt.Sprintf("the intent is for chain id %d, network %s is chain id %d", intent.ChainID, in.Network, p.ChainID))
	}
	pod, err := a.readPod(ctx, in.Network, intent.Owner, intent.Pod)
	if err != nil {
		return StartBuildResult{}, err
	}
	if pod.CheckpointTimestamp != 0 {
		return StartBuildResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("pod %s has an active checkpoint (timestamp %d): no second startCheckpoint is built", pod.Pod, pod.CheckpointTimestamp),
			ErrCheckpointActive, nil)
	}
	data, err := podABI.Pack(signerevm.MethodStartCheckpoint, intent.RevertIfNoBalance)
	if err != nil {
		return StartBuildResult{}, invalid(err.Error())
	}
	est, err := n.Chain.EstimateGas(ctx, ethereum.CallMsg{From: intent.Owner, To: &intent.Pod, Data: data})
	if err != nil {
		return StartBuildResult{}, actevm.ChainError("estimating startCheckpoint", err)
	}
	gas, err := a.gasLimit(est, p.MaxGasLimit)
	if err != nil {
		return StartBuildResult{}, err
	}
	f, err := fees(ctx, n.Chain, p, gas, in.Build, in.PrevMaxFeePerGas, in.PrevMaxPriorityFeePerGas)
	if err != nil {
		return StartBuildResult{}, err
	}
	intent.GasLimit, intent.MaxFeePerGas, intent.MaxPriorityFeePerGas = gas, f.MaxFeePerGas, f.MaxPriorityFeePerGas
	raw, err := types.NewTx(&types.DynamicFeeTx{ChainID: new(big.Int).SetUint64(p.ChainID), Nonce: intent.Nonce,
		GasTipCap: f.MaxPriorityFeePerGas, GasFeeCap: f.MaxFeePerGas, Gas: gas, To: &intent.Pod, Value: new(big.Int), Data: data,
		AccessList: types.AccessList{}}).MarshalBinary()
	if err != nil {
		return StartBuildResult{}, invalid(err.Error())
	}
	activity.GetLogger(ctx).Info("Built startCheckpoint", "pod", intent.Pod.Hex(), "nonce", intent.Nonce, "build", in.Build, "gas", gas)
	return StartBuildResult{UnsignedTransaction: hexutil.Encode(raw), Intent: intent}, nil
}

// EigenSignStart verifies the startCheckpoint against its intent, exactly, and signs it with the
// owner's key. Local activity.
func (a *Activities) EigenSignStart(ctx context.Context, in StartSignInput) (SignResult, error) {
	n, err := a.network(in.Network)
	if err != nil {
		return SignResult{}, err
	}
	raw, err := hexutil.Decode(in.UnsignedTransaction)
	if err != nil {
		return SignResult{}, refused(fmt.Errorf("the unsigned transaction is not 0x hex: %w", err))
	}
	signed, err := n.Signer.SignStart(ctx, in.Intent, raw)
	if err != nil {
		return SignResult{}, signErr(ctx, err)
	}
	return result(signed, in.Intent.TxChoices), nil
}

// EigenBuildProofs asks the service for the next proofs transaction (endpoint 5), refuses an
// answer whose separate fields contradict its serializeTx (signerevm.CheckServedFields), verifies
// it against the pod's checkpoint as the chain shows it, simulates it from the submitter, and returns
// it with the intent carrying stakeflow's nonce, gas and fees.
func (a *Activities) EigenBuildProofs(ctx context.Context, in ProofsBuildInput) (ProofsBuildResult, error) {
	n, err := a.network(in.Network)
	if err != nil {
		return ProofsBuildResult{}, err
	}
	owner, err := address("owner", in.Owner)
	if err != nil {
		return ProofsBuildResult{}, err
	}
	submitter, err := address("submitter", in.Submitter)
	if err != nil {
		return ProofsBuildResult{}, err
	}
	podAddr, err := address("pod", in.Pod)
	if err != nil {
		return ProofsBuildResult{}, err
	}
	pod, err := a.readPod(ctx, in.Network, owner, podAddr)
	if err != nil {
		return ProofsBuildResult{}, err
	}
	if pod.CheckpointTimestamp == 0 || pod.CheckpointTimestamp != in.CheckpointTimestamp {
		return ProofsBuildResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("pod %s's checkpoint %d is no longer active (active: %d); nothing to prove", pod.Pod, in.CheckpointTimestamp, pod.CheckpointTimestamp),
			ErrNoCheckpoint, nil)
	}
	tx, err := a.Service.EigenLayerVerifyCheckpointProofs(ctx, apiclient.VerifyCheckpointProofsRequest{EigenPodOwnerAddress: owner.Hex(), ActivateTx: in.ActivateTx})
	if err != nil {
		return ProofsBuildResult{}, activities.ClassifyService("checkpoint proofs (endpoint 5)", err)
	}
	served, err := hexutil.Decode(tx.SerializeTx)
	if err != nil {
		return ProofsBuildResult{}, refused(fmt.Errorf("serializeTx is not 0x hex: %w", err))
	}
	// An answer that contradicts itself is refused whole, whichever part of it would pass.
	if err := signerevm.CheckServedFields(served, signerevm.ServedFields{To: tx.To, GasLimit: tx.GasLimit, Data: tx.Data,
		Value: tx.Value, ChainID: tx.ChainID, Type: tx.Type, MaxFeePerGas: tx.MaxFeePerGas, MaxPriorityFeePerGas: tx.MaxPriorityFeePerGas}); err != nil {
		return ProofsBuildResult{}, refused(fmt.Errorf("checkpoint proofs (endpoint 5): %w", err))
	}
	p := n.Signer.Policy()
	// The geometry the pod checks the proofs with is chosen by the checkpoint's timestamp against
	// the EigenPodManager's Pectra fork timestamp, read from the manager as the pod reads it.
	block := new(big.Int).SetUint64(pod.Block)
	vals, err := n.Chain.Call(ctx, block, n.PodManager, &podABI, signerevm.MethodPectraForkTimestamp)
	if err != nil {
		return ProofsBuildResult{}, actevm.ChainError("pectraForkTimestamp of the EigenPodManager "+n.PodManager.Hex(), err)
	}
	fork := vals[0].(uint64)
	if err := signerevm.CheckPectraForkTimestamp(p.ChainID, fork); err != nil {
		return ProofsBuildResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("network %s: %v; nothing was signed", in.Network, err), ErrForkTimestamp, nil)
	}
	intent := signerevm.ProofsIntent{ChainID: p.ChainID, Submitter: submitter, Pod: podAddr,
		CheckpointRoot: common.HexToHash(pod.BeaconBlockRoot), ProofsRemaining: pod.ProofsRemaining,
		CheckpointTimestamp: pod.CheckpointTimestamp, PectraForkTimestamp: fork}
	v, err := n.Signer.VerifyProofs(intent, served)
	if err != nil {
		return ProofsBuildResult{}, refused(err)
	}
	// An EigenPod skips, without reverting, the proof of a validator that is not active or was
	// already proven in this checkpoint: a batch all of whose proofs it would skip proves nothing
	// and is not signed. Read at the latest block: another party may have proven them while the
	// service answered.
	skipped := 0
	for _, h := range v.PubkeyHashes {
		vals, err := n.Chain.Call(ctx, nil, podAddr, &podABI, signerevm.MethodValidatorInfo, h)
		if err != nil {
			return ProofsBuildResult{}, actevm.ChainError("validatorPubkeyHashToInfo of "+h.Hex(), err)
		}
		if abi.ConvertType(vals[0], new(signerevm.ValidatorInfo)).(*signerevm.ValidatorInfo).SkippedBy(in.CheckpointTimestamp) {
			skipped++
		}
	}
	if skipped == len(v.PubkeyHashes) {
		return ProofsBuildResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the batch of %d proofs proves only validators already proven in checkpoint %d or no longer active: the pod would skip every proof; nothing was signed", v.Proofs, in.CheckpointTimestamp),
			ErrAlreadyProven, nil)
	}
	est, err := n.Chain.EstimateGas(ctx, ethereum.CallMsg{From: submitter, To: &podAddr, Data: v.Data})
	if err != nil {
		return ProofsBuildResult{}, actevm.ChainError(fmt.Sprintf("simulating the batch of %d proofs; nothing was signed", v.Proofs), err)
	}
	gas, err := a.gasLimit(est, p.MaxGasLimit)
	if err != nil {
		return ProofsBuildResult{}, err
	}
	f, err := fees(ctx, n.Chain, p, gas, in.Build, in.PrevMaxFeePerGas, in.PrevMaxPriorityFeePerGas)
	if err != nil {
		return ProofsBuildResult{}, err
	}
	intent.TxChoices = signerevm.TxChoices{Nonce: in.Nonce, GasLimit: gas, MaxFeePerGas: f.MaxFeePerGas, MaxPriorityFeePerGas: f.MaxPriorityFeePerGas}
	activity.GetLogger(ctx).Info("Proofs batch verified", "pod", podAddr.Hex(), "proofs", v.Proofs, "skipped", skipped, "geometry", v.Version.String(),
		"proofsRemaining", pod.ProofsRemaining,
		"nonce", in.Nonce, "build", in.Build, "gas", gas)
	digest := crypto.Keccak256Hash(v.Data)
	out := ProofsBuildResult{Batch: BatchRef{Owner: owner.Hex(), ActivateTx: in.ActivateTx, Digest: digest.Hex()}, Intent: intent, Proofs: v.Proofs}
	if a.Raw == nil {
		out.ServedTransaction = tx.SerializeTx
	} else {
		a.Raw.Put(digest, served)
	}
	return out, nil
}

// served is the proofs transaction in names: its bytes, or those its digest names in the
// worker's RawCache, or the service's answer to the same request when its proofs (its calldata,
// verified against the intent) have that digest. The service's own nonce and fees may differ
// between answers: the signer signs the intent's, over the served calldata.
func (a *Activities) served(ctx context.Context, n Network, in ProofsSignInput) ([]byte, error) {
	if in.ServedTransaction != "" {
		raw, err := hexutil.Decode(in.ServedTransaction)
		if err != nil {
			return nil, refused(fmt.Errorf("serializeTx is not 0x hex: %w", err))
		}
		return raw, nil
	}
	d, err := hexutil.Decode(in.Batch.Digest)
	if err != nil || len(d) != common.HashLength {
		return nil, invalid(fmt.Sprintf("batch digest %q is not a 32-byte 0x hex digest", in.Batch.Digest))
	}
	digest := common.BytesToHash(d)
	if raw, ok := a.Raw.Get(digest); ok {
		return raw, nil
	}
	owner, err := address("owner", in.Batch.Owner)
	if err != nil {
		return nil, err
	}
	tx, err := a.Service.EigenLayerVerifyCheckpointProofs(ctx, apiclient.VerifyCheckpointProofsRequest{EigenPodOwnerAddress: owner.Hex(), ActivateTx: in.Batch.ActivateTx})
	if err != nil {
		return nil, activities.ClassifyService("checkpoint proofs (endpoint 5)", err)
	}
	raw, err := hexutil.Decode(tx.SerializeTx)
	if err != nil {
		return nil, refused(fmt.Errorf("serializeTx is not 0x hex: %w", err))
	}
	changed := func(why string) error {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("batch %s is no longer cached and the service now serves another (%s); nothing was signed", digest.Hex(), why),
			ErrBatchChanged, nil)
	}
	v, err := n.Signer.VerifyProofs(in.Intent, raw)
	if err != nil {
		return nil, changed(err.Error())
	}
	if got := crypto.Keccak256Hash(v.Data); got != digest {
		return nil, changed("digest " + got.Hex())
	}
	return raw, nil
}

// EigenSignProofs verifies the served proofs transaction again and signs, with the submitter's
// key, the transaction the intent describes. Local activity. The served transaction is the one
// in.Batch names (see ProofsSignInput); the signed one is kept in the RawCache and named by its
// hash only.
func (a *Activities) EigenSignProofs(ctx context.Context, in ProofsSignInput) (SignResult, error) {
	n, err := a.network(in.Network)
	if err != nil {
		return SignResult{}, err
	}
	raw, err := a.served(ctx, n, in)
	if err != nil {
		return SignResult{}, err
	}
	signed, err := n.Signer.SignProofs(ctx, in.Intent, raw)
	if err != nil {
		return SignResult{}, signErr(ctx, err)
	}
	out := result(signed, in.Intent.TxChoices)
	if a.Raw != nil {
		// Sent and re-sent by hash (EVMSendRPC, EVMConfirm), from the same cache.
		b, err := hexutil.Decode(signed.Transaction)
		if err != nil {
			return SignResult{}, fmt.Errorf("the signer's transaction %s is not 0x hex: %w", signed.Hash.Hex(), err)
		}
		a.Raw.Put(signed.Hash, b)
		out.SignedTransaction = ""
	}
	return out, nil
}

func refused(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error()+"; nothing was signed", activities.ErrVerificationFailed, nil)
}

func signErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, signerevm.ErrUnknownKey) {
		return temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrUnknownKey, nil)
	}
	return refused(err)
}

func result(s *signerevm.Signed, c signerevm.TxChoices) SignResult {
	return SignResult{Hash: s.Hash.Hex(), SignedTransaction: s.Transaction, Nonce: s.Nonce, MaxFee: s.MaxFee.String(),
		MaxFeePerGas: c.MaxFeePerGas.String(), MaxPriorityFeePerGas: c.MaxPriorityFeePerGas.String()}
}
