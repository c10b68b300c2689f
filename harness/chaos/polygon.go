package chaos

import (
	"context"
	"fmt"
	wfevm "github.com/stakeflow/stakeflow/workflows/evm"
	"math/big"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/stack"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
)

// Polygon operation shapes.
const (
	// KindPolygonDelegate is a PolygonDelegateWorkflow alone: approve, then buyVoucherPOL.
	KindPolygonDelegate Kind = "polygon-delegate"
	// KindPolygonChain is a delegate, then a PolygonUnstakeWorkflow of part of it: sellVoucher_newPOL,
	// the wait for the withdrawal delay (checkpoints the run advances), unstakeClaimTokens_newPOL.
	KindPolygonChain Kind = "polygon-delegate-unstake-claim"
)

// polWei is one POL in wei.
var polWei = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)

// PolygonOpSpec is one planned Polygon operation; several share a staker address, so that the
// address's nonce lease orders them under the run's faults.
type PolygonOpSpec struct {
	Index int
	Kind  Kind
	// DelegateID is the delegate's operation ID; UnstakeID the unstake's (KindPolygonChain only).
	DelegateID, UnstakeID string
	// Staker and Validator index the run's EVM stakers and the deployment's validators.
	Staker, Validator int
	// Wei is the delegated amount; UnstakeWei what the chain unstakes and claims back.
	Wei, UnstakeWei *big.Int
}

// PlanPolygon derives n Polygon operations from seed over stakers addresses and validators
// validators: about half delegate -> unstake -> claim chains, amounts of 1 to 20 POL and a
// fraction in wei. The same arguments give the same plan.
func PlanPolygon(seed uint64, n, stakers, validators int) []PolygonOpSpec {
	rng := rand.New(rand.NewPCG(seed, seed^0x9019_60e5))
	ops := make([]PolygonOpSpec, n)
	for i := range ops {
		op := PolygonOpSpec{Index: i, Kind: KindPolygonDelegate, Staker: i % max(stakers, 1), Validator: rng.IntN(max(validators, 1))}
		if rng.IntN(2) == 0 {
			op.Kind = KindPolygonChain
		}
		op.DelegateID = fmt.Sprintf("chaos-%d-p%03d-delegate", seed, i)
		op.Wei = new(big.Int).Mul(big.NewInt(1+rng.Int64N(20)), polWei)
		op.Wei.Add(op.Wei, new(big.Int).SetUint64(rng.Uint64N(1_000_000_000_000_000_000)))
		if op.Kind == KindPolygonChain {
			op.UnstakeID = fmt.Sprintf("chaos-%d-p%03d-unstake", seed, i)
			op.UnstakeWei = new(big.Int).Div(op.Wei, big.NewInt(2))
		}
		ops[i] = op
	}
	return ops
}

// PolygonOutcome is how a Polygon operation ended.
type PolygonOutcome struct {
	Spec PolygonOpSpec
	// Staker and Share are the addresses the operation acted with.
	Staker, Share string
	State         string
	FailedType    string
	Failure       string
	Delegate      *wfpolygon.Result
	Unstake       *wfpolygon.Result
}

// ReceiptView is a reported transaction as the chain shows it at the end of the run.
type ReceiptView struct {
	Found bool
	// From, Nonce and Status are the transaction's sender, nonce and receipt status; Fee what it
	// paid (gas used x effective gas price).
	From   string
	Nonce  uint64
	Status uint64
	Fee    *big.Int
}

// AddressView is a staker address before and after the run.
type AddressView struct {
	NonceBefore, NonceAfter uint64
	ETHBefore, ETHAfter     *big.Int
	POLBefore, POLAfter     *big.Int
}

// PolygonObservation is what CheckPolygon compares: the operations' outcomes and the chain.
type PolygonObservation struct {
	Ops []PolygonOutcome
	// Addresses by staker address (hex as the results carry it).
	Addresses map[string]AddressView
	// Staked is the POL each staker has staked with each validator share at the end, keyed
	// staker + "/" + share.
	Staked map[string]*big.Int
	// Receipts of every transaction hash the operations reported.
	Receipts map[string]ReceiptView
	// UnbondShares is what is left of each unstake's unbond (zero once claimed), by unstake ID.
	UnbondShares map[string]*big.Int
	// Dropped are the hashes the service answered for without forwarding them.
	Dropped []string
}

// CheckPolygon compares the chain with the Polygon operations: every operation completed; every
// transaction an operation reported landed once, succeeded, from its staker, with the fee the
// operation reported; each address's nonces were used by exactly those transactions, one each,
// no gap and nothing else (its nonce moved by their count); its gas money fell by exactly their
// fees; its POL moved by exactly what was delegated and claimed; its stake with each validator
// is exactly what was delegated less what was unstaked (the run's checkpoints pay no rewards);
// each unstake's unbond was claimed.
func CheckPolygon(obs PolygonObservation) []Violation {
	var vs []Violation
	bad := func(op, format string, args ...any) {
		vs = append(vs, Violation{Op: op, What: fmt.Sprintf(format, args...)})
	}
	type addrUse struct {
		nonces map[uint64]string
		fees   *big.Int
		pol    *big.Int // POL back on the address: claimed less delegated
	}
	uses := map[string]*addrUse{}
	use := func(a string) *addrUse {
		if uses[a] == nil {
			uses[a] = &addrUse{nonces: map[uint64]string{}, fees: new(big.Int), pol: new(big.Int)}
		}
		return uses[a]
	}
	staked := map[string]*big.Int{}
	seen := map[string]string{}
	for _, o := range obs.Ops {
		id := o.Spec.DelegateID
		if o.State != StateCompleted {
			if o.Delegate != nil && o.Spec.UnstakeID != "" {
				id = o.Spec.UnstakeID
			}
			bad(id, "did not complete: %s %s %s", o.State, o.FailedType, o.Failure)
			continue
		}
		u := use(o.Staker)
		key := o.Staker + "/" + o.Share
		if staked[key] == nil {
			staked[key] = new(big.Int)
		}
		steps := []struct {
			id    string
			res   *wfpolygon.Result
			kinds []string
		}{{o.Spec.DelegateID, o.Delegate, []string{"approve", "delegate"}}}
		if o.Spec.Kind == KindPolygonChain {
			steps = append(steps, struct {
				id    string
				res   *wfpolygon.Result
				kinds []string
			}{o.Spec.UnstakeID, o.Unstake, []string{"unstake", "claim"}})
		}
		for _, s := range steps {
			if s.res == nil {
				bad(s.id, "completed without a result")
				continue
			}
			var kinds []string
			for _, t := range s.res.Transactions {
				kinds = append(kinds, t.Kind)
				if prev, dup := seen[t.TxID]; dup {
					bad(s.id, "transaction %s also reported by %s", t.TxID, prev)
					continue
				}
				seen[t.TxID] = s.id
				rc, ok := obs.Receipts[t.TxID]
				switch {
				case !ok || !rc.Found:
					bad(s.id, "reported transaction %s (%s) is not on chain", t.TxID, t.Kind)
					continue
				case rc.Status != 1:
					bad(s.id, "transaction %s (%s) reverted on chain", t.TxID, t.Kind)
				case !strings.EqualFold(rc.From, o.Staker):
					bad(s.id, "transaction %s was sent by %s, not the staker %s", t.TxID, rc.From, o.Staker)
				}
				if rc.Fee == nil || rc.Fee.String() != t.Fee {
					bad(s.id, "transaction %s reported fee %s wei, the receipt shows %v", t.TxID, t.Fee, rc.Fee)
				}
				if rc.Fee != nil {
					u.fees.Add(u.fees, rc.Fee)
				}
				if other, dup := u.nonces[rc.Nonce]; dup {
					bad(s.id, "nonce %d of %s used by %s and %s", rc.Nonce, o.Staker, other, t.TxID)
				}
				u.nonces[rc.Nonce] = t.TxID
			}
			if strings.Join(kinds, ",") != strings.Join(s.kinds, ",") {
				bad(s.id, "transactions %v, want %v", kinds, s.kinds)
			}
		}
		if o.Delegate != nil && o.Delegate.Amount != o.Spec.Wei.String() {
			bad(id, "delegated %s wei, asked %s", o.Delegate.Amount, o.Spec.Wei)
		}
		u.pol.Sub(u.pol, o.Spec.Wei)
		staked[key].Add(staked[key], o.Spec.Wei)
		if o.Spec.Kind == KindPolygonChain && o.Unstake != nil {
			u.pol.Add(u.pol, o.Spec.UnstakeWei)
			staked[key].Sub(staked[key], o.Spec.UnstakeWei)
			if left := obs.UnbondShares[o.Spec.UnstakeID]; left == nil || left.Sign() != 0 {
				bad(o.Spec.UnstakeID, "unbond %d not claimed (shares left: %v)", o.Unstake.UnbondNonce, left)
			}
		}
	}
	addrs := make([]string, 0, len(obs.Addresses))
	for a := range obs.Addresses {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	for _, a := range addrs {
		v := obs.Addresses[a]
		u := use(a)
		if got, want := v.NonceAfter-v.NonceBefore, uint64(len(u.nonces)); got != want {
			bad("", "address %s sent %d transactions, the operations reported %d", a, got, want)
		}
		for n := v.NonceBefore; n < v.NonceAfter; n++ {
			if _, ok := u.nonces[n]; !ok {
				bad("", "nonce %d of %s used by no reported transaction (a gap or a stranger)", n, a)
			}
		}
		if want := new(big.Int).Sub(v.ETHBefore, u.fees); want.Cmp(v.ETHAfter) != 0 {
			bad("", "address %s holds %s wei of gas money, want %s (before %s less the reported fees %s)", a, v.ETHAfter, want, v.ETHBefore, u.fees)
		}
		if want := new(big.Int).Add(v.POLBefore, u.pol); want.Cmp(v.POLAfter) != 0 {
			bad("", "address %s holds %s POL wei, want %s (before %s, moved %s)", a, v.POLAfter, want, v.POLBefore, u.pol)
		}
	}
	keys := make([]string, 0, len(staked))
	for k := range staked {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got := obs.Staked[k]; got == nil || got.Cmp(staked[k]) != 0 {
			bad("", "stake %s is %v wei, want %s (delegated less unstaked)", k, got, staked[k])
		}
	}
	return vs
}

// PolygonRecoveries counts the Polygon recovery paths taken to the end: transactions the service
// answered for without forwarding them that an operation still landed once (sent again from the
// worker's own reading of the chain).
func PolygonRecoveries(obs PolygonObservation) (droppedThenLanded int) {
	reported := map[string]bool{}
	for _, o := range obs.Ops {
		if o.State != StateCompleted {
			continue
		}
		for _, res := range []*wfpolygon.Result{o.Delegate, o.Unstake} {
			if res == nil {
				continue
			}
			for _, t := range res.Transactions {
				reported[strings.ToLower(t.TxID)] = true
			}
		}
	}
	for _, h := range obs.Dropped {
		if rc, ok := obs.Receipts[h]; reported[strings.ToLower(h)] && ok && rc.Found && rc.Status == 1 {
			droppedThenLanded++
		}
	}
	return droppedThenLanded
}

// polygonRun is the run's EVM chain and its Polygon operations.
type polygonRun struct {
	evm    *stack.EVM
	ops    []PolygonOpSpec
	before map[string]AddressView

	mu sync.Mutex
	// unstaking counts unstakes running: the checkpoint loop advances epochs while it is positive.
	unstaking int
	advances  int
}

// setUpPolygon starts the EVM chain, stops checkpoint rewards (so every balance is exact) and
// records each staker's nonce and balances.
func (r *runner) setUpPolygon(ctx context.Context) error {
	cfg := r.cfg
	e, err := stack.StartEVM(ctx, cfg.Dir, stack.EVMOptions{Stakers: cfg.PolygonStakers + cfg.CheckpointOps}, r.log.Named("evm"))
	r.polygon = &polygonRun{evm: e, before: map[string]AddressView{}}
	if err != nil {
		return fmt.Errorf("chaos: starting the EVM chain: %w", err)
	}
	if err := e.Deployment.SetCheckpointReward(ctx, new(big.Int)); err != nil {
		return fmt.Errorf("chaos: stopping checkpoint rewards: %w", err)
	}
	r.polygon.ops = PlanPolygon(cfg.Seed, cfg.PolygonOps, cfg.PolygonStakers, len(e.Deployment.Validators))
	for _, a := range e.Stakers[:cfg.PolygonStakers] {
		v, err := r.readAddress(ctx, a)
		if err != nil {
			return err
		}
		r.polygon.before[a.Hex()] = v
	}
	return nil
}

// readAddress reads an address's nonce (latest), gas money and POL.
func (r *runner) readAddress(ctx context.Context, a common.Address) (AddressView, error) {
	e := r.polygon.evm
	nonce, err := e.Node.Client().NonceAt(ctx, a, nil)
	if err != nil {
		return AddressView{}, fmt.Errorf("chaos: nonce of %s: %w", a, err)
	}
	eth, err := e.Node.Client().BalanceAt(ctx, a, nil)
	if err != nil {
		return AddressView{}, fmt.Errorf("chaos: balance of %s: %w", a, err)
	}
	pol, err := e.Deployment.TokenBalance(ctx, a)
	if err != nil {
		return AddressView{}, fmt.Errorf("chaos: POL of %s: %w", a, err)
	}
	return AddressView{NonceBefore: nonce, NonceAfter: nonce, ETHBefore: eth, ETHAfter: eth, POLBefore: pol, POLAfter: pol}, nil
}

// runPolygonOps runs the Polygon operations beside the Solana ones: operation i of n starts once
// the Solana operations are i/3n of the way through, so that the run's worker kills and Temporal
// restart meet them at every step, while the operations of one address (which take turns with
// its nonce lease, each confirming at finalized depth) still end within the run.
func (r *runner) runPolygonOps(ctx context.Context) []PolygonOutcome {
	p := r.polygon
	outcomes := make([]PolygonOutcome, len(p.ops))
	var wg sync.WaitGroup
	for i, op := range p.ops {
		r.awaitProgress(ctx, float64(i)/float64(3*len(p.ops)))
		if ctx.Err() != nil {
			outcomes[i] = PolygonOutcome{Spec: op, State: StateNotStarted}
			continue
		}
		wg.Go(func() { outcomes[i] = r.runPolygonOp(ctx, op) })
	}
	wg.Wait()
	return outcomes
}

// awaitProgress waits until that fraction of the Solana operations is done.
func (r *runner) awaitProgress(ctx context.Context, fraction float64) {
	for {
		r.mu.Lock()
		reached := float64(r.done) >= fraction*float64(len(r.ops))
		r.mu.Unlock()
		if reached || !sleepCtx(ctx, 200*time.Millisecond) {
			return
		}
	}
}

// runPolygonOp runs one Polygon operation: the delegate and, for a chain, the unstake -> claim.
func (r *runner) runPolygonOp(ctx context.Context, op PolygonOpSpec) PolygonOutcome {
	e := r.polygon.evm
	out := PolygonOutcome{Spec: op, Staker: e.Stakers[op.Staker].Hex(), Share: e.Deployment.Validators[op.Validator].Share.Hex()}
	// run starts one workflow of the operation and waits for its result; false leaves out's state
	// as it ended.
	run := func(id, op, wfType string, wei *big.Int) (*wfpolygon.Result, bool) {
		in := wfpolygon.DelegateInput{Network: stack.EVMNetwork, Staker: out.Staker, ValidatorShare: out.Share, Amount: wei.String()}
		if !r.start(ctx, wfevm.Module, id, wfpolygon.Summary(op, in.Network, in.Staker, in.ValidatorShare, in.Amount), wfType, in) {
			out.State = StateNotStarted
			return nil, false
		}
		var res wfpolygon.Result
		if !r.awaitResult(ctx, id, &res, &out.State, &out.FailedType, &out.Failure) {
			return nil, false
		}
		return &res, true
	}
	var ok bool
	if out.Delegate, ok = run(op.DelegateID, wfpolygon.OpDelegate, wfpolygon.DelegateWorkflowType, op.Wei); !ok {
		return out
	}
	if op.Kind == KindPolygonChain {
		r.polygon.mu.Lock()
		r.polygon.unstaking++
		r.polygon.mu.Unlock()
		defer func() {
			r.polygon.mu.Lock()
			r.polygon.unstaking--
			r.polygon.mu.Unlock()
		}()
		if out.Unstake, ok = run(op.UnstakeID, wfpolygon.OpUnstake, wfpolygon.UnstakeWorkflowType, op.UnstakeWei); !ok {
			return out
		}
	}
	out.State = StateCompleted
	return out
}

// checkpointLoop advances the staking contracts' epoch every interval while an unstake waits for
// its withdrawal delay. The advances are the deployment owner's transactions, not the stakers'.
func (r *runner) checkpointLoop(ctx context.Context, every time.Duration) {
	for sleepCtx(ctx, every) {
		r.polygon.mu.Lock()
		waiting := r.polygon.unstaking > 0
		r.polygon.mu.Unlock()
		if !waiting {
			continue
		}
		if err := r.polygon.evm.Deployment.AdvanceEpochs(ctx, 1); err != nil {
			r.log.Warn("Advancing the Polygon checkpoint failed", zap.Error(err))
			continue
		}
		r.polygon.mu.Lock()
		r.polygon.advances++
		r.polygon.mu.Unlock()
	}
}

// observePolygon reads what CheckPolygon compares.
func (r *runner) observePolygon(ctx context.Context, outcomes []PolygonOutcome) (PolygonObservation, error) {
	e := r.polygon.evm
	obs := PolygonObservation{Ops: outcomes, Addresses: map[string]AddressView{}, Staked: map[string]*big.Int{},
		Receipts: map[string]ReceiptView{}, UnbondShares: map[string]*big.Int{}, Dropped: r.faults.Signatures(FaultPolygonDropped)}
	for _, a := range e.Stakers[:r.cfg.PolygonStakers] {
		now, err := r.readAddress(ctx, a)
		if err != nil {
			return obs, err
		}
		v := r.polygon.before[a.Hex()]
		v.NonceAfter, v.ETHAfter, v.POLAfter = now.NonceBefore, now.ETHBefore, now.POLBefore
		obs.Addresses[a.Hex()] = v
		for _, val := range e.Deployment.Validators {
			amount, _, err := e.Deployment.TotalStake(ctx, val.Share, a)
			if err != nil {
				return obs, fmt.Errorf("chaos: stake of %s with %s: %w", a, val.Share, err)
			}
			obs.Staked[a.Hex()+"/"+val.Share.Hex()] = amount
		}
	}
	hashes := append([]string(nil), obs.Dropped...)
	for _, o := range outcomes {
		for _, res := range []*wfpolygon.Result{o.Delegate, o.Unstake} {
			if res == nil {
				continue
			}
			for _, t := range res.Transactions {
				hashes = append(hashes, t.TxID)
			}
		}
		if o.Unstake != nil {
			u, err := e.Deployment.Unbond(ctx, common.HexToAddress(o.Share), common.HexToAddress(o.Staker), o.Unstake.UnbondNonce)
			if err != nil {
				return obs, fmt.Errorf("chaos: unbond %d of %s: %w", o.Unstake.UnbondNonce, o.Staker, err)
			}
			obs.UnbondShares[o.Spec.UnstakeID] = u.Shares
		}
	}
	for _, h := range hashes {
		if _, done := obs.Receipts[h]; done {
			continue
		}
		rc, err := r.receipt(ctx, common.HexToHash(h))
		if err != nil {
			return obs, err
		}
		obs.Receipts[h] = rc
	}
	return obs, nil
}

// receipt reads a transaction and its receipt; Found is false when the chain has neither.
func (r *runner) receipt(ctx context.Context, h common.Hash) (ReceiptView, error) {
	c := r.polygon.evm.Node.Client()
	tx, _, err := c.TransactionByHash(ctx, h)
	if err != nil {
		if strings.Contains(err.Error(), "not found") {
			return ReceiptView{}, nil
		}
		return ReceiptView{}, fmt.Errorf("chaos: transaction %s: %w", h, err)
	}
	rc, err := c.TransactionReceipt(ctx, h)
	if err != nil {
		if strings.Contains(err.Error(), "not found") {
			return ReceiptView{}, nil
		}
		return ReceiptView{}, fmt.Errorf("chaos: receipt of %s: %w", h, err)
	}
	from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx)
	if err != nil {
		return ReceiptView{}, fmt.Errorf("chaos: sender of %s: %w", h, err)
	}
	return ReceiptView{Found: true, From: from.Hex(), Nonce: tx.Nonce(), Status: rc.Status,
		Fee: new(big.Int).Mul(new(big.Int).SetUint64(rc.GasUsed), rc.EffectiveGasPrice)}, nil
}

// finishPolygon checks the Polygon operations against the chain and fills the report's Polygon
// figures.
func (r *runner) finishPolygon(ctx context.Context, rep *Report) error {
	obs, err := r.observePolygon(ctx, r.polygonOutcomes)
	if err != nil {
		return err
	}
	rep.Violations = append(rep.Violations, CheckPolygon(obs)...)
	rep.PolygonDroppedThenLanded = PolygonRecoveries(obs)
	rep.PolygonDropped = len(obs.Dropped)
	rep.PolygonLostAnswers = r.faults.Get(sandbox.EndpointPolygonSend, FaultLostResponse)
	for _, o := range r.polygonOutcomes {
		rep.PolygonOps++
		if o.State == StateCompleted {
			rep.PolygonCompleted++
		}
		for _, res := range []*wfpolygon.Result{o.Delegate, o.Unstake} {
			if res != nil {
				rep.PolygonTransactions += len(res.Transactions)
			}
		}
	}
	r.polygon.mu.Lock()
	rep.PolygonCheckpoints = r.polygon.advances
	r.polygon.mu.Unlock()
	return nil
}
