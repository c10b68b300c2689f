//go:build integration

package integration

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"
)

// canaryPrefix starts the ID (and names the task queue) of the workflow the secrets scan plants
// its canary in; no other workflow uses it.
const canaryPrefix = "secrets-canary-"

// operationTypes are the workflow types of stakeflow's Solana operations, whose inputs name a staker.
var operationTypes = []string{"StakeWorkflow", "UnstakeWorkflow", "WithdrawWorkflow"}

// schedulerQuery selects the workflows Temporal runs for schedules, which a plain listing hides;
// their histories hold the actions they start (with their inputs).
const schedulerQuery = "TemporalNamespaceDivision IS NOT NULL"

// TestZZNoSecretInHistoriesOrLogs scans the history of every workflow in the namespace, with
// every payload decoded (see payloads_test.go), and every log line, for the staker keys in all
// their forms and for the service token and the webhook's secret. None may appear. It runs after every other test of the
// package whatever their order (-shuffle, -run): it is the one top-level test that calls
// t.Parallel, and go test runs a paused parallel test only once all sequential ones have ended.
// It does not rely on the others for what it checks: it runs a stake of its own, whose payloads
// name its staker, and to show that the scan can fail it plants a canary (a key-shaped value
// that is no key) in the payloads of a workflow of its own and requires the scan to find it at
// each place it was planted, and the old scan of protojson and log lines not to.
//
// The run is encrypted (TestMain): the histories are read as the server stores them and every
// sealed payload opened with the keyset. Every payload a client or the worker wrote must be sealed
// under the run's key, no failure may hold its message in clear, the canary (planted through an
// encrypted client) must be nowhere in what the server stores, and the own stake's address,
// amount and signed transaction nowhere in it outside the search attributes (docs/encryption.md).
func TestZZNoSecretInHistoriesOrLogs(t *testing.T) {
	requireOnlyParallelTest(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// An operation of its own: the scan must read the decoded payloads of operations, whichever
	// other tests ran. Its staker (no other test's), its amount (an odd one) and its signed
	// transaction are canaries of what the history must not hold in clear.
	ownStaker := st.Stakers[secretsStaker].String()
	out, err := starterRun(t, "stake", "--network", "testnet", "--staker", ownStaker, "--sol", secretsSOL,
		"--id", operationID(t, "stake"), "--wait", "--json")
	require.NoError(t, err, out)
	sigs := landedBy(t, st.Stakers[secretsStaker])
	require.Len(t, sigs, 1, "the chain holds the one transaction this staker signed")
	sig, err := solana.SignatureFromBase58(sigs[0])
	require.NoError(t, err)
	operation := map[string][]secretForm{
		"its staker's address": {{Form: "base58", Needle: []byte(ownStaker)}},
		"its amount":           {{Form: "lamports", Needle: []byte(secretsLamports)}},
		// A Solana transaction begins with its signature count (one byte here) then the
		// signatures: from the signature's third byte on, the transaction's base64 and the
		// signature's share 3-byte groups.
		"its signed transaction": {
			{Form: "signature base58", Needle: []byte(sig.String())},
			{Form: "signature raw bytes", Needle: sig[:]},
			{Form: "in the transaction's base64", Needle: aligned64(base64.StdEncoding, sig[2:])},
		},
	}

	var forms []secretForm
	token, err := os.ReadFile(st.TokenFile)
	require.NoError(t, err)
	forms = append(forms, tokenForms(strings.TrimSpace(string(token)))...)
	// The webhook's secret signs every event the worker posted during the run.
	forms = append(forms, tokenForms(hooks.secret)...)
	// The PKCS#11 PINs: the one of the stack's SoftHSM2 token, with which a worker signs every
	// chain's transactions (hsm_test.go), and the wrong one a test gives another worker.
	for _, pin := range []string{hsmPIN, hsmWrongPIN} {
		forms = append(forms, ownedBy("PKCS#11 PIN", []secretForm{
			{Form: "as in its file", Needle: []byte(pin)},
			{Form: "base64", Needle: aligned64(base64.StdEncoding, []byte(pin))},
			{Form: "hex", Needle: []byte(hex.EncodeToString([]byte(pin)))},
		})...)
	}
	files, err := filepath.Glob(filepath.Join(st.KeyDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var arr []int
		require.NoError(t, json.Unmarshal(raw, &arr))
		key := make([]byte, len(arr))
		for i, v := range arr {
			key[i] = byte(v)
		}
		require.Len(t, key, 64, f)
		pub := solana.PrivateKey(key).PublicKey().String()
		forms = append(forms, keyForms("staker "+pub+" key", key, string(raw))...)
	}
	// The approvers' private keys (approvals_test.go), which signed statements through the
	// admin tool's key files and SSH agent: an Ed25519 key is its seed then its public key, as a
	// Solana keypair, so the same forms.
	for name, k := range approverKeys() {
		forms = append(forms, keyForms("approver "+name+" key", k, "")...)
	}
	// The EVM keys (keystore v3 files: their private keys in every form, and the passphrase that
	// seals them): the Polygon stakers' and the Hyperliquid delegators' (hyperliquidDelegator),
	// whose keys sign the cWithdraw actions.
	pass, err := os.ReadFile(st.EVM.PassphraseFile)
	require.NoError(t, err)
	forms = append(forms, ownedBy("EVM keystore passphrase", []secretForm{{Form: "as in its file", Needle: []byte(strings.TrimSpace(string(pass)))}})...)
	for _, a := range st.EVM.Stakers {
		key := crypto.FromECDSA(st.EVM.Key(a))
		forms = append(forms, ownedBy("EVM staker "+a.Hex()+" key", []secretForm{
			{Form: "hex", Needle: []byte(hex.EncodeToString(key))},
			{Form: "HEX", Needle: []byte(strings.ToUpper(hex.EncodeToString(key)))},
			{Form: "base64", Needle: aligned64(base64.StdEncoding, key)},
			{Form: "raw bytes", Needle: key},
		})...)
	}
	canaryKey := sha512.Sum512([]byte("stakeflow secrets-scan canary: not a key of anything"))
	canary := keyForms("canary", canaryKey[:], "")
	forms = append(forms, canary...)

	id, plants := plantCanary(ctx, t, canaryKey[:])

	// Every run in the namespace, from the visibility API; the canary, which no test registered,
	// shows that the listing is what the scan reads. The IDs the tests registered are added in case
	// visibility lags behind a workflow started just before.
	var runs [][2]string
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		runs = runs[:0]
		seen := map[string]bool{}
		for _, q := range []string{"", schedulerQuery} {
			execs, err := listExecutions(ctx, q)
			require.NoError(c, err, "listing workflows with %q", q)
			for _, e := range execs {
				runs = append(runs, [2]string{e.GetWorkflowId(), e.GetRunId()})
				if isCanary(e.GetWorkflowId(), id) {
					seen[e.GetWorkflowId()] = true
				}
			}
		}
		assert.Len(c, seen, 2, "the canary workflow %s and the one running its schedule are not listed yet", id)
	}, 30*time.Second, 200*time.Millisecond)
	listed := map[string]bool{}
	for _, r := range runs {
		listed[r[0]] = true
	}
	finishedMu.Lock()
	registered := append([]string(nil), finished...)
	for op := range named {
		registered = append(registered, op)
	}
	finishedMu.Unlock()
	var unlisted []string
	for _, op := range registered {
		if !listed[op] {
			listed[op] = true
			unlisted = append(unlisted, op)
		}
	}

	scan := newSealedHistoryScan(keyset)
	var canaryJSON []byte
	for _, r := range runs {
		h, err := fetchHistory(ctx, r[0], r[1])
		require.NoError(t, err, "history of %s run %s", r[0], r[1])
		require.NoError(t, scan.addHistory(r[0], r[1], h))
		if isCanary(r[0], id) {
			raw, err := protojson.Marshal(h)
			require.NoError(t, err)
			canaryJSON = append(canaryJSON, raw...)
		}
	}
	for _, op := range unlisted {
		h, err := fetchHistory(ctx, op, "")
		var notFound *serviceerror.NotFound
		if errors.As(err, &notFound) {
			continue // registered, never started
		}
		require.NoError(t, err, "history of %s", op)
		require.NoError(t, scan.addHistory(op, "", h))
	}
	scan.addLogs(logs.String())
	t.Logf("scanned %d runs (%d listed, %d registered only): %s", len(runs)+len(unlisted), len(runs), len(unlisted), scan.summary())
	require.Empty(t, scan.undecodable, "payloads the keyset and the default data converter cannot decode are payloads the scan cannot vouch for")

	// Every payload a client or the worker wrote is sealed under the run's key, and every failure
	// they wrote holds its message and stack trace in its sealed encoded attributes: search
	// attributes, and the payloads and failures the server makes itself, are what stays visible
	// (docs/encryption.md).
	require.Empty(t, scan.clear, "payloads stored in clear")
	require.Equal(t, []string{keyset.Current()}, slices.Collect(maps.Keys(scan.keyIDs)), "payloads are sealed under the run's one key")
	require.Positive(t, scan.keyIDs[keyset.Current()])
	require.Empty(t, scan.clearFailures, "failures whose message is stored in clear")
	require.Positive(t, scan.failures-scan.serverFailure, "the scan met the failures the canary and the tests wrote")

	leaks := scan.find(forms)
	var found, elsewhere []leak
	for _, l := range leaks {
		if isCanary(l.Piece.WorkflowID, id) {
			found = append(found, l)
		} else {
			elsewhere = append(elsewhere, l)
		}
	}
	if len(elsewhere) > 0 {
		t.Fatalf("secrets leaked into workflow histories or log lines:%s", report(elsewhere))
	}

	// The scan reads the operations' payloads: their inputs name their stakers, this test's own
	// among them.
	ops := scan.ofTypes(operationTypes...)
	require.NotEmpty(t, ops, "the scan lists no operation, not even this test's own stake")
	require.True(t, scan.contains([]byte(ownStaker), ops, kindDecoded, kindString),
		"the scan must see the decoded payloads of the %d operations (this test's staker %s is in its stake's input)", len(ops), ownStaker)

	// The operation's address, amount and signed transaction are in its decrypted payloads, and
	// nowhere in what the server stores outside the search attributes.
	for what, forms := range operation {
		var inside bool
		for _, l := range scan.find(ownedBy(what, forms)) {
			switch {
			case slices.Contains(storedKinds, l.Piece.Kind) && l.Piece.Kind != kindProtoJSON && !strings.Contains(l.Piece.Path, "search_attributes."):
				t.Errorf("the secrets scan's own operation's %s is stored in clear: %s", what, l)
			case !slices.Contains(storedKinds, l.Piece.Kind):
				inside = true
			}
		}
		require.True(t, inside, "the scan does not find the operation's %s in its decrypted payloads: it is blind to it", what)
	}

	// The canary is found where it was planted, in the decoded payload, by the form planted there.
	for _, p := range plants {
		ok := false
		for _, l := range found {
			if (l.Piece.WorkflowID == id) != p.schedule && l.Piece.EventType == p.event && strings.HasPrefix(l.Piece.Path, p.path) &&
				l.Form.Form == p.form && l.Piece.Kind != kindProtoJSON && l.Piece.Kind != kindStored {
				ok = true
				t.Logf("canary found: %s", l)
			}
		}
		require.True(t, ok, "the canary (%s) planted in %s was not found: the scan is blind there", p.form, p)
	}
	// It was sealed: nothing the server stores holds it in any form.
	for _, l := range found {
		require.NotContains(t, storedKinds, l.Piece.Kind, "the canary is stored in clear: %s", l)
	}
	// And only decoding finds it: the old scan (the history's protojson and the log lines) misses
	// every form of it.
	old := append(append([]byte(nil), canaryJSON...), logs.String()...)
	require.NotEmpty(t, canaryJSON)
	for _, f := range canary {
		require.False(t, bytes.Contains(old, f.Needle), "%s is visible without decoding: the canary does not show that decoding matters", f)
	}
}

// secretsStaker is the index of the staker only the secrets scan uses.
const secretsStaker = 23

// secretsSOL is the amount the secrets scan stakes, secretsLamports the same in lamports: a
// number no other payload or field of the run holds by chance.
const (
	secretsSOL      = "2.718281828"
	secretsLamports = "2718281828"
)

// requireOnlyParallelTest fails unless the calling test is the only top-level test of the package
// that calls t.Parallel: another would run alongside it, and the workflows it started after the
// scan listed the namespace would not be scanned.
func requireOnlyParallelTest(t *testing.T) {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	fset := gotoken.NewFileSet()
	var parallel []string
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !strings.HasPrefix(fd.Name.Name, "Test") || fd.Name.Name == "TestMain" || fd.Name.Name == t.Name() ||
				fd.Body == nil || len(fd.Type.Params.List) != 1 || len(fd.Type.Params.List[0].Names) != 1 {
				continue
			}
			param := fd.Type.Params.List[0].Names[0].Name
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if _, ok := n.(*ast.FuncLit); ok {
					return false // subtests: they end before their parent does
				}
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Parallel" {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == param {
						parallel = append(parallel, fd.Name.Name+" at "+fset.Position(call.Pos()).String())
					}
				}
				return true
			})
		}
	}
	require.Empty(t, parallel, "other top-level parallel tests run alongside %s, and what they start after its listing is not scanned", t.Name())
}

// isCanary reports whether workflow wf is the canary workflow id or the one that runs the schedule
// of the same ID: no other workflow is let off the scan.
func isCanary(wf, id string) bool {
	return wf == id || strings.HasSuffix(wf, ":"+id)
}

// canaryPlant is where the canary was put: which workflow, the event, the path in it (a prefix, for
// a payload inside a server-internal message whose field numbers are not ours to pin), the form.
type canaryPlant struct {
	schedule bool // in the workflow that runs the schedule, not the canary workflow itself
	event    enums.EventType
	path     string
	form     string
}

func (p canaryPlant) String() string {
	w := "the canary workflow"
	if p.schedule {
		w = "the workflow running its schedule"
	}
	return fmt.Sprintf("%s, event %s at %s", w, p.event, p.path)
}

// canaryInput is the canary workflow's input: Blob is JSON base64 inside the payload, itself base64
// in the history's protojson.
type canaryInput struct {
	Note string
	Blob []byte
}

// plantCanary runs a workflow on a worker of its own (own task queue, own client, no log output)
// that carries key in its payloads: the input (base64 inside JSON), the memo (hex), the static
// summary (base58), an activity result (the raw bytes, after a prefix that puts them off the
// 3-byte groups of base64), the details of a failure's cause (JSON array of numbers, also in the
// workflow's failure one cause deeper) and an upserted memo (base64url of the seed). It returns the
// workflow ID and where each form was planted.
func plantCanary(ctx context.Context, t *testing.T, key []byte) (string, []canaryPlant) {
	t.Helper()
	id := fmt.Sprintf("%s%d", canaryPrefix, time.Now().UnixNano())
	// Its client encrypts as every client of the run does: the canary shows both that the scan
	// opens sealed payloads and that nothing of them is stored in clear.
	c, err := client.Dial(encrypted(t, client.Options{
		HostPort: st.TemporalAddress(), Namespace: "default",
		Logger: tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	}))
	require.NoError(t, err)
	defer c.Close()
	w := worker.New(c, id, worker.Options{})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context, in canaryInput) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: 10 * time.Second, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
		})
		if err := workflow.UpsertMemo(ctx, map[string]any{"canaryUpsert": base64.URLEncoding.EncodeToString(in.Blob[:32])}); err != nil {
			return err
		}
		var out []byte
		if err := workflow.ExecuteActivity(ctx, "SecretsCanaryResult").Get(ctx, &out); err != nil {
			return err
		}
		return workflow.ExecuteActivity(ctx, "SecretsCanaryFailure").Get(ctx, nil)
	}, workflow.RegisterOptions{Name: "SecretsCanary"})
	w.RegisterActivityWithOptions(func(context.Context) ([]byte, error) {
		return append([]byte("canary:"), key...), nil
	}, activity.RegisterOptions{Name: "SecretsCanaryResult"})
	ints := make([]int, len(key))
	for i, b := range key {
		ints[i] = int(b)
	}
	w.RegisterActivityWithOptions(func(context.Context) error {
		cause := temporal.NewApplicationErrorWithOptions("canary cause", "SecretsCanaryCause",
			temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{ints}})
		return temporal.NewApplicationErrorWithOptions("canary activity fails on purpose", "SecretsCanary",
			temporal.ApplicationErrorOptions{NonRetryable: true, Cause: cause})
	}, activity.RegisterOptions{Name: "SecretsCanaryFailure"})
	require.NoError(t, w.Start())
	defer w.Stop()

	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: id,
		Memo:          map[string]any{"canary": hex.EncodeToString(key)},
		StaticSummary: "canary " + base58.Encode(key),
	}, "SecretsCanary", canaryInput{Note: "secrets-scan canary, not a key", Blob: key})
	require.NoError(t, err)
	err = run.Get(ctx, nil)
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr, "the canary workflow fails with its activity's error")

	// A paused schedule of the same ID whose action carries the seed in upper-case hex: the
	// workflow the server runs for it holds the action in a payload of a server-internal type.
	sched, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID: id, Paused: true,
		Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: 24 * time.Hour}}},
		Action: &client.ScheduleWorkflowAction{
			ID: id + "-scheduled", Workflow: "SecretsCanary", TaskQueue: id,
			Args: []any{canaryInput{Note: strings.ToUpper(hex.EncodeToString(key[:32]))}},
		},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sched.Delete(context.Background()) })
	desc, err := sched.Describe(ctx)
	require.NoError(t, err)
	require.True(t, desc.Schedule.State.Paused)

	const (
		started = enums.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED
		failed  = enums.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED
	)
	return id, []canaryPlant{
		{false, started, "workflow_execution_started_event_attributes.input.payloads[0]", "key base64"},
		{false, started, "workflow_execution_started_event_attributes.memo.fields[canary]", "key hex"},
		{false, started, "user_metadata.summary", "key base58"},
		{false, enums.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED, "workflow_properties_modified_event_attributes.upserted_memo.fields[canaryUpsert]", "seed base64url"},
		{false, enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, "activity_task_completed_event_attributes.result.payloads[0]", "seed raw bytes"},
		{false, enums.EVENT_TYPE_ACTIVITY_TASK_FAILED, "activity_task_failed_event_attributes.failure.cause.application_failure_info.details.payloads[0]", "json array compact"},
		{false, failed, "workflow_execution_failed_event_attributes.failure.cause.cause.application_failure_info.details.payloads[0]", "json array compact"},
		{true, started, "workflow_execution_started_event_attributes.input.payloads[0]<", "seed HEX"},
	}
}
