package chaos

import (
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/workflows"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
)

func TestPlanPolygonIsSeededAndSharesAddresses(t *testing.T) {
	a, b := PlanPolygon(7, 12, 3, 2), PlanPolygon(7, 12, 3, 2)
	require.Equal(t, a, b, "the same seed gives the same plan")
	assert.NotEqual(t, a, PlanPolygon(8, 12, 3, 2))
	kinds := map[Kind]int{}
	perStaker := map[int]int{}
	for _, op := range a {
		kinds[op.Kind]++
		perStaker[op.Staker]++
		assert.True(t, op.Wei.Cmp(polWei) >= 0 && op.Wei.Cmp(new(big.Int).Mul(big.NewInt(21), polWei)) < 0, "%s wei", op.Wei)
		if op.Kind == KindPolygonChain {
			assert.Equal(t, new(big.Int).Div(op.Wei, big.NewInt(2)), op.UnstakeWei)
			assert.NotEmpty(t, op.UnstakeID)
		}
	}
	assert.Positive(t, kinds[KindPolygonDelegate])
	assert.Positive(t, kinds[KindPolygonChain])
	assert.Equal(t, map[int]int{0: 4, 1: 4, 2: 4}, perStaker, "operations share the addresses")
}

const (
	addrA  = "0x00000000000000000000000000000000000000aA"
	shareX = "0x00000000000000000000000000000000000000Cc"
)

// goodPolygon is a run whose chain matches its operations: a delegate of 5 POL and a chain of
// 4 POL unstaking 2, four plus two transactions from one address, nonces 10..15.
func goodPolygon() PolygonObservation {
	five, four, two := pol(5), pol(4), pol(2)
	tx := func(kind, hash string) workflows.TxRecord {
		return workflows.TxRecord{Kind: kind, TxID: hash, Fee: "100"}
	}
	del := PolygonOutcome{Spec: PolygonOpSpec{Kind: KindPolygonDelegate, DelegateID: "d1", Wei: five}, Staker: addrA, Share: shareX,
		State: StateCompleted, Delegate: &wfpolygon.Result{Amount: five.String(), Transactions: []workflows.TxRecord{tx("approve", "0x01"), tx("delegate", "0x02")}}}
	chain := PolygonOutcome{Spec: PolygonOpSpec{Kind: KindPolygonChain, DelegateID: "d2", UnstakeID: "u2", Wei: four, UnstakeWei: two},
		Staker: addrA, Share: shareX, State: StateCompleted,
		Delegate: &wfpolygon.Result{Amount: four.String(), Transactions: []workflows.TxRecord{tx("approve", "0x03"), tx("delegate", "0x04")}},
		Unstake:  &wfpolygon.Result{Amount: two.String(), UnbondNonce: 1, Transactions: []workflows.TxRecord{tx("unstake", "0x05"), tx("claim", "0x06")}}}
	obs := PolygonObservation{
		Ops: []PolygonOutcome{del, chain},
		Addresses: map[string]AddressView{addrA: {NonceBefore: 10, NonceAfter: 16, ETHBefore: big.NewInt(10_000), ETHAfter: big.NewInt(10_000 - 600),
			POLBefore: pol(100), POLAfter: new(big.Int).Sub(pol(100), pol(7))}},
		Staked:       map[string]*big.Int{addrA + "/" + shareX: pol(7)},
		Receipts:     map[string]ReceiptView{},
		UnbondShares: map[string]*big.Int{"u2": new(big.Int)},
		Dropped:      []string{"0x04"},
	}
	for i, h := range []string{"0x01", "0x02", "0x03", "0x04", "0x05", "0x06"} {
		obs.Receipts[h] = ReceiptView{Found: true, From: strings.ToLower(addrA), Nonce: uint64(10 + i), Status: 1, Fee: big.NewInt(100)}
	}
	return obs
}

func pol(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), polWei) }

func TestCheckPolygonPassesAnExactRun(t *testing.T) {
	obs := goodPolygon()
	assert.Empty(t, CheckPolygon(obs))
	assert.Equal(t, 1, PolygonRecoveries(obs), "the dropped delegate was reported and landed")
}

// TestCheckPolygonFindsEachLie: each way the chain can differ from the operations is named.
func TestCheckPolygonFindsEachLie(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(*PolygonObservation)
		want   string
	}{
		"operation not completed":      {func(o *PolygonObservation) { o.Ops[0].State = StateFailed }, "did not complete"},
		"reported transaction missing": {func(o *PolygonObservation) { o.Receipts["0x02"] = ReceiptView{} }, "is not on chain"},
		"reverted": {func(o *PolygonObservation) {
			r := o.Receipts["0x06"]
			r.Status = 0
			o.Receipts["0x06"] = r
		}, "reverted on chain"},
		"sent by someone else": {func(o *PolygonObservation) {
			r := o.Receipts["0x01"]
			r.From = "0x0000000000000000000000000000000000000bad"
			o.Receipts["0x01"] = r
		}, "not the staker"},
		"fee misreported": {func(o *PolygonObservation) { o.Ops[0].Delegate.Transactions[1].Fee = "99" }, "reported fee 99"},
		"one nonce twice": {func(o *PolygonObservation) {
			r := o.Receipts["0x02"]
			r.Nonce = 10
			o.Receipts["0x02"] = r
		}, "nonce 10 of"},
		"a stranger's transaction": {func(o *PolygonObservation) {
			v := o.Addresses[addrA]
			v.NonceAfter++
			o.Addresses[addrA] = v
		}, "sent 7 transactions, the operations reported 6"},
		"gas money off": {func(o *PolygonObservation) {
			o.Addresses[addrA].ETHAfter.Sub(o.Addresses[addrA].ETHAfter, big.NewInt(1))
		}, "gas money"},
		"delegated twice": {func(o *PolygonObservation) { o.Addresses[addrA].POLAfter.Sub(o.Addresses[addrA].POLAfter, pol(5)) }, "POL wei"},
		"stake off":       {func(o *PolygonObservation) { o.Staked[addrA+"/"+shareX] = pol(12) }, "delegated less unstaked"},
		"not claimed":     {func(o *PolygonObservation) { o.UnbondShares["u2"] = big.NewInt(5) }, "not claimed"},
		"a step missing": {func(o *PolygonObservation) {
			o.Ops[1].Unstake.Transactions = o.Ops[1].Unstake.Transactions[:1]
			v := o.Addresses[addrA]
			v.NonceAfter--
			o.Addresses[addrA] = v
		}, "want [unstake claim]"},
		"reported twice": {func(o *PolygonObservation) { o.Ops[1].Delegate.Transactions[0].TxID = "0x01" }, "also reported by"},
	} {
		t.Run(name, func(t *testing.T) {
			obs := goodPolygon()
			tc.mutate(&obs)
			vs := CheckPolygon(obs)
			var all []string
			for _, v := range vs {
				all = append(all, v.String())
			}
			assert.Contains(t, strings.Join(all, "\n"), tc.want)
		})
	}
}
