//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/hsmkeys"
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/internal/worker"
	hyperliquidmod "github.com/stakeflow/stakeflow/modules/hyperliquid"
	solanamod "github.com/stakeflow/stakeflow/modules/solana"
	wfeigenlayer "github.com/stakeflow/stakeflow/workflows/eigenlayer"
	wfhyperliquid "github.com/stakeflow/stakeflow/workflows/hyperliquid"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
)

// The PINs of the stack's SoftHSM2 token and the wrong one a test gives: canaries the secrets
// scan (TestZZNoSecretInHistoriesOrLogs) looks for in every history and log line.
const (
	hsmPIN      = "hsm-pin-canary-5e1f0c27d4"
	hsmWrongPIN = "hsm-wrong-pin-canary-9b3d71"
)

// hsmPrefix is the task-queue prefix of the worker whose keys are all in the token.
const hsmPrefix = "stakeflow-hsm"

var (
	hsmOnce   sync.Once
	hsmToken  *hsmkeys.Token
	hsmErr    error
	hsmStop   func()
	hsmHealth string
)

// hsmLogger writes into the log lines every test shares (and the secrets scan reads).
func hsmLogger(name string) *zap.Logger {
	return zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), logs, zapcore.DebugLevel)).Named(name)
}

// hsmWorker starts, once for every test of the package, a second worker on the shared stack
// whose every chain signs with keys in the stack's SoftHSM2 token (Options.HSM), polling the task
// queues of hsmPrefix; it waits until the worker is ready and returns its token, whose Signs
// counts the signatures made in it. The worker stops after the package's tests (stopHSMWorker).
func hsmWorker(t *testing.T) *hsmkeys.Token {
	t.Helper()
	hsmOnce.Do(func() {
		cfg, err := st.HSMWorkerConfig(hsmPrefix)
		if err != nil {
			hsmErr = err
			return
		}
		cfg.Identity = "hsm-worker"
		// The token is opened here and handed to the worker, so that the tests count its signatures.
		if hsmToken, err = hsmkeys.Open(cfg.PKCS11, hsmLogger("pkcs11")); err != nil {
			hsmErr = err
			return
		}
		cfg.HSM = hsmToken
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			hsmErr = err
			return
		}
		cfg.HealthListener = ln
		hsmHealth = "http://" + ln.Addr().String()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- worker.Run(ctx, cfg, hsmLogger("hsm-worker")) }()
		hsmStop = func() {
			cancel()
			<-done
			_ = hsmToken.Close()
		}
	})
	require.NoError(t, hsmErr)
	body := readyBody(t, hsmHealth)
	for _, m := range []string{"solana", "evm", "celestia", "hyperliquid"} {
		require.Contains(t, body, "module "+m+" (task queue "+hsmPrefix+"-"+m+"): ready")
	}
	return hsmToken
}

// stopHSMWorker stops the worker hsmWorker started, if it did.
func stopHSMWorker() {
	if hsmStop != nil {
		hsmStop()
	}
}

// hsmStarter runs the admin tool against the HSM worker's task queues.
func hsmStarter(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return starterRun(t, append(args, "--task-queue-prefix", hsmPrefix)...)
}

// requireSentBy checks that each EVM transaction landed, succeeded, and was signed by from.
func requireSentBy(t *testing.T, from common.Address, hashes ...string) {
	t.Helper()
	ctx := context.Background()
	for _, h := range hashes {
		tx, pending, err := st.EVM.Node.Client().TransactionByHash(ctx, common.HexToHash(h))
		require.NoError(t, err, h)
		require.False(t, pending, h)
		sender, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx)
		require.NoError(t, err, h)
		assert.Equal(t, from, sender, "%s is signed by the token's key", h)
		paidFee(t, h) // succeeded
	}
}

// TestHSMEveryChainSignsInTheToken runs one full operation per chain through the worker whose
// keys are all in the stack's SoftHSM2 token, end to end on the local stack: a Solana stake, a
// Polygon delegate, a Celestia delegate, a Hyperliquid withdrawal and an EigenLayer checkpoint.
// Each lands and the chain or ledger verified its signatures: each transaction's signer is the
// token's key of that chain, and the token made signatures.
func TestHSMEveryChainSignsInTheToken(t *testing.T) {
	tok := hsmWorker(t)
	h := st.HSM
	before := tok.Signs()
	t.Run("group", func(t *testing.T) {
		t.Run("SolanaStake", func(t *testing.T) {
			t.Parallel()
			staker := h.Solana[0]
			out, err := hsmStarter(t, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", "2",
				"--id", operationID(t, "hsm-stake"), "--wait", "--json")
			require.NoError(t, err, out)
			res := decodeResult(t, out)
			require.NotEmpty(t, res.Transactions)
			// The runtime verified the signature; the fee payer, the staker, is the token's key.
			assert.Equal(t, []string{res.Transactions[0].TxID}, landedBy(t, staker))
			acct, err := chain.StakeAccount(context.Background(), res.StakeAccount)
			require.NoError(t, err)
			assert.Equal(t, 2*sol, acct.Lamports, "the stake account holds the stake")
		})
		t.Run("PolygonDelegate", func(t *testing.T) {
			t.Parallel()
			staker, share := h.EVM[0], st.EVM.Deployment.Validators[0].Share
			out, err := hsmStarter(t, "polygon", "delegate", "--network", stack.EVMNetwork, "--staker", staker.Hex(),
				"--validator-share", share.Hex(), "--pol", "100", "--id", operationID(t, "hsm-polygon-delegate"), "--wait", "--json")
			require.NoError(t, err, out)
			var res wfpolygon.Result
			require.NoError(t, json.Unmarshal([]byte(out), &res), out)
			require.Len(t, res.Transactions, 2, "approve and delegate")
			requireSentBy(t, staker, res.Transactions[0].TxID, res.Transactions[1].TxID)
			staked, _, err := st.EVM.Deployment.TotalStake(context.Background(), share, staker)
			require.NoError(t, err)
			assert.Equal(t, pol(100).String(), staked.String())
		})
		t.Run("CelestiaDelegate", func(t *testing.T) {
			t.Parallel()
			delegator, validator := h.Celestia[0], sandbox.CelestiaValidators[0]
			out, err := hsmStarter(t, "celestia", "delegate", "--network", stack.CelestiaNetwork, "--delegator", delegator,
				"--validator", validator, "--utia", "2500", "--id", operationID(t, "hsm-celestia-delegate"), "--wait", "--json")
			require.NoError(t, err, out)
			res := decodeCelestia(t, out)
			require.Len(t, res.Transactions, 1, out)
			state := celestiaOf(t, delegator)
			assert.Equal(t, "2500", state.delegations[validator], "the ledger holds the delegation")
			// The ledger verified the signature against the key's public key: it names the signer.
			assert.Equal(t, []string{res.Transactions[0].TxID}, state.txs)
		})
		t.Run("HyperliquidWithdraw", func(t *testing.T) {
			t.Parallel()
			delegator := h.Hyperliquid[0]
			st.Sandbox.HyperliquidFund("testnet", delegator, 10*hype)
			id := operationID(t, "hsm-hyperliquid-withdraw")
			out, err := hsmStarter(t, "hyperliquid", "withdraw", "--network", "testnet", "--delegator", delegator.Hex(), "--amount", "2.5", "--id", id)
			require.NoError(t, err, out)
			waitStep(t, id, wfhyperliquid.StepWaitingWithdrawal)
			// The exchange took the action: it recovered the token's key's address from its signature.
			acct := st.Sandbox.HyperliquidAccount("testnet", delegator)
			require.Len(t, acct.Pending, 1)
			assert.Equal(t, 1, acct.Submitted)
			st.Sandbox.HyperliquidWarp("testnet", sandbox.HyperliquidQueue("testnet"))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var res wfhyperliquid.WithdrawResult
			require.NoError(t, st.Client.GetWorkflow(ctx, id, "").Get(ctx, &res))
			assert.Equal(t, "250000000", res.SpotAfter, "spot rose by exactly the amount")
			assert.Equal(t, 25*hype/10, st.Sandbox.HyperliquidAccount("testnet", delegator).Spot)
		})
		t.Run("EigenLayerCheckpoint", func(t *testing.T) {
			t.Parallel()
			owner := h.EVM[1]
			pod, shares := eigenPod(t, owner, 3)
			out, err := hsmStarter(t, "eigenlayer", "checkpoint", "--network", stack.EVMNetwork, "--owner", owner.Hex(), "--wait", "--json")
			require.NoError(t, err, out)
			var res wfeigenlayer.Result
			require.NoError(t, json.Unmarshal([]byte(out), &res), out)
			require.NotEmpty(t, res.Transactions)
			var hashes []string
			for _, tx := range res.Transactions {
				hashes = append(hashes, tx.TxID)
			}
			requireSentBy(t, owner, hashes...)
			creditedOnce(t, pod, shares, 3, res.CheckpointTimestamp)
		})
	})
	assert.Greater(t, tok.Signs(), before+5, "every chain's signatures were made in the token")
}

// TestHSMRefusedTransactionNeverReachesTheToken: a stake the service lies about (another vote
// account) is refused by the verifier, and the token is never asked to sign: its sign count does
// not move, and nothing from the staker lands.
func TestHSMRefusedTransactionNeverReachesTheToken(t *testing.T) {
	tok := hsmWorker(t)
	staker := st.HSM.Solana[1]
	before := tok.Signs()
	hostile(t, sandbox.HostileOtherVoteAccount)
	id := operationID(t, "hsm-stake")
	out, err := hsmStarter(t, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", "2", "--id", id)
	require.NoError(t, err, out)
	refusedToSign(t, id, "vote account")
	assert.Equal(t, before, tok.Signs(), "no C_Sign for a transaction that failed verification")
	assert.Empty(t, landedBy(t, staker))
}

// TestHSMWrongPINKeepsTheWorkerUnready: a cmd/worker process whose PIN file holds a PIN the
// token refuses starts, unready: /readyz names the token and the PIN file for each chain whose
// keys are in it, never the PIN, and nothing in its log shows the PIN. Once the file holds the
// right PIN, the worker logs in on its backoff and becomes ready. (A process of its own: PKCS#11
// logs in per application, and this test process is already logged in to the token.)
func TestHSMWrongPINKeepsTheWorkerUnready(t *testing.T) {
	hsmWorker(t) // the token's keys exist and are funded
	dir := t.TempDir()
	bin := filepath.Join(dir, "worker")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/stakeflow/stakeflow/cmd/worker").CombinedOutput()
	require.NoError(t, err, "building cmd/worker: %s", out)
	pinFile := filepath.Join(dir, "pin")
	require.NoError(t, os.WriteFile(pinFile, []byte(hsmWrongPIN+"\n"), 0o600))
	cfg, err := st.HSMWorkerConfig("stakeflow-hsm-wrong-pin")
	require.NoError(t, err)
	sol, _ := module.Find[*solanamod.Module](cfg.Modules)
	hl, _ := module.Find[*hyperliquidmod.Module](cfg.Modules)
	port := freePort(t)
	// SOFTHSM2_CONF, set by the stack in this process, is the child's too.
	w := &workerProcess{bin: bin, log: filepath.Join(dir, "worker.log"), args: []string{
		"--temporal-address", st.TemporalAddress(), "--namespace", "default", "--task-queue-prefix", "stakeflow-hsm-wrong-pin",
		"--service-url", cfg.ServiceURL, "--service-token-file", cfg.ServiceTokenFile,
		"--pkcs11-module", cfg.PKCS11.Module, "--pkcs11-token", cfg.PKCS11.Token, "--pkcs11-pin-file", pinFile,
		"--solana-hsm-keys", sol.HSMKeys.String(), "--solana-rpc", sol.RPC.String(), "--solana-genesis", sol.Genesis.String(),
		"--hyperliquid-hsm-keys", hl.HSMKeys.String(), "--hyperliquid-api", hl.API.String(),
		"--ton=false", "--jobs=false", "--health-addr", "127.0.0.1:" + strconv.Itoa(port),
		"--data-dir", filepath.Join(dir, "data"), "--log-format", "json", "--stop-timeout", "5s",
	}}
	w.start(t)
	t.Cleanup(func() {
		w.kill()
		// The secrets scan reads this worker's log lines too.
		raw, err := os.ReadFile(w.log)
		require.NoError(t, err)
		_, _ = logs.Write(raw)
	})
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	reason := `PKCS#11 token "` + st.HSM.Token.Label + `" refused the PIN in ` + pinFile
	var body string
	unready := assert.EventuallyWithT(t, func(c *assert.CollectT) {
		resp, err := http.Get(base + "/readyz")
		if !assert.NoError(c, err) {
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		assert.Equal(c, http.StatusServiceUnavailable, resp.StatusCode)
		for _, m := range []string{"solana", "hyperliquid"} {
			assert.Contains(c, body, m+": "+reason)
		}
	}, 2*time.Minute, 100*time.Millisecond)
	if !unready {
		t.Fatalf("the worker did not report the refused PIN; its log: %s", w.tail())
	}
	assert.NotContains(t, body, hsmWrongPIN)
	assert.NotContains(t, body, hsmPIN)

	require.NoError(t, os.WriteFile(pinFile, []byte(hsmPIN+"\n"), 0o600))
	body = readyBody(t, base)
	assert.Contains(t, body, "module solana (task queue stakeflow-hsm-wrong-pin-solana): ready")
	assert.Contains(t, body, "module hyperliquid (task queue stakeflow-hsm-wrong-pin-hyperliquid): ready")
	// The whole log, not its tail: the refusal is logged first, and the lines the worker logs
	// as it starts can push it out of any fixed window.
	raw, err := os.ReadFile(w.log)
	require.NoError(t, err)
	log := string(raw)
	refused, loggedIn := strings.Index(log, "PKCS#11 token refused the PIN"), strings.Index(log, "PKCS#11 token logged in")
	require.GreaterOrEqual(t, refused, 0, "the refusal is logged: %s", log)
	require.GreaterOrEqual(t, loggedIn, 0, "the login is logged: %s", log)
	assert.Less(t, refused, loggedIn, "the refusal comes before the login")
	assert.NotContains(t, log, hsmWrongPIN)
	assert.NotContains(t, log, hsmPIN)
}

// TestHSMUnknownKeyRefusedAtStart: a worker naming a key label the token does not hold does not
// start; the error names the setting and the label.
func TestHSMUnknownKeyRefusedAtStart(t *testing.T) {
	hsmWorker(t)
	cfg, err := st.HSMWorkerConfig("stakeflow-hsm-unknown-key")
	require.NoError(t, err)
	sol, ok := module.Find[*solanamod.Module](cfg.Modules)
	require.True(t, ok)
	sol.HSMKeys = cli.StringList{st.HSM.SolanaLabels[0], "no-such-key"}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cfg.HealthListener = ln
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = worker.Run(ctx, cfg, hsmLogger("hsm-unknown-key"))
	require.Error(t, err)
	assert.False(t, errors.Is(err, context.DeadlineExceeded), "refused at start: %v", err)
	assert.Contains(t, err.Error(), "--solana-hsm-keys")
	assert.Contains(t, err.Error(), `"no-such-key"`)
	assert.NotContains(t, err.Error(), hsmPIN)
}
