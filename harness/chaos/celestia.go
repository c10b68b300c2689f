package chaos

import (
	"context"
	"fmt"
	"math/big"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/sandbox/celestiachain"
	"github.com/stakeflow/stakeflow/harness/stack"
	wfcelestia "github.com/stakeflow/stakeflow/workflows/celestia"
)

// celestiaDelegators is how many delegators the Celestia operations share: operations of one
// delegator go one at a time through its sequence lease.
const celestiaDelegators = 3

// celestiaRun is the Celestia side of a run: the sandbox's mocha-4 ledger, the delegators' keys.
type celestiaRun struct {
	ledger     *celestiachain.Ledger
	keyDir     string
	passFile   string
	delegators []string
	outcomes   []CelestiaOutcome
}

// CelestiaOutcome is how one Celestia delegate ended.
type CelestiaOutcome struct {
	ID         string
	Delegator  string
	Validator  string
	Amount     int64
	State      string
	FailedType string
	Failure    string
	Result     *wfcelestia.Result
}

// setUpCelestia writes and funds the delegators' keys on the sandbox's ledger.
func (r *runner) setUpCelestia() error {
	c := &celestiaRun{ledger: r.sb.CelestiaLedger(stack.CelestiaNetwork),
		keyDir: filepath.Join(r.cfg.Dir, "celestia-keys"), passFile: filepath.Join(r.cfg.Dir, "celestia-passphrase")}
	var err error
	if c.delegators, err = stack.WriteCelestiaKeys(c.keyDir, c.passFile, celestiaDelegators); err != nil {
		return fmt.Errorf("chaos: writing the Celestia keys: %w", err)
	}
	for _, d := range c.delegators {
		if err := c.ledger.Fund(d, big.NewInt(1_000_000_000)); err != nil {
			return err
		}
	}
	r.celestia = c
	return nil
}

// celestiaArgs are the worker's Celestia flags.
func (r *runner) celestiaArgs() []string {
	return []string{
		"--celestia-rest", stack.CelestiaNetwork + "=" + r.sb.CelestiaREST(stack.CelestiaNetwork),
		"--celestia-keys", r.celestia.keyDir, "--celestia-passphrase-file", r.celestia.passFile,
		"--celestia-validators", strings.Join(sandbox.CelestiaValidators, ","), "--celestia-replace-after", "3s",
	}
}

// runCelestiaOps runs the Celestia delegates beside the Solana ones, spread over the run (so that
// worker kills land among them), delegate i of delegator i mod 3 to validator i mod 3.
func (r *runner) runCelestiaOps(ctx context.Context) {
	c := r.celestia
	n := r.cfg.CelestiaOps
	c.outcomes = make([]CelestiaOutcome, n)
	var wg sync.WaitGroup
	for i := range n {
		r.awaitProgress(ctx, float64(i)/float64(2*n))
		out := CelestiaOutcome{ID: fmt.Sprintf("chaos-%d-celestia-delegate-%d", r.cfg.Seed, i),
			Delegator: c.delegators[i%len(c.delegators)], Validator: sandbox.CelestiaValidators[i%len(sandbox.CelestiaValidators)],
			Amount: int64(1_000_000 + i), State: StateNotStarted}
		if ctx.Err() != nil {
			c.outcomes[i] = out
			continue
		}
		wg.Go(func() {
			in := wfcelestia.Input{Network: stack.CelestiaNetwork, Delegator: out.Delegator, Validator: out.Validator,
				Amount: strconv.FormatInt(out.Amount, 10), RequestedBy: "chaos"}
			if r.start(ctx, wfcelestia.Module, out.ID, wfcelestia.Summary(wfcelestia.OpDelegate, in), wfcelestia.DelegateWorkflowType, in) {
				var res wfcelestia.Result
				if r.awaitResult(ctx, out.ID, &res, &out.State, &out.FailedType, &out.Failure) {
					out.State, out.Result = StateCompleted, &res
				}
			}
			c.outcomes[i] = out
		})
	}
	wg.Wait()
}

// CheckCelestia holds the ledger to the delegates: every one completed; each delegator's
// delegations are exactly the sum of its delegates, per validator; each delegate landed one
// transaction, the one its result names.
func CheckCelestia(outcomes []CelestiaOutcome, snap celestiachain.Snapshot, signers map[string]string) []Violation {
	var vs []Violation
	want := map[[2]string]int64{}
	txs := map[string]int{}
	for _, o := range outcomes {
		if o.State != StateCompleted {
			vs = append(vs, Violation{Op: o.ID, What: fmt.Sprintf("celestia delegate did not complete (%s: %s %s)", o.State, o.FailedType, o.Failure)})
			continue
		}
		want[[2]string{o.Delegator, o.Validator}] += o.Amount
		txs[o.Delegator]++
		if len(o.Result.Transactions) != 1 || signers[o.Result.Transactions[0].TxID] != o.Delegator {
			vs = append(vs, Violation{Op: o.ID, What: "celestia delegate's transaction is not on the ledger as its delegator's"})
		}
	}
	got := map[[2]string]int64{}
	for _, d := range snap.Delegations {
		v, _ := strconv.ParseInt(d.Amount, 10, 64)
		got[[2]string{d.Delegator, d.Validator}] = v
	}
	keys := make([][2]string, 0, len(want)+len(got))
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	for _, k := range keys {
		if want[k] != got[k] {
			vs = append(vs, Violation{What: fmt.Sprintf("celestia: %s holds %d utia delegated to %s, its completed delegates %d", k[0], got[k], k[1], want[k])})
		}
	}
	landed := map[string]int{}
	for _, s := range signers {
		landed[s]++
	}
	for d, n := range txs {
		if landed[d] != n {
			vs = append(vs, Violation{What: fmt.Sprintf("celestia: %d transactions of %s landed for %d completed delegates", landed[d], d, n)})
		}
	}
	return vs
}

// finishCelestia checks the Celestia delegates against the ledger and fills the report.
func (r *runner) finishCelestia(rep *Report) {
	c := r.celestia
	snap := c.ledger.Snapshot()
	signers := map[string]string{}
	for _, h := range snap.Transactions {
		if res, ok := c.ledger.Tx(h); ok {
			signers[h] = res.Signer
		}
	}
	rep.Violations = append(rep.Violations, CheckCelestia(c.outcomes, snap, signers)...)
	for _, o := range c.outcomes {
		rep.CelestiaOps++
		if o.State == StateCompleted {
			rep.CelestiaCompleted++
		}
	}
	rep.CelestiaTransactions = len(snap.Transactions)
}

// celestiaOptions is the sandbox's Celestia configuration for a run with ops Celestia operations.
func celestiaOptions(ops int) *sandbox.CelestiaOptions {
	if ops == 0 {
		return nil
	}
	return &sandbox.CelestiaOptions{}
}
