package evmchain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"sync"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// Contract names of the EigenLayer stand-ins' artifacts.
const (
	ContractBeaconRootOracle = "BeaconRootOracle"
	ContractEigenPodManager  = "EigenPodManager"
	ContractEigenPod         = "EigenPod"
)

// MaxProofsPerBatch is the most balance proofs one verifyCheckpointProofs call of the sandbox
// carries (EigenLayer's tools send batches of 80).
const MaxProofsPerBatch = 80

// EigenHostile makes the sandbox's proofs transaction (endpoint 5) for one pod lie. The zero value
// is honest.
type EigenHostile string

// Hostile proofs transactions.
const (
	EigenHonest EigenHostile = ""
	// EigenOtherPod sends the proofs to another pod (the first other pod the sandbox made).
	EigenOtherPod EigenHostile = "other-pod"
	// EigenOtherContract sends the proofs to the EigenPodManager.
	EigenOtherContract EigenHostile = "other-contract"
	// EigenWithValue attaches 1 gwei of value.
	EigenWithValue EigenHostile = "with-value"
	// EigenStaleRoot proves against the pod's beacon state posted before the current one.
	EigenStaleRoot EigenHostile = "stale-root"
	// EigenWouldRevert flips a byte of the first balance proof: the call reverts.
	EigenWouldRevert EigenHostile = "would-revert"
	// EigenTooMany repeats the batch's first proof until the batch carries one proof more than
	// the checkpoint has remaining.
	EigenTooMany EigenHostile = "too-many"
)

// EigenHostileModes lists every hostile mode.
var EigenHostileModes = []EigenHostile{EigenOtherPod, EigenOtherContract, EigenWithValue, EigenStaleRoot, EigenWouldRevert, EigenTooMany}

// podModel is the sandbox's beacon state of one pod's validators.
type podModel struct {
	owner common.Address
	// balances are the current balances (gwei) by validator index.
	balances []uint64
	// states are every posted state by beacon block root; posted lists their roots in order.
	states  map[common.Hash]*beaconState
	posted  []common.Hash
	hostile EigenHostile
	// frontRun counts the next proofs answers another party proves first.
	frontRun int
	// scanFrom is the lowest validator index not known proven in the checkpoint of scanTS.
	scanTS   uint64
	scanFrom int
}

// EigenLayer is a deployed set of EigenLayer stand-ins (beacon root oracle, EigenPodManager) and
// the sandbox's beacon state model of each pod it made.
type EigenLayer struct {
	// Oracle is the beacon root oracle the sandbox posts each pod's beacon block root to.
	Oracle common.Address
	// Manager is the EigenPodManager.
	Manager common.Address

	d *Deployment
	// sendMu serializes the admin's transactions (their nonces).
	sendMu sync.Mutex
	mu     sync.Mutex
	pods   map[common.Address]*podModel
	order  []common.Address
}

// DeployEigenLayer deploys the beacon root oracle and the EigenPodManager with adminKey, which
// owns both and signs every later control (and the "other party"'s proofs). The manager's Pectra
// fork timestamp is the latest block's at deployment: every checkpoint after it is proven with
// Pectra's geometry, as on mainnet today; SetPectraForkTimestamp moves it.
func DeployEigenLayer(ctx context.Context, rpcURL string, adminKey *ecdsa.PrivateKey) (*EigenLayer, error) {
	if adminKey == nil {
		return nil, errors.New("evmchain: no EigenLayer admin key")
	}
	d, code, err := dial(ctx, rpcURL, adminKey, ContractBeaconRootOracle, ContractEigenPodManager, ContractEigenPod)
	if err != nil {
		return nil, err
	}
	abis := d.abis
	e := &EigenLayer{d: d, pods: map[common.Address]*podModel{}}
	create := func(name string, args ...any) (common.Address, error) {
		packed, err := abis[name].Pack("", args...)
		if err != nil {
			return common.Address{}, fmt.Errorf("evmchain: %s constructor arguments: %w", name, err)
		}
		nonce, err := d.client.PendingNonceAt(ctx, d.owner)
		if err != nil {
			return common.Address{}, fmt.Errorf("evmchain: nonce of %s: %w", d.owner.Hex(), err)
		}
		tx, err := d.signed(ctx, adminKey, nonce, nil, append(append([]byte{}, code[name]...), packed...), deployGas)
		if err != nil {
			return common.Address{}, fmt.Errorf("evmchain: deploy %s: %w", name, err)
		}
		if err := d.client.SendTransaction(ctx, tx); err != nil {
			return common.Address{}, fmt.Errorf("evmchain: deploy %s: send: %w", name, err)
		}
		rcpt, err := d.WaitMined(ctx, tx.Hash())
		if err != nil {
			return common.Address{}, err
		}
		if rcpt.Status != types.ReceiptStatusSuccessful {
			return common.Address{}, fmt.Errorf("evmchain: deploy %s: transaction %s failed on chain", name, tx.Hash().Hex())
		}
		return rcpt.ContractAddress, nil
	}
	if e.Oracle, err = create(ContractBeaconRootOracle); err != nil {
		d.client.Close()
		return nil, err
	}
	head, err := d.client.HeaderByNumber(ctx, nil)
	if err != nil {
		d.client.Close()
		return nil, fmt.Errorf("evmchain: latest block: %w", err)
	}
	if e.Manager, err = create(ContractEigenPodManager, e.Oracle, head.Time); err != nil {
		d.client.Close()
		return nil, err
	}
	return e, nil
}

// Close closes the RPC connection.
func (e *EigenLayer) Close() { e.d.Close() }

// ChainID is the chain the contracts live on.
func (e *EigenLayer) ChainID() *big.Int { return new(big.Int).Set(e.d.ChainID) }

// Admin is the address that owns the contracts and acts as the other party.
func (e *EigenLayer) Admin() common.Address { return e.d.owner }

// Pack encodes a call of method of an EigenLayer stand-in (ContractEigenPod, ...).
func (e *EigenLayer) Pack(contract, method string, args ...any) ([]byte, error) {
	return e.d.Pack(contract, method, args...)
}

func (e *EigenLayer) adminSend(ctx context.Context, to common.Address, data []byte) (*types.Receipt, error) {
	e.sendMu.Lock()
	defer e.sendMu.Unlock()
	return e.d.Send(ctx, e.d.key, to, data)
}

// CreatePod creates owner's pod with validators active validators of balanceGwei each
// (restaked), posts its beacon state, and returns the pod.
func (e *EigenLayer) CreatePod(ctx context.Context, owner common.Address, validators int, balanceGwei uint64) (common.Address, error) {
	if validators < 0 || validators > MaxPodValidators {
		return common.Address{}, fmt.Errorf("evmchain: %d validators: a pod holds 0 to %d", validators, MaxPodValidators)
	}
	data, err := e.Pack(ContractEigenPodManager, "createPodFor", owner)
	if err != nil {
		return common.Address{}, err
	}
	if _, err := e.adminSend(ctx, e.Manager, data); err != nil {
		return common.Address{}, fmt.Errorf("evmchain: createPodFor %s: %w", owner.Hex(), err)
	}
	pod, err := e.Pod(ctx, owner)
	if err != nil {
		return common.Address{}, err
	}
	m := &podModel{owner: owner, states: map[common.Hash]*beaconState{}}
	const chunk = 100
	for start := 0; start < validators; start += chunk {
		var hashes [][32]byte
		var indices, balances []uint64
		for i := start; i < min(start+chunk, validators); i++ {
			hashes = append(hashes, PubkeyHash(pod, i))
			indices = append(indices, uint64(i))
			balances = append(balances, balanceGwei)
		}
		data, err := e.Pack(ContractEigenPod, "addValidators", hashes, indices, balances)
		if err != nil {
			return common.Address{}, err
		}
		if _, err := e.adminSend(ctx, pod, data); err != nil {
			return common.Address{}, fmt.Errorf("evmchain: addValidators to %s: %w", pod.Hex(), err)
		}
		m.balances = append(m.balances, balances...)
	}
	e.mu.Lock()
	e.pods[pod] = m
	e.order = append(e.order, pod)
	e.mu.Unlock()
	return pod, e.postState(ctx, pod)
}

// Reward adds gwei to the beacon balance of each of pod's validators and posts the new state.
func (e *EigenLayer) Reward(ctx context.Context, pod common.Address, gwei uint64) error {
	e.mu.Lock()
	m, ok := e.pods[pod]
	if ok {
		for i := range m.balances {
			m.balances[i] += gwei
		}
	}
	e.mu.Unlock()
	if !ok {
		return fmt.Errorf("evmchain: %s is not a pod the sandbox made", pod.Hex())
	}
	return e.postState(ctx, pod)
}

// PectraForkTimestamp is the manager's pectraForkTimestamp().
func (e *EigenLayer) PectraForkTimestamp(ctx context.Context) (uint64, error) {
	vals, err := e.d.call(ctx, ContractEigenPodManager, e.Manager, "pectraForkTimestamp")
	if err != nil {
		return 0, err
	}
	return vals[0].(uint64), nil
}

// SetPectraForkTimestamp sets the manager's Pectra fork timestamp (EigenLayer's
// setPectraForkTimestamp). States posted from then on have the shape of the fork the next block
// is in; keep ts a minute or more away from the chain's time to know which.
func (e *EigenLayer) SetPectraForkTimestamp(ctx context.Context, ts uint64) error {
	data, err := e.Pack(ContractEigenPodManager, "setPectraForkTimestamp", ts)
	if err != nil {
		return err
	}
	if _, err := e.adminSend(ctx, e.Manager, data); err != nil {
		return fmt.Errorf("evmchain: setPectraForkTimestamp: %w", err)
	}
	return nil
}

// postState builds pod's current beacon state, in the shape of the fork the next block is in
// (after the latest block's timestamp: Pectra's when that is at or past the manager's fork
// timestamp), and posts its root to the oracle.
func (e *EigenLayer) postState(ctx context.Context, pod common.Address) error {
	fork, err := e.PectraForkTimestamp(ctx)
	if err != nil {
		return err
	}
	head, err := e.d.client.HeaderByNumber(ctx, nil)
	if err != nil {
		return fmt.Errorf("evmchain: latest block: %w", err)
	}
	e.mu.Lock()
	m := e.pods[pod]
	s, err := newBeaconState(m.balances, head.Time >= fork)
	if err == nil {
		m.states[s.root()] = s
		m.posted = append(m.posted, s.root())
	}
	e.mu.Unlock()
	if err != nil {
		return err
	}
	data, err := e.Pack(ContractBeaconRootOracle, "postRoot", pod, s.root())
	if err != nil {
		return err
	}
	if _, err := e.adminSend(ctx, e.Oracle, data); err != nil {
		return fmt.Errorf("evmchain: postRoot for %s: %w", pod.Hex(), err)
	}
	return nil
}

// SetHostile sets the hostile mode of pod's proofs transactions.
func (e *EigenLayer) SetHostile(pod common.Address, mode EigenHostile) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if m, ok := e.pods[pod]; ok {
		m.hostile = mode
	}
}

// FrontRun makes another party prove, before each of pod's next n proofs answers, the batch the
// answer carries: the answer then proves validators already proven.
func (e *EigenLayer) FrontRun(pod common.Address, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if m, ok := e.pods[pod]; ok {
		m.frontRun = n
	}
}

// Pod is owner's pod (getPod), zero when it has none.
func (e *EigenLayer) Pod(ctx context.Context, owner common.Address) (common.Address, error) {
	vals, err := e.d.call(ctx, ContractEigenPodManager, e.Manager, "getPod", owner)
	if err != nil {
		return common.Address{}, err
	}
	return vals[0].(common.Address), nil
}

// PodState is what a pod's checkpoint getters answer.
type PodState struct {
	// CurrentTimestamp is currentCheckpointTimestamp(), 0 without an active checkpoint;
	// LastTimestamp is lastCheckpointTimestamp().
	CurrentTimestamp, LastTimestamp uint64
	// Root and ProofsRemaining are the current checkpoint's.
	Root            common.Hash
	ProofsRemaining uint64
	// ActiveValidators is activeValidatorCount().
	ActiveValidators uint64
	// Shares is podOwnerShares(), in wei.
	Shares *big.Int
}

// ReadPod reads pod's checkpoint state at the latest block.
func (e *EigenLayer) ReadPod(ctx context.Context, pod common.Address) (PodState, error) {
	var st PodState
	cp, err := e.d.call(ctx, ContractEigenPod, pod, "currentCheckpoint")
	if err != nil {
		return st, err
	}
	c := cp[0].(struct {
		BeaconBlockRoot       [32]uint8 `json:"beaconBlockRoot"`
		ProofsRemaining       *big.Int  `json:"proofsRemaining"`
		PodBalanceGwei        uint64    `json:"podBalanceGwei"`
		BalanceDeltasGwei     int64     `json:"balanceDeltasGwei"`
		PrevBeaconBalanceGwei uint64    `json:"prevBeaconBalanceGwei"`
	})
	st.Root, st.ProofsRemaining = c.BeaconBlockRoot, c.ProofsRemaining.Uint64()
	for _, r := range []struct {
		method string
		into   *uint64
	}{{"currentCheckpointTimestamp", &st.CurrentTimestamp}, {"lastCheckpointTimestamp", &st.LastTimestamp}} {
		vals, err := e.d.call(ctx, ContractEigenPod, pod, r.method)
		if err != nil {
			return st, err
		}
		*r.into = vals[0].(uint64)
	}
	n, err := e.d.callBig(ctx, ContractEigenPod, pod, "activeValidatorCount")
	if err != nil {
		return st, err
	}
	st.ActiveValidators = n.Uint64()
	if st.Shares, err = e.d.callBig(ctx, ContractEigenPod, pod, "podOwnerShares"); err != nil {
		return st, err
	}
	return st, nil
}

// unproven lists up to limit of pod's validators (by index, lowest first) not yet proven in the
// checkpoint of timestamp ts. Within a checkpoint a validator proven (or no longer active) stays
// so: each scan starts at the first validator the previous scan of the checkpoint found unproven,
// so that a batch of a large pod reads about its own validators, not the whole pod's.
func (e *EigenLayer) unproven(ctx context.Context, pod common.Address, n int, ts uint64, limit int) ([]int, error) {
	e.mu.Lock()
	m := e.pods[pod]
	from := 0
	if m != nil && m.scanTS == ts {
		from = m.scanFrom
	}
	e.mu.Unlock()
	var out []int
	for i := from; i < n && len(out) < limit; i++ {
		vals, err := e.d.call(ctx, ContractEigenPod, pod, "validatorPubkeyHashToInfo", PubkeyHash(pod, i))
		if err != nil {
			return nil, err
		}
		info := vals[0].(struct {
			ValidatorIndex      uint64 `json:"validatorIndex"`
			RestakedBalanceGwei uint64 `json:"restakedBalanceGwei"`
			LastCheckpointedAt  uint64 `json:"lastCheckpointedAt"`
			Status              uint8  `json:"status"`
		})
		if info.Status == 1 && info.LastCheckpointedAt < ts {
			out = append(out, i)
		}
	}
	first := n
	if len(out) > 0 {
		first = out[0]
	}
	e.mu.Lock()
	if m != nil {
		m.scanTS, m.scanFrom = ts, first
	}
	e.mu.Unlock()
	return out, nil
}

// proofsCall packs verifyCheckpointProofs for up to MaxProofsPerBatch of pod's unproven
// validators, against the beacon state of root.
func (e *EigenLayer) proofsCall(ctx context.Context, pod common.Address, root common.Hash, ts uint64) ([]byte, error) {
	e.mu.Lock()
	m, ok := e.pods[pod]
	var s *beaconState
	if ok {
		s = m.states[root]
	}
	e.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("evmchain: %s is not a pod the sandbox made", pod.Hex())
	}
	if s == nil {
		return nil, fmt.Errorf("evmchain: pod %s: no beacon state with root %s", pod.Hex(), root.Hex())
	}
	todo, err := e.unproven(ctx, pod, len(s.balances), ts, MaxProofsPerBatch)
	if err != nil {
		return nil, err
	}
	proofs := make([]BalanceProof, 0, len(todo))
	for _, i := range todo {
		proofs = append(proofs, s.balanceProof(i, PubkeyHash(pod, i)))
	}
	return e.Pack(ContractEigenPod, "verifyCheckpointProofs", s.containerProof(), proofs)
}

// ProveNextBatch has the other party (the admin) prove the next batch of pod's active checkpoint.
func (e *EigenLayer) ProveNextBatch(ctx context.Context, pod common.Address) (*types.Receipt, error) {
	st, err := e.ReadPod(ctx, pod)
	if err != nil {
		return nil, err
	}
	if st.CurrentTimestamp == 0 {
		return nil, fmt.Errorf("evmchain: pod %s has no active checkpoint", pod.Hex())
	}
	data, err := e.proofsCall(ctx, pod, st.Root, st.CurrentTimestamp)
	if err != nil {
		return nil, err
	}
	return e.adminSend(ctx, pod, data)
}

// ProofsTransaction is the sandbox's endpoint 5: the unsigned EIP-1559 transaction proving the
// next batch of owner's pod's active checkpoint, from owner (nonce: owner's pending nonce; gas:
// the node's estimate, or 3,000,000 when the estimate fails; fees: the node's tip and twice the
// base fee on top), as the pod's hostile mode shapes it.
func (e *EigenLayer) ProofsTransaction(ctx context.Context, owner common.Address) (*types.Transaction, error) {
	pod, err := e.Pod(ctx, owner)
	if err != nil {
		return nil, err
	}
	if pod == (common.Address{}) {
		return nil, fmt.Errorf("evmchain: %s has no pod", owner.Hex())
	}
	st, err := e.ReadPod(ctx, pod)
	if err != nil {
		return nil, err
	}
	if st.CurrentTimestamp == 0 {
		return nil, fmt.Errorf("evmchain: pod %s has no active checkpoint", pod.Hex())
	}
	e.mu.Lock()
	m := e.pods[pod]
	var mode EigenHostile
	var other common.Address
	front := false
	root := st.Root
	if m != nil {
		mode = m.hostile
		if m.frontRun > 0 {
			m.frontRun--
			front = true
		}
		for i, r := range m.posted {
			if r == st.Root && i > 0 && mode == EigenStaleRoot {
				root = m.posted[i-1]
			}
		}
	}
	for _, p := range e.order {
		if p != pod {
			other = p
			break
		}
	}
	e.mu.Unlock()
	data, err := e.proofsCall(ctx, pod, root, st.CurrentTimestamp)
	if err != nil {
		return nil, err
	}
	if front {
		if _, err := e.adminSend(ctx, pod, data); err != nil {
			return nil, fmt.Errorf("evmchain: the other party's proofs: %w", err)
		}
	}
	to, value := pod, new(big.Int)
	switch mode {
	case EigenOtherPod:
		if other == (common.Address{}) {
			return nil, errors.New("evmchain: other-pod: the sandbox made no other pod")
		}
		to = other
	case EigenOtherContract:
		to = e.Manager
	case EigenWithValue:
		value = big.NewInt(1_000_000_000)
	case EigenWouldRevert, EigenTooMany:
		if data, err = e.hostileCall(data, mode, st.ProofsRemaining); err != nil {
			return nil, err
		}
	}
	c := e.d.client
	nonce, err := c.PendingNonceAt(ctx, owner)
	if err != nil {
		return nil, err
	}
	tip, err := c.SuggestGasTipCap(ctx)
	if err != nil {
		return nil, err
	}
	head, err := c.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, err
	}
	feeCap := new(big.Int).Add(tip, new(big.Int).Mul(head.BaseFee, big.NewInt(2)))
	gas, err := c.EstimateGas(ctx, ethereum.CallMsg{From: owner, To: &to, Value: value, Data: data})
	if err != nil {
		gas = 3_000_000
	}
	return types.NewTx(&types.DynamicFeeTx{ChainID: e.d.ChainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas,
		To: &to, Value: value, Data: data}), nil
}

// hostileCall corrupts a verifyCheckpointProofs call: a flipped byte in the first balance proof
// (would-revert), or the first proof repeated until the batch is longer than what remains.
func (e *EigenLayer) hostileCall(data []byte, mode EigenHostile, remaining uint64) ([]byte, error) {
	method := e.d.abis[ContractEigenPod].Methods["verifyCheckpointProofs"]
	args, err := method.Inputs.Unpack(data[4:])
	if err != nil {
		return nil, err
	}
	container := *abi.ConvertType(args[0], new(BalanceContainerProof)).(*BalanceContainerProof)
	proofs := *abi.ConvertType(args[1], new([]BalanceProof)).(*[]BalanceProof)
	if len(proofs) == 0 {
		return data, nil
	}
	switch mode {
	case EigenWouldRevert:
		proofs[0].Proof = append([]byte{}, proofs[0].Proof...)
		proofs[0].Proof[0] ^= 0xff
	case EigenTooMany:
		for uint64(len(proofs)) <= remaining {
			proofs = append(proofs, proofs[0])
		}
	}
	return e.Pack(ContractEigenPod, "verifyCheckpointProofs", container, proofs)
}

// Send signs (with key), sends and waits for a call to to, as Deployment.Send; a failed receipt
// is an error.
func (e *EigenLayer) Send(ctx context.Context, key *ecdsa.PrivateKey, to common.Address, data []byte) (*types.Receipt, error) {
	if crypto.PubkeyToAddress(key.PublicKey) == e.d.owner {
		return e.adminSend(ctx, to, data)
	}
	return e.d.Send(ctx, key, to, data)
}
