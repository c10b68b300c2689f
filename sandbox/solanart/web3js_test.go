package solanart

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chainsolana "github.com/stakeflow/stakeflow/chain/solana"
)

// The runtime checked by an independent client: @solana/web3.js (testdata/web3js at the
// repository root, the npm project signer/'s golden vectors come from) stakes, deactivates and
// withdraws with its own builders, signing and RPC parsing (lifecycle.mjs), and Go checks each
// step on chain.

// web3jsProject is the npm project of the web3.js checks.
const web3jsProject = "../../testdata/web3js"

// web3jsFiles are the files of web3jsProject that a run needs; they key its install directory.
var web3jsFiles = []string{"package.json", "package-lock.json", "lifecycle.mjs"}

// installWeb3js makes sure cacheDir/web3js-<hash> holds web3jsFiles with their npm dependencies
// installed and returns that directory: install's way (lock, `npm ci` in a temporary directory,
// marker, rename), for a project read from the repository rather than embedded.
func installWeb3js(ctx context.Context, cacheDir string) (string, error) {
	files := make(map[string][]byte, len(web3jsFiles))
	h := sha256.New()
	for _, name := range web3jsFiles {
		b, err := os.ReadFile(filepath.Join(web3jsProject, name))
		if err != nil {
			return "", err
		}
		files[name] = b
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write(b)
		h.Write([]byte{0})
	}
	hash := hex.EncodeToString(h.Sum(nil))[:16]
	final := filepath.Join(cacheDir, "web3js-"+hash)
	installed := func() bool {
		for _, p := range []string{installedMarker, "node_modules/@solana/web3.js/package.json"} {
			if _, err := os.Stat(filepath.Join(final, p)); err != nil {
				return false
			}
		}
		return true
	}
	if installed() {
		return final, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(ctx, final+".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if installed() {
		return final, nil
	}
	if leftovers, err := filepath.Glob(final + ".tmp-*"); err == nil {
		for _, dir := range leftovers {
			_ = os.RemoveAll(dir)
		}
	}
	tmp, err := os.MkdirTemp(cacheDir, "web3js-"+hash+".tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // no-op once renamed
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return "", err
		}
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm not found on PATH: %w", err)
	}
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = tmp
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm ci in %s failed: %w: %s", tmp, err, tail(out.String(), 2000))
	}
	if err := os.WriteFile(filepath.Join(tmp, installedMarker), []byte(hash+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.RemoveAll(final); err != nil {
		return "", err
	}
	return final, os.Rename(tmp, final)
}

// web3jsConfig is the configuration lifecycle.mjs reads on stdin.
type web3jsConfig struct {
	URL              string `json:"url"`
	WSEndpoint       string `json:"wsEndpoint"`
	SecretKey        []int  `json:"secretKey"` // JSON numbers, as Keypair.fromSecretKey takes them
	Vote             string `json:"vote"`
	Seed             string `json:"seed"`
	Lamports         uint64 `json:"lamports"`
	UnitLimit        uint32 `json:"unitLimit"`
	UnitPrice        uint64 `json:"unitPrice"`
	WithdrawLamports uint64 `json:"withdrawLamports"`
}

// web3jsStep is what one run of lifecycle.mjs prints.
type web3jsStep struct {
	Step               string           `json:"step"`
	Staker             solana.PublicKey `json:"staker"`
	Signature          string           `json:"signature"`
	StakeAccount       solana.PublicKey `json:"stakeAccount"`
	Slot               uint64           `json:"slot"`
	ConfirmationStatus string           `json:"confirmationStatus"`
	Epoch              uint64           `json:"epoch"`
	Refused            *struct {
		Error   string   `json:"error"`
		Message string   `json:"message"`
		Logs    []string `json:"logs"`
	} `json:"refused"`
	// stake
	SendAndConfirm struct {
		OK                   bool   `json:"ok"`
		Error                string `json:"error"`
		Message              string `json:"message"`
		BlockHeightAfter     uint64 `json:"blockHeightAfter"`
		LastValidBlockHeight uint64 `json:"lastValidBlockHeight"`
	} `json:"sendAndConfirm"`
	GetTransaction struct {
		OK      bool   `json:"ok"`
		Fee     uint64 `json:"fee"`
		Message string `json:"message"`
	} `json:"getTransaction"`
	StakeAccountLamports uint64           `json:"stakeAccountLamports"`
	StakeAccountOwner    solana.PublicKey `json:"stakeAccountOwner"`
	StakeAccountSpace    int              `json:"stakeAccountSpace"`
	RentExempt           uint64           `json:"rentExempt"`
	// withdraw
	StakeAccountAfter json.RawMessage `json:"stakeAccountAfter"`
	StakerBalance     uint64          `json:"stakerBalance"`

	stderr string
}

// runWeb3js runs one step of lifecycle.mjs in dir and decodes its outcome.
func runWeb3js(t *testing.T, ctx context.Context, dir, step string, cfg web3jsConfig) web3jsStep {
	t.Helper()
	in, err := json.Marshal(cfg)
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, "node", "lifecycle.mjs", step)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node lifecycle.mjs %s: %s", step, stderr.String())
	var out web3jsStep
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out), "step %s printed %q", step, stdout.String())
	require.Equal(t, step, out.Step)
	out.stderr = stderr.String()
	return out
}

// stakeState reads and decodes the stake account.
func stakeState(t *testing.T, ctx context.Context, c *rpc.Client, k solana.PublicKey) *chainsolana.StakeAccount {
	t.Helper()
	info, err := c.GetAccountInfoWithOpts(ctx, k, &rpc.GetAccountInfoOpts{Commitment: rpc.CommitmentConfirmed})
	require.NoError(t, err)
	require.Equal(t, solana.StakeProgramID, info.Value.Owner)
	st, err := chainsolana.DecodeStakeState(info.Value.Data.GetBinary())
	require.NoError(t, err)
	st.Lamports = info.Value.Lamports
	return st
}

// TestWeb3jsInstallIsIdempotent installs into a fresh cache directory (npm ci, from the npm cache
// when warm), then installs again: the same directory, left as it was.
func TestWeb3jsInstallIsIdempotent(t *testing.T) {
	ctx := testContext(t)
	cacheDir := t.TempDir()
	first, err := installWeb3js(ctx, cacheDir)
	require.NoError(t, err)
	for _, name := range append(web3jsFiles, installedMarker, "node_modules/@solana/web3.js/package.json") {
		assert.FileExists(t, filepath.Join(first, name))
	}
	kept := filepath.Join(first, "kept")
	require.NoError(t, os.WriteFile(kept, nil, 0o644))
	second, err := installWeb3js(ctx, cacheDir)
	require.NoError(t, err)
	assert.Equal(t, first, second)
	assert.FileExists(t, kept, "the second install replaced the first")
	leftovers, err := filepath.Glob(filepath.Join(cacheDir, "web3js-*.tmp-*"))
	require.NoError(t, err)
	assert.Empty(t, leftovers)
}

// TestWeb3jsStakeLifecycle: web3.js stakes from a seed, deactivates and withdraws through the
// runtime's JSON-RPC; Go checks the chain after each step, balances to the lamport.
//
// One thing web3.js needs is missing from the runtime today, and the test holds it as it is, so
// that it fails, and must be changed, the day the runtime adds it:
//   - websocket subscriptions: web3.js's confirmTransaction (inside sendAndConfirmTransaction)
//     learns of a signature only by signatureSubscribe over a websocket (its one
//     getSignatureStatuses call waits until that subscription is live). The runtime answers a
//     websocket upgrade with HTTP 405 and has no signatureSubscribe method, so the stake lands but
//     sendAndConfirmTransaction throws TransactionExpiredBlockheightExceededError once the
//     blockhash expires; lifecycle.mjs then confirms by polling getSignatureStatuses itself;
func TestWeb3jsStakeLifecycle(t *testing.T) {
	// Long epochs, moved by WarpEpochs only; blockhashes valid 2 s, so that web3.js's confirmation
	// gives up after about 3 s instead of a minute.
	r := startRuntime(t, Options{SlotsPerEpoch: 2048, FinalizationDepth: 8, BlockhashValidity: 40})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a cold npm ci included
	t.Cleanup(cancel)
	c := r.RPC()

	cacheDir, err := defaultCacheDir()
	require.NoError(t, err)
	dir, err := installWeb3js(ctx, cacheDir)
	require.NoError(t, err)

	const airdrop = 10 * solana.LAMPORTS_PER_SOL
	const delegated = 2 * solana.LAMPORTS_PER_SOL
	const seed = "stake:0"
	const unitLimit, unitPrice = 200_000, 5_000
	const priorityFee = unitLimit * unitPrice / 1_000_000 // exact: 1,000 lamports
	payer := fundedWallet(t, ctx, r, airdrop)
	staker := payer.PublicKey()
	vote := r.VoteAccounts()[0]
	stakeAccount, err := solana.CreateWithSeed(staker, seed, solana.StakeProgramID)
	require.NoError(t, err)
	rent, err := c.GetMinimumBalanceForRentExemption(ctx, stakeAccountSize, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	lamports := rent + delegated

	secret := make([]int, len(payer))
	for i, b := range payer {
		secret[i] = int(b)
	}
	cfg := web3jsConfig{
		URL:              r.URL(),
		WSEndpoint:       "ws" + strings.TrimPrefix(r.URL(), "http"), // the runtime's only port
		SecretKey:        secret,
		Vote:             vote.String(),
		Seed:             seed,
		Lamports:         lamports,
		UnitLimit:        unitLimit,
		UnitPrice:        unitPrice,
		WithdrawLamports: lamports,
	}

	// Stake: compute budget + StakeProgram.createAccountWithSeed + StakeProgram.delegate, sent
	// with sendAndConfirmTransaction.
	st := runWeb3js(t, ctx, dir, "stake", cfg)
	assert.Equal(t, staker, st.Staker)
	assert.Equal(t, stakeAccount, st.StakeAccount, "web3.js PublicKey.createWithSeed")
	sig := solana.MustSignatureFromBase58(st.Signature)
	assert.Contains(t, []string{"confirmed", "finalized"}, st.ConfirmationStatus)
	assert.Equal(t, lamports, st.StakeAccountLamports)
	assert.Equal(t, solana.StakeProgramID, st.StakeAccountOwner)
	assert.Equal(t, stakeAccountSize, st.StakeAccountSpace)
	assert.Equal(t, rent, st.RentExempt)
	assert.Zero(t, st.Epoch)
	// No websocket: the stake landed, yet web3.js's confirmation waited for the blockhash to
	// expire and threw. With signatureSubscribe served, SendAndConfirm.OK becomes true: change
	// these lines then.
	assert.False(t, st.SendAndConfirm.OK, "sendAndConfirmTransaction confirmed: the runtime now serves signatureSubscribe; update this test")
	assert.Equal(t, "TransactionExpiredBlockheightExceededError", st.SendAndConfirm.Error)
	assert.Equal(t, fmt.Sprintf("Signature %s has expired: block height exceeded.", sig), st.SendAndConfirm.Message)
	assert.Greater(t, st.SendAndConfirm.BlockHeightAfter, st.SendAndConfirm.LastValidBlockHeight)
	assert.Contains(t, st.stderr, "ws error: Unexpected server response: 405")
	// web3.js reads the transaction back with getTransaction (encoding json): the fee checked
	// below.
	require.True(t, st.GetTransaction.OK, "web3.js getTransaction: %s", st.GetTransaction.Message)
	assert.Equal(t, uint64(feePerSignature+priorityFee), st.GetTransaction.Fee)

	// On chain, from Go: landed once, delegated to the vote account from this epoch, the
	// staker's authorities, no lockup; the fee exactly base + priority.
	status, err := c.GetSignatureStatuses(ctx, true, sig)
	require.NoError(t, err)
	require.NotNil(t, status.Value[0])
	assert.Nil(t, status.Value[0].Err)
	assert.Equal(t, st.Slot, status.Value[0].Slot)
	state := stakeState(t, ctx, c, stakeAccount)
	assert.Equal(t, chainsolana.StateStake, state.State)
	assert.Equal(t, lamports, state.Lamports)
	assert.Equal(t, rent, state.Meta.RentExemptReserve)
	assert.Equal(t, staker.String(), state.Meta.Staker)
	assert.Equal(t, staker.String(), state.Meta.Withdrawer)
	assert.Equal(t, chainsolana.Lockup{Custodian: solana.PublicKey{}.String()}, state.Meta.Lockup)
	assert.Equal(t, vote.String(), state.Stake.Delegation.Voter)
	assert.Equal(t, delegated, state.Stake.Delegation.Stake)
	assert.Zero(t, state.Stake.Delegation.ActivationEpoch)
	assert.False(t, state.Stake.Delegation.Deactivated())
	assert.Equal(t, airdrop-lamports-feePerSignature-priorityFee, balance(t, ctx, c, staker))

	// The transaction as web3.js built it: its CreateAccountWithSeed lists two accounts (funding
	// and new; the base is the funding account), which the system program accepts and stakeflow's
	// verifier refuses (signer/vectors_web3js_test.go).
	version := uint64(0)
	got, err := c.GetTransaction(ctx, sig, &rpc.GetTransactionOpts{Encoding: solana.EncodingBase64, Commitment: rpc.CommitmentConfirmed, MaxSupportedTransactionVersion: &version})
	require.NoError(t, err)
	assert.Equal(t, uint64(feePerSignature+priorityFee), got.Meta.Fee)
	tx, err := got.Transaction.GetTransaction()
	require.NoError(t, err)
	programs := []solana.PublicKey{}
	for _, in := range tx.Message.Instructions {
		p := tx.Message.AccountKeys[in.ProgramIDIndex]
		programs = append(programs, p)
		if p == solana.SystemProgramID {
			assert.Len(t, in.Accounts, 2, "web3.js's CreateAccountWithSeed accounts")
		}
	}
	assert.Equal(t, []solana.PublicKey{solana.ComputeBudget, solana.ComputeBudget, solana.SystemProgramID, solana.StakeProgramID, solana.StakeProgramID}, programs)

	// Deactivate, an epoch later: StakeProgram.deactivate, sendRawTransaction, polled.
	require.NoError(t, r.WarpEpochs(ctx, 1))
	de := runWeb3js(t, ctx, dir, "deactivate", cfg)
	require.Nil(t, de.Refused)
	assert.Equal(t, stakeAccount, de.StakeAccount)
	assert.Equal(t, uint64(1), de.Epoch)
	state = stakeState(t, ctx, c, stakeAccount)
	assert.Equal(t, uint64(1), state.Stake.Delegation.DeactivationEpoch)
	assert.Equal(t, delegated, state.Stake.Delegation.Stake)
	before := balance(t, ctx, c, staker)
	assert.Equal(t, airdrop-lamports-2*feePerSignature-priorityFee, before)

	// Withdrawing in the deactivation epoch is refused by the stake program, and web3.js reads
	// the refusal (message and logs) from the runtime's error; nothing changes.
	early := runWeb3js(t, ctx, dir, "withdraw", cfg)
	require.NotNil(t, early.Refused, "withdraw in the deactivation epoch landed")
	assert.Equal(t, "SendTransactionError", early.Refused.Error)
	assert.Equal(t, "Transaction simulation failed: Error processing Instruction 0: insufficient funds for instruction", early.Refused.Message)
	assert.NotEmpty(t, early.Refused.Logs)
	assert.Equal(t, before, balance(t, ctx, c, staker))
	assert.Equal(t, lamports, stakeState(t, ctx, c, stakeAccount).Lamports)

	// Withdraw everything an epoch later: StakeProgram.withdraw; the stake account is gone and
	// the staker is back to the airdrop less four fees' worth (three signatures, one priority).
	require.NoError(t, r.WarpEpochs(ctx, 1))
	wd := runWeb3js(t, ctx, dir, "withdraw", cfg)
	require.Nil(t, wd.Refused)
	assert.Equal(t, "null", string(wd.StakeAccountAfter), "web3.js still sees the stake account")
	want := airdrop - 3*feePerSignature - priorityFee
	assert.Equal(t, uint64(want), wd.StakerBalance)
	assert.Equal(t, uint64(want), balance(t, ctx, c, staker))
	_, err = c.GetAccountInfo(ctx, stakeAccount)
	assert.ErrorIs(t, err, rpc.ErrNotFound)

	// Each of web3.js's transactions is in the ledger once, paid by the staker.
	ledger, err := r.Ledger(ctx)
	require.NoError(t, err)
	seen := map[string]int{}
	for _, e := range ledger {
		if e.FeePayer == staker {
			seen[e.Signature.String()]++
		}
	}
	assert.Equal(t, map[string]int{st.Signature: 1, de.Signature: 1, wd.Signature: 1}, seen)
}

// TestWeb3jsRuntimeHasNoWebsocket pins down, without Node, the two things web3.js's confirmation
// looks for and the runtime lacks: a websocket upgrade on its port and a signatureSubscribe
// method. Both assertions fail, and must be changed, once the runtime serves them.
func TestWeb3jsRuntimeHasNoWebsocket(t *testing.T) {
	r := startRuntime(t, Options{})
	ctx := testContext(t)

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL(), nil)
	require.NoError(t, err)
	for k, v := range map[string]string{
		"Connection": "Upgrade", "Upgrade": "websocket",
		"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
	} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "websocket upgrade: the runtime serves websockets now; update this test")

	var res json.RawMessage
	err = r.call(ctx, &res, "signatureSubscribe", solana.Signature{}.String(), map[string]string{"commitment": "confirmed"})
	assert.ErrorContains(t, err, "Method not found", "signatureSubscribe over HTTP")
}
