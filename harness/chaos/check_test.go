package chaos

import (
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/require"

	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/store"
	"github.com/stakeflow/stakeflow/workflows"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// world is a consistent end state of two operations: a stake that stays, and a chain.
type world struct {
	obs       Observation
	stake     OpSpec
	chain     OpSpec
	stakeAcct string
	chainAcct string
	vote      string
}

func newSig(t *testing.T) solana.Signature {
	t.Helper()
	var s solana.Signature
	copy(s[:], solana.NewWallet().PublicKey().Bytes())
	copy(s[32:], solana.NewWallet().PublicKey().Bytes())
	return s
}

func cleanWorld(t *testing.T) *world {
	t.Helper()
	ops := PlanOps(9, 2, 0)
	w := &world{stake: ops[0], chain: ops[1], vote: solana.NewWallet().PublicKey().String()}
	w.chain.Kind = KindChain
	w.chain.UnstakeID = "chaos-9-0001-unstake"
	w.stakeAcct = solana.NewWallet().PublicKey().String()
	w.chainAcct = solana.NewWallet().PublicKey().String()

	s1, c1, c2, c3 := newSig(t), newSig(t), newSig(t), newSig(t)
	entry := func(payer solana.PublicKey, sig solana.Signature) solanart.LedgerEntry {
		return solanart.LedgerEntry{Signature: sig, FeePayer: payer}
	}
	faucet := solana.NewWallet().PublicKey()
	w.obs = Observation{
		Ops: []OpOutcome{
			{Spec: w.stake, State: StateCompleted, ExpectedVote: w.vote, Stake: &wfsolana.Result{
				Lamports: w.stake.Lamports, StakeAccount: w.stakeAcct, VoteAccount: w.vote,
				Transactions: []workflows.TxRecord{{Kind: string(actsolana.OpStake), TxID: s1.String(), Builds: 1}}}},
			{Spec: w.chain, State: StateCompleted,
				Stake: &wfsolana.Result{Lamports: w.chain.Lamports, StakeAccount: w.chainAcct, VoteAccount: w.vote,
					Transactions: []workflows.TxRecord{{Kind: string(actsolana.OpStake), TxID: c1.String(), Builds: 2}}},
				Unstake: &wfsolana.Result{Lamports: w.chain.Lamports, StakeAccount: w.chainAcct,
					Transactions: []workflows.TxRecord{
						{Kind: string(actsolana.OpUnstake), TxID: c2.String(), Builds: 1},
						{Kind: string(actsolana.OpWithdraw), TxID: c3.String(), Builds: 1}}}},
		},
		Landed: []solanart.LedgerEntry{
			{Signature: newSig(t), FeePayer: faucet, Airdrop: true},
			entry(w.stake.Staker, s1), entry(w.chain.Staker, c1), entry(w.chain.Staker, c2), entry(w.chain.Staker, c3),
		},
		Balances: map[string]uint64{
			w.stake.Staker.String(): w.stake.Funding - w.stake.Lamports - FeePerSignature,
			w.chain.Staker.String(): w.chain.Funding - 3*FeePerSignature,
		},
		Accounts: map[string]AccountView{
			w.stakeAcct: {Exists: true, Lamports: w.stake.Lamports, Staker: w.stake.Staker.String(), Withdrawer: w.stake.Staker.String(), Voter: w.vote},
			w.chainAcct: {},
		},
		Built: []sandbox.LedgerStakeAccount{
			{Address: w.stakeAcct, Staker: w.stake.Staker.String(), Exists: true, Lamports: w.stake.Lamports},
			// A first build of the chain's stake that expired: never funded.
			{Address: solana.NewWallet().PublicKey().String(), Staker: w.chain.Staker.String()},
			{Address: w.chainAcct, Staker: w.chain.Staker.String()},
		},
	}
	return w
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(t *testing.T, w *world)
		// want are substrings of the violations expected, in order; none for a clean world.
		want []string
	}{
		{name: "clean run", break_: func(*testing.T, *world) {}},
		{
			name: "second stake landed for the same operation",
			break_: func(t *testing.T, w *world) {
				second := solana.NewWallet().PublicKey().String()
				w.obs.Landed = append(w.obs.Landed, solanart.LedgerEntry{Signature: newSig(t), FeePayer: w.stake.Staker})
				w.obs.Built = append(w.obs.Built, sandbox.LedgerStakeAccount{Address: second, Staker: w.stake.Staker.String(), Exists: true})
				w.obs.Balances[w.stake.Staker.String()] -= w.stake.Lamports + FeePerSignature
			},
			want: []string{"transactions paid by staker", "holding lamports", "balance"},
		},
		{
			name: "stake account holds other than asked",
			break_: func(t *testing.T, w *world) {
				a := w.obs.Accounts[w.stakeAcct]
				a.Lamports++
				w.obs.Accounts[w.stakeAcct] = a
			},
			want: []string{"holds"},
		},
		{
			name: "stake delegated elsewhere than reported",
			break_: func(t *testing.T, w *world) {
				a := w.obs.Accounts[w.stakeAcct]
				a.Voter = solana.NewWallet().PublicKey().String()
				w.obs.Accounts[w.stakeAcct] = a
			},
			want: []string{"delegated to"},
		},
		{
			name: "withdraw never landed",
			break_: func(t *testing.T, w *world) {
				w.obs.Landed = w.obs.Landed[:len(w.obs.Landed)-1]
				w.obs.Accounts[w.chainAcct] = AccountView{Exists: true, Lamports: w.chain.Lamports}
				w.obs.Built[2].Exists = true
				w.obs.Balances[w.chain.Staker.String()] = w.chain.Funding - w.chain.Lamports - 2*FeePerSignature
			},
			want: []string{"transactions paid by staker", "still hold lamports", "still exists", "balance"},
		},
		{
			name: "balance off by one fee",
			break_: func(t *testing.T, w *world) {
				w.obs.Balances[w.chain.Staker.String()] -= FeePerSignature
			},
			want: []string{"balance"},
		},
		{
			name: "operation failed",
			break_: func(t *testing.T, w *world) {
				w.obs.Ops[1].State, w.obs.Ops[1].FailedType, w.obs.Ops[1].Failure = StateFailed, workflows.ErrTooManyBuilds, "3 builds"
				w.obs.Ops[1].Unstake = nil
				w.obs.Landed = w.obs.Landed[:3]
			},
			want: []string{"failed (TooManyBuilds)"},
		},
		{
			name: "operation still running",
			break_: func(t *testing.T, w *world) {
				w.obs.Ops[0].State, w.obs.Ops[0].Stake = StateRunning, nil
				w.obs.Landed = append(w.obs.Landed[:1], w.obs.Landed[2:]...)
			},
			want: []string{"still running"},
		},
		{
			name: "operation never started",
			break_: func(t *testing.T, w *world) {
				w.obs.Ops[0].State, w.obs.Ops[0].Stake = StateNotStarted, nil
				w.obs.Landed = append(w.obs.Landed[:1], w.obs.Landed[2:]...)
			},
			want: []string{"lost"},
		},
		{
			name: "transaction from a stranger",
			break_: func(t *testing.T, w *world) {
				w.obs.Landed = append(w.obs.Landed, solanart.LedgerEntry{Signature: newSig(t), FeePayer: solana.NewWallet().PublicKey()})
			},
			want: []string{"no operation of the run accounts for"},
		},
		{
			name: "unstake reported without withdraw",
			break_: func(t *testing.T, w *world) {
				u := *w.obs.Ops[1].Unstake
				u.Transactions = u.Transactions[:1]
				w.obs.Ops[1].Unstake = &u
			},
			want: []string{"unstake reported transactions", "transactions paid by staker", "balance"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := cleanWorld(t)
			tt.break_(t, w)
			got := Check(w.obs)
			require.Len(t, got, len(tt.want), "violations: %v", got)
			for i, v := range got {
				require.True(t, strings.Contains(v.What, tt.want[i]), "violation %d = %q, want it to mention %q", i, v.What, tt.want[i])
			}
		})
	}
}

// recoveryWorld is the clean world with a dropped first build of the chain's stake (never
// landed; the stake reports its second build) and a refused re-send of the lone stake's
// transaction (landed once, reported).
func recoveryWorld(t *testing.T) (*world, string) {
	w := cleanWorld(t)
	dropped := newSig(t).String()
	w.obs.Dropped = map[string]string{dropped: w.chain.StakeID}
	w.obs.Refused = []string{w.obs.Ops[0].Stake.Transactions[0].TxID}
	return w, dropped
}

func TestCountRecoveries(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(t *testing.T, w *world, dropped string)
		want  Recoveries
		clean bool
	}{
		{name: "both paths taken to the end", edit: func(*testing.T, *world, string) {}, want: Recoveries{RebuiltAfterExpiry: 1, RefusedThenDone: 1}, clean: true},
		{
			name: "the dropped transaction landed after all",
			edit: func(_ *testing.T, w *world, dropped string) {
				w.obs.Landed = append(w.obs.Landed, solanart.LedgerEntry{Signature: solana.MustSignatureFromBase58(dropped), FeePayer: w.chain.Staker})
			},
			want: Recoveries{RefusedThenDone: 1},
		},
		{
			name: "the dropped transaction's operation not found",
			edit: func(_ *testing.T, w *world, dropped string) { w.obs.Dropped[dropped] = "" },
			want: Recoveries{RefusedThenDone: 1}, clean: true,
		},
		{
			name: "the operation built its transaction once",
			edit: func(_ *testing.T, w *world, _ string) {
				s := *w.obs.Ops[1].Stake
				s.Transactions = []workflows.TxRecord{s.Transactions[0]}
				s.Transactions[0].Builds = 1
				w.obs.Ops[1].Stake = &s
			},
			want: Recoveries{RefusedThenDone: 1}, clean: true,
		},
		{
			name: "dropped on the unstake, rebuilt",
			edit: func(_ *testing.T, w *world, dropped string) {
				w.obs.Dropped[dropped] = w.chain.UnstakeID
				u := *w.obs.Ops[1].Unstake
				u.Transactions = append([]workflows.TxRecord(nil), u.Transactions...)
				u.Transactions[1].Builds = 2
				w.obs.Ops[1].Unstake = &u
			},
			want: Recoveries{RebuiltAfterExpiry: 1, RefusedThenDone: 1}, clean: true,
		},
		{
			name: "the refused transaction's operation did not complete",
			edit: func(_ *testing.T, w *world, _ string) { w.obs.Ops[0].State = StateRunning },
			want: Recoveries{RebuiltAfterExpiry: 1},
		},
		{
			name: "the refused transaction never landed",
			edit: func(t *testing.T, w *world, _ string) { w.obs.Refused = []string{newSig(t).String()} },
			want: Recoveries{RebuiltAfterExpiry: 1}, clean: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, dropped := recoveryWorld(t)
			tt.edit(t, w, dropped)
			require.Equal(t, tt.want, CountRecoveries(w.obs))
			if tt.clean {
				require.Empty(t, Check(w.obs), "dropped and refused transactions are no violation in themselves")
			}
		})
	}
}

// TestExpectedEvents: each workflow that completed owes a completed event, the one that failed a
// failed event; a workflow never started owes none.
func TestExpectedEvents(t *testing.T) {
	done := &wfsolana.Result{}
	ops := []OpOutcome{
		{Spec: OpSpec{Kind: KindChain, StakeID: "s1", UnstakeID: "u1"}, State: StateCompleted, Stake: done, Unstake: done},
		{Spec: OpSpec{Kind: KindChain, StakeID: "s2", UnstakeID: "u2"}, State: StateFailed, Stake: done},
		{Spec: OpSpec{Kind: KindChain, StakeID: "s3", UnstakeID: "u3"}, State: StateFailed},
		{Spec: OpSpec{StakeID: "s4"}, State: StateNotStarted},
	}
	pol := []PolygonOutcome{{Spec: PolygonOpSpec{DelegateID: "d1"}, State: StateCompleted, Delegate: &wfpolygon.Result{}}}
	require.Equal(t, []string{"d1/completed", "s1/completed", "s2/completed", "s3/failed", "u1/completed", "u2/failed"},
		expectedEvents(ops, pol))
}

// TestCompareAPY: the data job's store must hold each served period once, with the served APY.
func TestCompareAPY(t *testing.T) {
	want := map[int64]string{1: "0.051", 2: "0.052", 3: "0.053"}
	rows := []store.APY{{Period: 1, NetworkAPY: "0.051"}, {Period: 2, NetworkAPY: "0.052"}, {Period: 3, NetworkAPY: "0.053"}}
	require.Empty(t, compareAPY("job", want, rows))
	bad := []store.APY{{Period: 1, NetworkAPY: "0.051"}, {Period: 1, NetworkAPY: "0.051"}, {Period: 2, NetworkAPY: "0.0520001"}, {Period: 9, NetworkAPY: "1"}}
	var got []string
	for _, v := range compareAPY("job", want, bad) {
		got = append(got, v.String())
	}
	require.Equal(t, []string{
		"job: period 1 stored twice",
		"job: period 2: stored APY 0.0520001, served 0.052",
		"job: period 9 stored, not served",
		"job: period 3 served, not stored",
	}, got)
}
