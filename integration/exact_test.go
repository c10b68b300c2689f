//go:build integration

package integration

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/activities"
	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/internal/worker"
	solanamod "github.com/stakeflow/stakeflow/modules/solana"
	"github.com/stakeflow/stakeflow/workflows"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// balance reads the staker's lamports from the runtime.
func balance(t *testing.T, addr solana.PublicKey) uint64 {
	t.Helper()
	b, err := chain.Balance(context.Background(), addr.String())
	require.NoError(t, err)
	return b
}

// failedWith waits for the operation and returns its application error, checking its type.
func failedWith(t *testing.T, id, typ string) *temporal.ApplicationError {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := st.Client.GetWorkflow(ctx, id, "").Get(ctx, nil)
	require.Error(t, err)
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "got %v", err)
	require.Equal(t, typ, appErr.Type(), "got %v", err)
	return appErr
}

// TestHostileCostsRefusedNothingLanded: a service that makes a stake or an unstake pay a priority
// fee far above the cap, lists a written account read-only (certain to fail, fee paid), or locks
// the new stake account up (even with the staker as custodian) is refused before signing; nothing
// from the staker lands and its balance is unchanged to the lamport.
func TestHostileCostsRefusedNothingLanded(t *testing.T) {
	for i, tc := range []struct {
		mode     sandbox.HostileMode
		mentions string
	}{
		{sandbox.HostileMode("fee-heavy"), "fee"},
		{sandbox.HostileMode("readonly-writable"), "read-only"},
		{sandbox.HostileMode("lockup"), "lockup"},
	} {
		t.Run("stake/"+string(tc.mode), func(t *testing.T) {
			staker := st.Stakers[10+i]
			before := balance(t, staker)
			hostile(t, tc.mode)
			id := operationID(t, "stake")
			if i == 0 {
				recordAs(id, "StakeWorkflow-failed-verification")
			}
			out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", "2", "--id", id)
			require.NoError(t, err, out)
			refusedToSign(t, id, tc.mentions)
			require.Empty(t, landedBy(t, staker), "nothing signed by the staker may land")
			require.Equal(t, before, balance(t, staker), "the staker's balance is unchanged to the lamport")
		})
	}
	t.Run("unstake", func(t *testing.T) {
		staker := st.Stakers[13]
		staked := stakeActive(t, staker, "2")
		before := balance(t, staker)
		for _, tc := range []struct {
			mode     sandbox.HostileMode
			mentions string
		}{
			{sandbox.HostileMode("fee-heavy"), "fee"},
			{sandbox.HostileMode("readonly-writable"), "read-only"},
		} {
			t.Run(string(tc.mode), func(t *testing.T) {
				hostile(t, tc.mode)
				id := operationID(t, "unstake")
				out, err := starterRun(t, "unstake", "--network", "testnet", "--staker", staker.String(), "--stake-account", staked.StakeAccount, "--id", id)
				require.NoError(t, err, out)
				refusedToSign(t, id, tc.mentions)
			})
		}
		require.Equal(t, []string{staked.Transactions[0].TxID}, landedBy(t, staker), "only the stake landed")
		require.Equal(t, before, balance(t, staker), "the staker's balance is unchanged to the lamport")
	})
}

// TestReplayedTransactionRefusedAsNotNew: the service serves again, byte for byte, the stake that
// landed for an earlier operation. Signed again it is the same transaction; the chain knows its
// signature (and its stake account), so the new operation fails before any broadcast instead of
// reporting the earlier operation's stake as its own.
func TestReplayedTransactionRefusedAsNotNew(t *testing.T) {
	staker := st.Stakers[14]
	first := operationID(t, "stake")
	out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", "2", "--id", first, "--wait", "--json")
	require.NoError(t, err, out)
	staked := decodeResult(t, out)
	before := balance(t, staker)

	hostile(t, sandbox.HostileMode("replay"))
	id := operationID(t, "stake")
	recordAs(id, "StakeWorkflow-failed-not-new")
	out, err = starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", "2", "--id", id)
	require.NoError(t, err, out)
	appErr := failedWith(t, id, activities.ErrStaleTransaction)
	require.True(t, appErr.NonRetryable())
	require.Contains(t, appErr.Error(), staked.Transactions[0].TxID, "the error names the transaction the chain already has")
	require.Equal(t, []string{staked.Transactions[0].TxID}, landedBy(t, staker), "nothing new landed")
	require.Equal(t, before, balance(t, staker), "the staker's balance is unchanged to the lamport")
	status := queryStatus(t, id)
	require.Empty(t, status.Transactions, "the earlier operation's transaction is not reported as this one's")
}

// TestServiceChosenValidatorCheckedOnOwnRPC: with no vote account named, the service picks one.
// A delinquent one (which the service's own status endpoint calls active) is refused by the
// worker's RPC; one off the worker's allow-list is refused by the policy. Nothing lands.
func TestServiceChosenValidatorCheckedOnOwnRPC(t *testing.T) {
	for i, tc := range []struct {
		mode sandbox.HostileMode
		typ  string
	}{
		{sandbox.HostileMode("delinquent-validator"), activities.ErrValidatorNotHealthy},
		{sandbox.HostileMode("unlisted-validator"), activities.ErrVerificationFailed},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			staker := st.Stakers[15+i]
			before := balance(t, staker)
			hostile(t, tc.mode)
			id := operationID(t, "stake")
			out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", "2", "--id", id)
			require.NoError(t, err, out)
			failedWith(t, id, tc.typ)
			require.Empty(t, landedBy(t, staker))
			require.Equal(t, before, balance(t, staker))
		})
	}
}

// queryStatus reads an operation's status through the admin tool's client.
func queryStatus(t *testing.T, id string) workflows.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := st.Client.QueryWorkflow(ctx, id, "", workflows.QueryStatus)
	require.NoError(t, err)
	var s workflows.Status
	require.NoError(t, v.Get(&s))
	return s
}

// TestWrongNetworkRPCKeepsWorkerUnready: a worker whose RPC serves another genesis than the one it
// is configured to expect never becomes ready, and says why.
func TestWrongNetworkRPCKeepsWorkerUnready(t *testing.T) {
	cfg := st.WorkerConfig()
	// No override: the public clusters' genesis hashes apply, while the RPC is the local runtime.
	sol, ok := module.Find[*solanamod.Module](cfg.Modules)
	require.True(t, ok)
	sol.Genesis = nil
	// Its own task queues, so that it takes no work from the stack's worker.
	cfg.Temporal.TaskQueuePrefix = "stakeflow-wrong-network"
	// Its health server serves on a socket bound here and handed over (Run closes it).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cfg.HealthListener = ln
	cfg.HealthAddr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- worker.Run(ctx, cfg, zap.NewNop()) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})

	var body string
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		resp, err := http.Get("http://" + cfg.HealthAddr + "/readyz")
		if !assert.NoError(c, err) {
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		assert.Equal(c, http.StatusServiceUnavailable, resp.StatusCode)
		// Once the check has run (until then the reason is "not checked yet"), the reason names
		// the genesis the RPC served.
		assert.Contains(c, body, st.Sandbox.Runtime().GenesisHash().String(), "the reason names the genesis the RPC served")
	}, time.Minute, 100*time.Millisecond)
	require.Contains(t, body, "genesis")

	// The stack's worker, on the same RPC with the runtime's own genesis configured, is ready.
	resp, err := http.Get(st.HealthURL() + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestTokenRotatedMidRunChangesNothing: the service's token is rotated while an unstake waits for
// deactivation; the worker reads the new token from its file and the operation completes.
func TestTokenRotatedMidRunChangesNothing(t *testing.T) {
	ctx := context.Background()
	staker := st.Stakers[18]
	staked := stakeActive(t, staker, "2")
	id := operationID(t, "unstake")
	out, err := starterRun(t, "unstake", "--network", "testnet", "--staker", staker.String(), "--stake-account", staked.StakeAccount, "--id", id)
	require.NoError(t, err, out)
	waitStep(t, id, wfsolana.StepWaitingDeactivation)

	old, err := os.ReadFile(st.TokenFile)
	require.NoError(t, err)
	tok, err := st.Sandbox.RotateToken("stakeflow-worker", 0)
	require.NoError(t, err)
	t.Cleanup(func() {
		// Later tests use the file's token: keep it valid.
		tok, err := st.Sandbox.RotateToken("stakeflow-worker", 0)
		require.NoError(t, err)
		require.NoError(t, writeFileAtomic(st.TokenFile, []byte(tok)))
	})
	require.NotEqual(t, string(old), tok)
	require.NoError(t, writeFileAtomic(st.TokenFile, []byte(tok)))
	require.NoError(t, st.Sandbox.Runtime().WarpEpochs(ctx, 1))

	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var res wfsolana.Result
	require.NoError(t, st.Client.GetWorkflow(wctx, id, "").Get(wctx, &res))
	require.Len(t, res.Transactions, 2)
	require.Equal(t, string(actsolana.OpWithdraw), res.Transactions[1].Kind)
	require.Len(t, landedBy(t, staker), 3, "stake, deactivate, withdraw: each once")
}

// TestRefusedRebroadcastAfterLostAnswerEndsDone: the first broadcast lands but its answer is lost;
// the re-send of the same bytes is refused with an error that does not say "already processed".
// The earlier send may have landed, so the chain decides: the operation ends done, with exactly one
// transaction from the staker.
func TestRefusedRebroadcastAfterLostAnswerEndsDone(t *testing.T) {
	staker := st.Stakers[19]
	require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{BroadcastLoseThenRefuse: sandbox.LostResponse{Next: 1}}))
	t.Cleanup(func() { require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{})) })
	id := operationID(t, "stake")
	out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", "2", "--id", id, "--wait", "--json")
	require.NoError(t, err, out)
	res := decodeResult(t, out)
	require.Len(t, res.Transactions, 1)
	require.Equal(t, []string{res.Transactions[0].TxID}, landedBy(t, staker), "exactly one transaction, the one reported")
	acct, err := chain.StakeAccount(context.Background(), res.StakeAccount)
	require.NoError(t, err)
	require.Equal(t, 2*sol, acct.Lamports)
}

// writeFileAtomic replaces path with data through a rename, as a secret manager would.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// TestDroppedTransactionRebuiltOnlyAfterProvenExpiry: the service says it sent the stake, but the
// transaction never reaches the chain. The worker builds a second one only once the chain proves
// the first cannot land (blockhash expired, signature absent, the margin passed), and exactly one
// stake lands.
func TestDroppedTransactionRebuiltOnlyAfterProvenExpiry(t *testing.T) {
	ctx := context.Background()
	staker := st.Stakers[20]
	require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{BroadcastDropped: sandbox.LostResponse{Next: 1}}))
	t.Cleanup(func() { require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{})) })
	id := operationID(t, "stake")
	recordAs(id, "StakeWorkflow-rebuilt-after-expiry")
	out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", "2", "--id", id)
	require.NoError(t, err, out)
	waitStep(t, id, workflows.StepConfirming)
	first := queryStatus(t, id)
	require.Len(t, first.Attempts, 1)
	require.Empty(t, landedBy(t, staker), "the first transaction was dropped")
	// Past the blockhash's validity and the expiry margin (two blockhash lifetimes).
	require.NoError(t, st.Sandbox.Runtime().AdvanceSlots(ctx, 2*actsolana.DefaultExpiryMarginBlocks))

	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var res wfsolana.Result
	require.NoError(t, st.Client.GetWorkflow(wctx, id, "").Get(wctx, &res))
	require.Len(t, res.Transactions, 1)
	require.Equal(t, 2, res.Transactions[0].Builds)
	require.NotEqual(t, first.Attempts[0].TxID, res.Transactions[0].TxID)
	require.Equal(t, []string{res.Transactions[0].TxID}, landedBy(t, staker), "exactly one stake landed, the second build")
	status := queryStatus(t, id)
	require.Len(t, status.Attempts, 2)
	require.Equal(t, activities.OutcomeCannotLand, status.Attempts[0].Outcome)
	acct, err := chain.StakeAccount(ctx, res.StakeAccount)
	require.NoError(t, err)
	require.Equal(t, 2*sol, acct.Lamports)
}

// TestUnstakeOfLockedUpAccountRefused: a stake account locked up far in the future (made here by
// signing the lockup transaction by hand, which stakeflow would refuse) cannot be unstaken and
// withdrawn; the unstake is refused before anything is signed, naming the lockup.
func TestUnstakeOfLockedUpAccountRefused(t *testing.T) {
	ctx := context.Background()
	staker := st.Stakers[21]
	key, err := solana.PrivateKeyFromSolanaKeygenFile(filepath.Join(st.KeyDir, staker.String()+".json"))
	require.NoError(t, err)
	svc, err := apiclient.New(st.Sandbox.URL(), apiclient.WithTokenFile(st.TokenFile))
	require.NoError(t, err)
	hostile(t, sandbox.HostileLockup)
	built, err := svc.Stake(ctx, apiclient.StakeRequest{Chain: "solana", Network: "testnet", StakerAddress: staker.String(), Amount: "2000000000"})
	require.NoError(t, err)
	tx, err := solana.TransactionFromBase64(built.UnsignedTransactionData)
	require.NoError(t, err)
	_, err = tx.Sign(func(pk solana.PublicKey) *solana.PrivateKey {
		if pk == staker {
			return &key
		}
		return nil
	})
	require.NoError(t, err)
	sig, err := st.Sandbox.Runtime().RPC().SendTransaction(ctx, tx)
	require.NoError(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		s, err := chain.SignatureStatus(ctx, sig.String())
		assert.NoError(c, err)
		assert.True(c, s.Finalized())
	}, time.Minute, 100*time.Millisecond)
	// The new stake account is the first account of the first stake instruction (Initialize).
	var stakeAccount string
	for _, in := range tx.Message.Instructions {
		if tx.Message.AccountKeys[in.ProgramIDIndex] == solana.StakeProgramID {
			stakeAccount = tx.Message.AccountKeys[in.Accounts[0]].String()
			break
		}
	}
	acct, err := chain.StakeAccount(ctx, stakeAccount)
	require.NoError(t, err)
	require.NotZero(t, acct.Meta.Lockup.UnixTimestamp, "the account is locked up on chain")
	hostile(t, sandbox.HostileNone)

	landed := landedBy(t, staker)
	id := operationID(t, "unstake")
	out, err := starterRun(t, "unstake", "--network", "testnet", "--staker", staker.String(), "--stake-account", stakeAccount, "--id", id)
	require.NoError(t, err, out)
	appErr := failedWith(t, id, activities.ErrStakeAccountState)
	require.Contains(t, appErr.Error(), "locked up until unix time")
	require.Contains(t, appErr.Error(), "nothing was signed")
	require.Equal(t, landed, landedBy(t, staker), "nothing more from the staker landed")
}

// TestCancelWhileConfirmingEndsOnlyOnceTheTransactionCannotLand: a cancel that arrives while a
// sent transaction is being confirmed does not stop the confirmation; the transaction (dropped by
// the service) is proven expired, and only then the operation ends cancelled, with nothing landed
// and nothing rebuilt.
func TestCancelWhileConfirmingEndsOnlyOnceTheTransactionCannotLand(t *testing.T) {
	ctx := context.Background()
	staker := st.Stakers[22]
	require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{BroadcastDropped: sandbox.LostResponse{Next: 1}}))
	t.Cleanup(func() { require.NoError(t, st.Sandbox.SetFaults(sandbox.FaultConfig{})) })
	id := operationID(t, "stake")
	recordAs(id, "StakeWorkflow-cancelled-confirming-expired")
	out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", "2", "--id", id)
	require.NoError(t, err, out)
	waitStep(t, id, workflows.StepConfirming)
	out, err = starterRun(t, "cancel", "--id", id)
	require.NoError(t, err, out)
	require.Equal(t, workflows.StepConfirming, queryStatus(t, id).Step, "the confirmation goes on after the cancel")
	require.NoError(t, st.Sandbox.Runtime().AdvanceSlots(ctx, 2*actsolana.DefaultExpiryMarginBlocks))

	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	err = st.Client.GetWorkflow(wctx, id, "").Get(wctx, nil)
	var canceled *temporal.CanceledError
	require.True(t, errors.As(err, &canceled), "got %v", err)
	var why string
	require.NoError(t, canceled.Details(&why))
	require.Contains(t, why, "expired without landing")
	status := queryStatus(t, id)
	require.Equal(t, workflows.StepCancelled, status.Step)
	require.Len(t, status.Attempts, 1, "nothing rebuilt after the cancel")
	require.Equal(t, activities.OutcomeCannotLand, status.Attempts[0].Outcome)
	require.Empty(t, landedBy(t, staker))
}
