package metrics_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/internal/metrics"
	"github.com/stakeflow/stakeflow/internal/metrics/metricstest"
	"github.com/stakeflow/stakeflow/internal/metrics/prom"
	"github.com/stakeflow/stakeflow/workflows"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// finalizedChain answers the reads Confirm makes of a transaction finalized at the first look:
// its status and its fee. Any other read panics (the embedded reader is nil).
type finalizedChain struct {
	actsolana.SolanaReader
	fee uint64
}

func (c finalizedChain) SignatureStatus(context.Context, string) (*solchain.SignatureStatus, error) {
	return &solchain.SignatureStatus{Found: true, Slot: 42, ConfirmationStatus: "finalized"}, nil
}

func (c finalizedChain) TransactionFee(context.Context, string) (uint64, error) { return c.fee, nil }

// confirmFee runs the Confirm activity, recording through h, on a transaction of operation op
// that paid fee lamports.
func confirmFee(t *testing.T, h client.MetricsHandler, op actsolana.Operation, fee uint64) {
	t.Helper()
	var ts testsuite.WorkflowTestSuite
	ts.SetMetricsHandler(h)
	env := ts.NewTestActivityEnvironment()
	acts := &actsolana.Activities{Chains: map[string]actsolana.SolanaReader{"testnet": finalizedChain{fee: fee}}}
	env.RegisterActivity(acts)
	_, err := env.ExecuteActivity(acts.Confirm, actsolana.ConfirmInput{Network: "testnet", Operation: op, Signature: "sig-1", RecentBlockhash: "hash-1"})
	require.NoError(t, err)
}

// stalledUnstake mocks an unstake of an inactive stake account (a withdrawal only) whose
// confirmation the RPC refuses once: the operation stalls, then completes.
func stalledUnstake(env *testsuite.TestWorkflowEnvironment) {
	c := &chain{}
	env.OnActivity(a.ReadStakeState, mock.Anything, mock.Anything).Return(actsolana.StakeState{
		StakeAccount: stakeAcc, Lamports: 2_000_000_000, Staker: staker, Withdrawer: staker, Voter: vote,
		State: actsolana.StakeInactive, Deactivating: true, DeactivationEpoch: 700, Epoch: 701,
	}, nil)
	env.OnActivity(a.Sign, mock.Anything, mock.Anything).Return(c.sign)
	env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{},
		temporal.NewNonRetryableApplicationError("solana rpc getSignatureStatuses: 403 Forbidden", activities.ErrChainRejected, nil)).Once()
	env.OnActivity(a.Confirm, mock.Anything, mock.Anything).Return(actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 42}, nil).Once()
}

// TestFeesStallsAndHealthGauges records fees (the Confirm activity), a stall (an unstake workflow)
// and the health gauges through the worker's exporter and reads them back from its /metrics page.
func TestFeesStallsAndHealthGauges(t *testing.T) {
	exp := prom.New(prom.Options{FlushInterval: 5 * time.Millisecond})
	t.Cleanup(func() { _ = exp.Close() })
	h := exp.Handler()
	confirmFee(t, h, actsolana.OpStake, 5000)
	confirmFee(t, h, actsolana.OpStake, 7000)
	confirmFee(t, h, "", 5000)
	run(t, h, wfsolana.UnstakeWorkflow, wfsolana.UnstakeInput{Network: "testnet", Staker: staker, StakeAccount: stakeAcc}, stalledUnstake)
	metrics.SetRPCVerified(h, "solana", "testnet", true)
	metrics.SetRPCVerified(h, "solana", "mainnet-beta", true)
	metrics.SetRPCVerified(h, "solana", "mainnet-beta", false)
	metrics.SetServiceAuthOK(h, false)
	// Nil handlers record nothing and do not panic.
	metrics.SetRPCVerified(nil, "solana", "testnet", true)
	metrics.SetServiceAuthOK(nil, true)

	stake := map[string]string{activities.LabelChain: "solana", activities.LabelNetwork: "testnet", activities.LabelOperation: "stake"}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		rec := httptest.NewRecorder()
		exp.HTTPHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		var parser expfmt.TextParser
		fams, err := parser.TextToMetricFamilies(rec.Body)
		if !assert.NoError(c, err) {
			return
		}
		one := func(name string, labels map[string]string) float64 {
			ms := metricstest.Matching(fams, name, labels)
			if !assert.Len(c, ms, 1, "%s %v", name, labels) {
				return -1
			}
			if ms[0].GetGauge() != nil {
				return ms[0].GetGauge().GetValue()
			}
			return ms[0].GetCounter().GetValue()
		}
		assert.Equal(c, 12000.0, one(activities.MetricFeeLamports, stake))
		assert.Equal(c, 2.0, one(activities.MetricFeeTransactions, stake))
		assert.Equal(c, 5000.0, one(activities.MetricFeeLamports, map[string]string{activities.LabelOperation: "unknown"}))
		assert.Equal(c, 1.0, one(workflows.MetricStalls, map[string]string{activities.LabelOperation: "unstake"}))
		assert.Equal(c, 1.0, one(metrics.RPCVerified, map[string]string{activities.LabelChain: "solana", activities.LabelNetwork: "testnet"}))
		assert.Equal(c, 0.0, one(metrics.RPCVerified, map[string]string{activities.LabelNetwork: "mainnet-beta"}))
		assert.Equal(c, 0.0, one(metrics.ServiceAuthOK, nil))
	}, 10*time.Second, 5*time.Millisecond)
}
