package chaos

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/workflows"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// Operation states at the end of a run.
const (
	StateCompleted  = "completed"
	StateFailed     = "failed"
	StateRunning    = "running"
	StateNotStarted = "not-started"
)

// OpOutcome is what became of one planned operation.
type OpOutcome struct {
	Spec OpSpec
	// ExpectedVote is the vote account the stake asked for (empty: the service chose).
	ExpectedVote string
	// State is the end state of the whole operation (both workflows of a chain).
	State string
	// FailedType is the failure's application error type (or another short cause) when State is
	// StateFailed; Failure its message.
	FailedType string
	Failure    string
	// Stake and Unstake are the workflows' results once completed.
	Stake   *wfsolana.Result
	Unstake *wfsolana.Result
}

// AccountView is a stake account as the chain shows it at the end of the run.
type AccountView struct {
	Exists     bool
	Lamports   uint64
	Staker     string
	Withdrawer string
	Voter      string
}

// Observation is everything the checker compares: the operations' outcomes, and the chain.
type Observation struct {
	Ops []OpOutcome
	// Landed is every transaction that landed during the run (airdrops included; they are skipped).
	Landed []solanart.LedgerEntry
	// Balances maps each staker address to its balance at the end.
	Balances map[string]uint64
	// Accounts maps each stake account the operations reported to its state at the end.
	Accounts map[string]AccountView
	// Built is every stake account the service built a transaction for, with its state at the end.
	Built []sandbox.LedgerStakeAccount
	// Dropped maps each signature the service answered as sent without submitting it to the
	// operation (workflow ID) that sent it ("" when not found).
	Dropped map[string]string
	// Refused lists the signatures whose re-send the service refused after their first send
	// landed with its answer lost.
	Refused []string
}

// Violation is one broken guarantee.
type Violation struct {
	// Op is the operation ID concerned ("" for the run as a whole).
	Op   string
	What string
}

func (v Violation) String() string {
	if v.Op == "" {
		return v.What
	}
	return v.Op + ": " + v.What
}

// Check compares the operations with the chain: every operation completed; each stake created
// exactly one stake account with exactly the lamports asked, delegated as asked; each chain
// deactivated and withdrew once and closed its stake account; every transaction a staker paid for
// is one an operation reported, each landed exactly once; every staker's balance is exactly its
// funding minus what it staked (when the stake stays) minus 5000 lamports per transaction.
func Check(o Observation) []Violation {
	var out []Violation
	add := func(op, format string, args ...any) {
		out = append(out, Violation{Op: op, What: fmt.Sprintf(format, args...)})
	}

	byStaker := map[string][]string{}
	for _, e := range o.Landed {
		if e.Airdrop {
			continue
		}
		byStaker[e.FeePayer.String()] = append(byStaker[e.FeePayer.String()], e.Signature.String())
	}
	builtBy := map[string][]sandbox.LedgerStakeAccount{}
	for _, b := range o.Built {
		builtBy[b.Staker] = append(builtBy[b.Staker], b)
	}
	stakers := map[string]bool{}

	for _, op := range o.Ops {
		id := op.Spec.StakeID
		staker := op.Spec.Staker.String()
		stakers[staker] = true
		switch op.State {
		case StateCompleted:
		case StateFailed:
			add(id, "failed (%s): %s", op.FailedType, op.Failure)
		case StateRunning:
			add(id, "still running at the end of the run")
		default:
			add(id, "lost: never started")
		}
		var reported []string
		if op.Stake != nil {
			reported = append(reported, sigs(op.Stake)...)
			checkStakeResult(op, add)
		}
		if op.Unstake != nil {
			reported = append(reported, sigs(op.Unstake)...)
			checkUnstakeResult(op, add)
		}

		landed := byStaker[staker]
		if !slices.Equal(landed, reported) {
			add(id, "transactions paid by staker %s on chain %v, operations reported %v", staker, landed, reported)
		}
		if op.State != StateCompleted {
			continue
		}

		// The stake accounts of this staker that hold lamports now.
		var live []string
		for _, b := range builtBy[staker] {
			if b.Exists {
				live = append(live, b.Address)
			}
		}
		acct := o.Accounts[op.Stake.StakeAccount]
		fees := FeePerSignature * uint64(len(reported))
		want := op.Spec.Funding - fees
		switch op.Spec.Kind {
		case KindStake:
			want -= op.Spec.Lamports
			if !slices.Equal(live, []string{op.Stake.StakeAccount}) {
				add(id, "stake accounts of staker %s holding lamports: %v, want exactly the reported %s", staker, live, op.Stake.StakeAccount)
			}
			switch {
			case !acct.Exists:
				add(id, "stake account %s does not exist", op.Stake.StakeAccount)
			case acct.Lamports != op.Spec.Lamports:
				add(id, "stake account %s holds %d lamports, asked %d", op.Stake.StakeAccount, acct.Lamports, op.Spec.Lamports)
			case acct.Staker != staker || acct.Withdrawer != staker:
				add(id, "stake account %s authorities %s/%s, want the staker %s", op.Stake.StakeAccount, acct.Staker, acct.Withdrawer, staker)
			case acct.Voter != op.Stake.VoteAccount:
				add(id, "stake account %s delegated to %s, the operation reported %s", op.Stake.StakeAccount, acct.Voter, op.Stake.VoteAccount)
			}
		case KindChain:
			if len(live) != 0 {
				add(id, "stake accounts of staker %s still hold lamports after the withdraw: %v", staker, live)
			}
			if acct.Exists {
				add(id, "stake account %s still exists after the full withdraw (%d lamports)", op.Stake.StakeAccount, acct.Lamports)
			}
		}
		if got, ok := o.Balances[staker]; !ok {
			add(id, "no balance read for staker %s", staker)
		} else if got != want {
			add(id, "staker %s balance %d lamports, want %d (funded %d, %d transactions)", staker, got, want, op.Spec.Funding, len(reported))
		}
	}

	var strangers []string
	for payer, list := range byStaker {
		if !stakers[payer] {
			strangers = append(strangers, fmt.Sprintf("%s paid by %s", strings.Join(list, ","), payer))
		}
	}
	sort.Strings(strangers)
	for _, s := range strangers {
		add("", "transaction landed that no operation of the run accounts for: %s", s)
	}
	return out
}

func checkStakeResult(op OpOutcome, add func(op, format string, args ...any)) {
	id, r := op.Spec.StakeID, op.Stake
	if len(r.Transactions) != 1 || r.Transactions[0].Kind != string(actsolana.OpStake) {
		add(id, "stake reported transactions %v, want one stake", kinds(r))
	}
	if r.Lamports != op.Spec.Lamports {
		add(id, "stake reported %d lamports, asked %d", r.Lamports, op.Spec.Lamports)
	}
	if r.StakeAccount == "" {
		add(id, "stake reported no stake account")
	}
	if op.ExpectedVote != "" && r.VoteAccount != op.ExpectedVote {
		add(id, "stake delegated to %s, asked %s", r.VoteAccount, op.ExpectedVote)
	}
}

func checkUnstakeResult(op OpOutcome, add func(op, format string, args ...any)) {
	id, r := op.Spec.UnstakeID, op.Unstake
	want := []string{string(actsolana.OpUnstake), string(actsolana.OpWithdraw)}
	if !slices.Equal(kinds(r), want) {
		add(id, "unstake reported transactions %v, want %v", kinds(r), want)
	}
	if r.Lamports != op.Spec.Lamports {
		add(id, "unstake withdrew %d lamports, the stake held %d", r.Lamports, op.Spec.Lamports)
	}
	if op.Stake != nil && r.StakeAccount != op.Stake.StakeAccount {
		add(id, "unstake acted on %s, the stake created %s", r.StakeAccount, op.Stake.StakeAccount)
	}
}

func sigs(r *wfsolana.Result) []string {
	out := make([]string, 0, len(r.Transactions))
	for _, t := range r.Transactions {
		out = append(out, t.TxID)
	}
	return out
}

func kinds(r *wfsolana.Result) []string {
	out := make([]string, 0, len(r.Transactions))
	for _, t := range r.Transactions {
		out = append(out, t.Kind)
	}
	return out
}

// Recoveries counts the recovery paths an observation shows taken to the end.
type Recoveries struct {
	// RebuiltAfterExpiry counts the dropped transactions that never landed while the operation
	// that sent them completed with a transaction built more than once, another signature, that
	// landed exactly once: built again after the dropped one was proven expired.
	RebuiltAfterExpiry int
	// RefusedThenDone counts the signatures whose re-send was refused that a completed operation
	// reported as its own, landed exactly once.
	RefusedThenDone int
}

// CountRecoveries counts the recovery paths o shows taken to the end. It says nothing of
// violations: Check does.
func CountRecoveries(o Observation) Recoveries {
	landed := map[string]int{}
	for _, e := range o.Landed {
		if !e.Airdrop {
			landed[e.Signature.String()]++
		}
	}
	var rec Recoveries
	for sig, id := range o.Dropped {
		if id == "" || landed[sig] != 0 {
			continue
		}
		for _, op := range o.Ops {
			if op.State != StateCompleted {
				continue
			}
			var res *wfsolana.Result
			switch id {
			case op.Spec.StakeID:
				res = op.Stake
			case op.Spec.UnstakeID:
				res = op.Unstake
			}
			if res != nil && slices.ContainsFunc(res.Transactions, func(t workflows.TxRecord) bool {
				return t.Builds > 1 && t.TxID != sig && landed[t.TxID] == 1
			}) {
				rec.RebuiltAfterExpiry++
			}
		}
	}
	done := map[string]bool{}
	for _, op := range o.Ops {
		if op.State != StateCompleted {
			continue
		}
		for _, res := range []*wfsolana.Result{op.Stake, op.Unstake} {
			if res != nil {
				for _, t := range res.Transactions {
					done[t.TxID] = true
				}
			}
		}
	}
	for _, sig := range o.Refused {
		if done[sig] && landed[sig] == 1 {
			rec.RefusedThenDone++
		}
	}
	return rec
}
