//go:build integration

package solanart

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
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
	"github.com/stakeflow/stakeflow/harness/sandbox/npmcache"
)

// The runtime checked by an independent client: @solana/web3.js (testdata/web3js at the
// repository root, the npm project signer/'s golden vectors come from) stakes, deactivates and
// withdraws with its own builders, signing and RPC parsing (lifecycle.mjs), and Go checks each
// step on chain.

// web3jsProject is the npm project of the web3.js checks.
const web3jsProject = "../../../testdata/web3js"

// web3jsFiles are the files a run needs, by name in the install directory: those of
// web3jsProject and this package's own web3.js client (testdata/web3js_confirm.mjs). They key
// the install directory.
var web3jsFiles = []struct{ name, path string }{
	{"package.json", filepath.Join(web3jsProject, "package.json")},
	{"package-lock.json", filepath.Join(web3jsProject, "package-lock.json")},
	{"lifecycle.mjs", filepath.Join(web3jsProject, "lifecycle.mjs")},
	{"confirm.mjs", filepath.Join("testdata", "web3js_confirm.mjs")},
}

// installWeb3js makes sure web3jsFiles are installed with their npm dependencies under cacheDir
// and returns their directory.
func installWeb3js(ctx context.Context, cacheDir string) (string, error) {
	files := make(map[string][]byte, len(web3jsFiles))
	for _, f := range web3jsFiles {
		b, err := os.ReadFile(f.path)
		if err != nil {
			return "", err
		}
		files[f.name] = b
	}
	return npmcache.Install(ctx, cacheDir, npmcache.Project{Name: "web3js", Files: files,
		Require: []string{"node_modules/@solana/web3.js/package.json"}})
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
	// confirm.mjs
	Commitment string `json:"commitment,omitempty"`
	Signature  string `json:"signature,omitempty"`
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
	// confirm.mjs: deactivate and withdraw (sendAndConfirmTransaction's wait), transaction
	MS     int64           `json:"ms"`
	JSON   *web3jsTxJSON   `json:"json"`
	Parsed *web3jsTxParsed `json:"parsed"`

	stderr string
}

// web3jsTxJSON is a transaction as web3.js's getTransaction (encoding json) read it.
type web3jsTxJSON struct {
	Slot            uint64         `json:"slot"`
	Version         any            `json:"version"`
	Fee             uint64         `json:"fee"`
	Err             any            `json:"err"`
	PreBalances     []uint64       `json:"preBalances"`
	PostBalances    []uint64       `json:"postBalances"`
	Signatures      []string       `json:"signatures"`
	AccountKeys     []string       `json:"accountKeys"`
	Header          map[string]int `json:"header"`
	RecentBlockhash string         `json:"recentBlockhash"`
	Instructions    []struct {
		ProgramIDIndex int    `json:"programIdIndex"`
		Accounts       []int  `json:"accounts"`
		Data           string `json:"data"` // hex
	} `json:"instructions"`
}

// web3jsTxParsed is a transaction as web3.js's getParsedTransaction (jsonParsed) read it.
type web3jsTxParsed struct {
	Slot        uint64 `json:"slot"`
	Fee         uint64 `json:"fee"`
	AccountKeys []struct {
		Pubkey   string `json:"pubkey"`
		Signer   bool   `json:"signer"`
		Writable bool   `json:"writable"`
	} `json:"accountKeys"`
	Instructions []struct {
		ProgramID string   `json:"programId"`
		Parsed    bool     `json:"parsed"`
		Accounts  []string `json:"accounts"`
	} `json:"instructions"`
}

// runWeb3js runs one step of lifecycle.mjs in dir and decodes its outcome.
func runWeb3js(t *testing.T, ctx context.Context, dir, step string, cfg web3jsConfig) web3jsStep {
	t.Helper()
	return runWeb3jsScript(t, ctx, dir, "lifecycle.mjs", step, cfg)
}

// runWeb3jsScript runs one step of script (lifecycle.mjs or confirm.mjs) in dir.
func runWeb3jsScript(t *testing.T, ctx context.Context, dir, script, step string, cfg web3jsConfig) web3jsStep {
	t.Helper()
	in, err := json.Marshal(cfg)
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, "node", script, step)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node %s %s: %s", script, step, stderr.String())
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
	// Into a fresh directory: a whole npm ci, which a loaded machine needed more than a minute for.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	cacheDir := t.TempDir()
	first, err := installWeb3js(ctx, cacheDir)
	require.NoError(t, err)
	for _, f := range web3jsFiles {
		assert.FileExists(t, filepath.Join(first, f.name))
	}
	for _, name := range []string{npmcache.Marker, "node_modules/@solana/web3.js/package.json"} {
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
// runtime's JSON-RPC, each transaction sent and confirmed by web3.js's own
// sendAndConfirmTransaction (its confirmation is a websocket signatureSubscribe on the runtime's
// port), and reads its stake back with getTransaction (encoding json) and getParsedTransaction
// (jsonParsed); Go checks the chain after each step, balances to the lamport.
//
// The stake is lifecycle.mjs's; deactivate and withdraw are this package's confirm.mjs
// (lifecycle.mjs sends those with sendRawTransaction and polls).
func TestWeb3jsStakeLifecycle(t *testing.T) {
	// Long epochs, moved by WarpEpochs only; blockhashes valid 2 s, so that a confirmation that
	// never comes fails web3.js's sendAndConfirmTransaction after about 3 s instead of a minute.
	r := startRuntime(t, Options{SlotsPerEpoch: 2048, FinalizationDepth: 8, BlockhashValidity: 40})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a cold npm ci included
	t.Cleanup(cancel)
	c := r.RPC()

	cacheDir, err := npmcache.DefaultCacheDir()
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
	// and confirmed ("confirmed") by sendAndConfirmTransaction.
	st := runWeb3js(t, ctx, dir, "stake", cfg)
	assert.Equal(t, staker, st.Staker)
	assert.Equal(t, stakeAccount, st.StakeAccount, "web3.js PublicKey.createWithSeed")
	sig := solana.MustSignatureFromBase58(st.Signature)
	require.True(t, st.SendAndConfirm.OK, "sendAndConfirmTransaction: %s: %s\n%s", st.SendAndConfirm.Error, st.SendAndConfirm.Message, st.stderr)
	assert.LessOrEqual(t, st.SendAndConfirm.BlockHeightAfter, st.SendAndConfirm.LastValidBlockHeight, "confirmed only after the blockhash expired")
	assert.NotContains(t, st.stderr, "ws error")
	assert.Contains(t, []string{"confirmed", "finalized"}, st.ConfirmationStatus)
	assert.Equal(t, lamports, st.StakeAccountLamports)
	assert.Equal(t, solana.StakeProgramID, st.StakeAccountOwner)
	assert.Equal(t, stakeAccountSize, st.StakeAccountSpace)
	assert.Equal(t, rent, st.RentExempt)
	assert.Zero(t, st.Epoch)
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
	// verifier refuses (signer/vectors_web3js_test.go). Read from Go in base64, it is the
	// reference for what web3.js reads in json and jsonParsed.
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

	// web3.js reads the same transaction in json (getTransaction) and jsonParsed
	// (getParsedTransaction): the same keys, header, blockhash and instructions to the byte,
	// balances before and after (the staker paid the stake and the fee).
	rt := runWeb3jsScript(t, ctx, dir, "confirm.mjs", "transaction", web3jsConfig{URL: cfg.URL, WSEndpoint: cfg.WSEndpoint, SecretKey: secret, Signature: st.Signature})
	require.NotNil(t, rt.JSON)
	j := rt.JSON
	assert.Equal(t, st.Slot, j.Slot)
	assert.Equal(t, "legacy", j.Version)
	assert.Nil(t, j.Err)
	assert.Equal(t, got.Meta.Fee, j.Fee)
	assert.Equal(t, []string{st.Signature}, j.Signatures)
	keys := make([]string, len(tx.Message.AccountKeys))
	for i, k := range tx.Message.AccountKeys {
		keys[i] = k.String()
	}
	assert.Equal(t, keys, j.AccountKeys)
	assert.Equal(t, map[string]int{
		"numRequiredSignatures":       int(tx.Message.Header.NumRequiredSignatures),
		"numReadonlySignedAccounts":   int(tx.Message.Header.NumReadonlySignedAccounts),
		"numReadonlyUnsignedAccounts": int(tx.Message.Header.NumReadonlyUnsignedAccounts),
	}, j.Header)
	assert.Equal(t, tx.Message.RecentBlockhash.String(), j.RecentBlockhash)
	require.Len(t, j.Instructions, len(tx.Message.Instructions))
	for i, in := range tx.Message.Instructions {
		accounts := make([]int, len(in.Accounts))
		for k, a := range in.Accounts {
			accounts[k] = int(a)
		}
		assert.Equal(t, int(in.ProgramIDIndex), j.Instructions[i].ProgramIDIndex, "instruction %d", i)
		assert.Equal(t, accounts, j.Instructions[i].Accounts, "instruction %d", i)
		assert.Equal(t, hex.EncodeToString(in.Data), j.Instructions[i].Data, "instruction %d", i)
	}
	require.Len(t, j.PreBalances, len(keys))
	require.Len(t, j.PostBalances, len(keys))
	assert.Equal(t, uint64(airdrop), j.PreBalances[0])
	assert.Equal(t, airdrop-lamports-feePerSignature-priorityFee, j.PostBalances[0])
	require.NotNil(t, rt.Parsed)
	p := rt.Parsed
	assert.Equal(t, st.Slot, p.Slot)
	assert.Equal(t, got.Meta.Fee, p.Fee)
	require.Len(t, p.AccountKeys, len(keys))
	for i, k := range p.AccountKeys {
		assert.Equal(t, keys[i], k.Pubkey)
		assert.Equal(t, tx.Message.IsSigner(tx.Message.AccountKeys[i]), k.Signer, k.Pubkey)
		w, err := tx.Message.IsWritable(tx.Message.AccountKeys[i])
		require.NoError(t, err)
		assert.Equal(t, w, k.Writable, k.Pubkey)
	}
	require.Len(t, p.Instructions, len(programs))
	for i, in := range p.Instructions {
		assert.Equal(t, programs[i].String(), in.ProgramID)
		assert.False(t, in.Parsed, "the runtime parses no instruction (partially decoded only)")
		assert.Len(t, in.Accounts, len(tx.Message.Instructions[i].Accounts))
	}

	// Deactivate, an epoch later: StakeProgram.deactivate, sent and confirmed by
	// sendAndConfirmTransaction.
	require.NoError(t, r.WarpEpochs(ctx, 1))
	cfg.Commitment = "confirmed"
	de := runWeb3jsScript(t, ctx, dir, "confirm.mjs", "deactivate", cfg)
	require.Nil(t, de.Refused)
	assert.NotContains(t, de.stderr, "ws error")
	assert.Equal(t, stakeAccount, de.StakeAccount)
	assert.Equal(t, uint64(1), de.Epoch)
	assert.Contains(t, []string{"confirmed", "finalized"}, de.ConfirmationStatus)
	state = stakeState(t, ctx, c, stakeAccount)
	assert.Equal(t, uint64(1), state.Stake.Delegation.DeactivationEpoch)
	assert.Equal(t, delegated, state.Stake.Delegation.Stake)
	before := balance(t, ctx, c, staker)
	assert.Equal(t, airdrop-lamports-2*feePerSignature-priorityFee, before)

	// Withdrawing in the deactivation epoch is refused by the stake program at preflight, and
	// sendAndConfirmTransaction throws the refusal (message and logs); nothing changes.
	early := runWeb3jsScript(t, ctx, dir, "confirm.mjs", "withdraw", cfg)
	require.NotNil(t, early.Refused, "withdraw in the deactivation epoch landed")
	assert.Equal(t, "SendTransactionError", early.Refused.Error)
	assert.Equal(t, "Transaction simulation failed: Error processing Instruction 0: insufficient funds for instruction", early.Refused.Message)
	assert.NotEmpty(t, early.Refused.Logs)
	assert.Equal(t, before, balance(t, ctx, c, staker))
	assert.Equal(t, lamports, stakeState(t, ctx, c, stakeAccount).Lamports)

	// Withdraw everything an epoch later: StakeProgram.withdraw, sendAndConfirmTransaction
	// waiting for "finalized" this time (FinalizationDepth slots after it lands); the stake
	// account is gone and the staker is back to the airdrop less four fees' worth (three
	// signatures, one priority). This is the step that needs the signatureNotification itself:
	// web3.js calls getSignatureStatuses once, when its subscription is acknowledged, which
	// finds the stake and the deactivation already confirmed, but not this one finalized.
	require.NoError(t, r.WarpEpochs(ctx, 1))
	cfg.Commitment = "finalized"
	wd := runWeb3jsScript(t, ctx, dir, "confirm.mjs", "withdraw", cfg)
	require.Nil(t, wd.Refused)
	assert.NotContains(t, wd.stderr, "ws error")
	assert.Equal(t, "finalized", wd.ConfirmationStatus)
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
