//go:build integration

package stack

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/proxy"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/internal/worker"
	"github.com/stakeflow/stakeflow/modules/all"
	"github.com/stakeflow/stakeflow/workflows"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// encryptedStack starts a stack whose client and worker encrypt with the keyset file keyset (its
// worker rechecks a deactivating stake every second; epochs turn only when warped).
func encryptedStack(t *testing.T, ctx context.Context, keyset string, stakers int, workerLog ...*zap.Logger) *Stack {
	t.Helper()
	cliPath := os.Getenv("TEMPORAL_CLI")
	require.NotEmpty(t, cliPath, "TEMPORAL_CLI is not set: run through make")
	var wl *zap.Logger
	if len(workerLog) > 0 {
		wl = workerLog[0]
	}
	st, err := Start(ctx, Options{
		TemporalCLI: cliPath, Dir: t.TempDir(), PayloadKeyset: keyset, WorkerLogger: wl,
		Runtime:      solanart.Options{SlotDuration: 100 * time.Millisecond, SlotsPerEpoch: 100_000},
		EpochRecheck: time.Second,
		Stakers:      stakers, StakerLamports: 10_000_000_000,
	})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st
}

// runStarter runs the admin tool against st's Temporal with the keyset file keyset.
func runStarter(t *testing.T, st *Stack, keyset string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := starter.Run(ctx, append(args, "--temporal-address", st.TemporalAddress(), "--payload-keyset", keyset), &out, nil, all.StarterGroups()...)
	require.NoError(t, err, out.String())
	return out.String()
}

// rawHistory is the history of workflow id as the server stores it.
func rawHistory(t *testing.T, c client.Client, id string) *historypb.History {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, ev)
	}
	return h
}

// withoutSearchAttributes is h with every search_attributes field cleared: search attributes are
// indexed by the server and stay visible by design (docs/encryption.md).
func withoutSearchAttributes(h *historypb.History) *historypb.History {
	out := proto.Clone(h).(*historypb.History)
	var clear func(m protoreflect.Message)
	clear = func(m protoreflect.Message) {
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.Name() == "search_attributes":
				m.Clear(fd)
			case fd.Kind() != protoreflect.MessageKind:
			case fd.IsList():
				for i := 0; i < v.List().Len(); i++ {
					clear(v.List().Get(i).Message())
				}
			case fd.IsMap():
				if fd.MapValue().Kind() == protoreflect.MessageKind {
					v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
						clear(mv.Message())
						return true
					})
				}
			default:
				clear(v.Message())
			}
			return true
		})
	}
	clear(out.ProtoReflect())
	return out
}

// payloadsOf calls visit with every payload of h but its search attributes.
func payloadsOf(t *testing.T, h *historypb.History, visit func(*commonpb.Payload) (*commonpb.Payload, error)) {
	t.Helper()
	require.NoError(t, proxy.VisitPayloads(context.Background(), h, proxy.VisitPayloadsOptions{
		SkipSearchAttributes: true,
		Visitor: func(_ *proxy.VisitPayloadsContext, ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
			out := make([]*commonpb.Payload, len(ps))
			for i, p := range ps {
				var err error
				if out[i], err = visit(p); err != nil {
					return nil, err
				}
			}
			return out, nil
		},
	}))
}

// TestEncryptedStackKeepsTheStakeOutOfHistory stakes through a stack whose client, admin tool and
// worker encrypt: the history the server stores holds the staker's address, the amount and the
// stake's transaction signature nowhere outside its search attributes, in no form (the protojson
// of its events, or the bytes of any field), and every payload is sealed under the keyset's key;
// opened with the keyset, the payloads hold all three.
func TestEncryptedStackKeepsTheStakeOutOfHistory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	keyset := filepath.Join(t.TempDir(), "keyset.json")
	_, err := NewKeysetFile(keyset, "k1")
	require.NoError(t, err)
	st := encryptedStack(t, ctx, keyset, 1)
	staker := st.Stakers[0]

	id := fmt.Sprintf("stake-encrypted-%d", time.Now().UnixNano())
	out := runStarter(t, st, keyset, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", "3.14159265", "--id", id, "--wait", "--json")
	var res wfsolana.Result
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	// The signature as the chain has it, not as the operation reports it.
	ledger, err := st.Sandbox.Runtime().Ledger(ctx)
	require.NoError(t, err)
	var sigs []solana.Signature
	for _, e := range ledger {
		if !e.Airdrop && e.FeePayer.Equals(staker) {
			sigs = append(sigs, e.Signature)
		}
	}
	require.Len(t, sigs, 1)
	sig := sigs[0]
	needles := map[string][][]byte{
		"the staker's address": {[]byte(staker.String()), staker[:]},
		"the amount":           {[]byte("3141592650")},
		// The signed transaction starts with its signature count (one byte) then its signature:
		// from the signature's third byte on, the transaction's base64 and the signature's align.
		"the transaction's signature": {[]byte(sig.String()), sig[:], []byte(base64.StdEncoding.EncodeToString(sig[2:62]))},
	}

	h := withoutSearchAttributes(rawHistory(t, st.Client, id))
	stored, err := protojson.Marshal(h)
	require.NoError(t, err)
	wire, err := proto.Marshal(h)
	require.NoError(t, err)
	for what, forms := range needles {
		for i, n := range forms {
			assert.False(t, bytes.Contains(stored, n), "%s (form %d) is in the stored history's JSON", what, i)
			assert.False(t, bytes.Contains(wire, n), "%s (form %d) is in the stored history's bytes", what, i)
		}
	}

	keys, err := codec.LoadKeyset(keyset)
	require.NoError(t, err)
	c := codec.New(keys)
	var opened bytes.Buffer
	sealed := 0
	payloadsOf(t, h, func(p *commonpb.Payload) (*commonpb.Payload, error) {
		require.Equal(t, codec.Encoding, string(p.GetMetadata()[converter.MetadataEncoding]), "every payload is sealed")
		require.Equal(t, "k1", string(p.GetMetadata()[codec.MetadataKeyID]))
		sealed++
		out, err := c.Decode([]*commonpb.Payload{p})
		if err != nil {
			return nil, err
		}
		opened.Write(out[0].GetData())
		opened.WriteByte(0)
		return out[0], nil
	})
	require.Positive(t, sealed)
	for what, forms := range needles {
		assert.True(t, bytes.Contains(opened.Bytes(), forms[0]), "%s is in the decrypted payloads", what)
	}
	assert.Equal(t, uint64(3_141_592_650), res.Lamports)
}

// TestRotatedKeysetCompletesOperationsStartedUnderTheOldKey: an unstake started under keyset
// {current k1} waits for its deactivation epoch when the worker restarts with {current k2} only:
// it cannot read what k1 sealed, and says so, naming k1, in the failed workflow task (the
// operation neither fails nor moves). The worker restarts again with {current k2; k1 kept}: the
// epoch passes and the operation completes, its history sealed under both keys.
// waitDeactivating waits until the unstake id waits for its stake's deactivation and returns the
// length of its history then.
func waitDeactivating(t *testing.T, ctx context.Context, st *Stack, id string) int {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		v, err := st.Client.QueryWorkflow(ctx, id, "", workflows.QueryStatus)
		if !assert.NoError(c, err) {
			return
		}
		var s workflows.Status
		assert.NoError(c, v.Get(&s))
		assert.Equal(c, wfsolana.StepWaitingDeactivation, s.Step)
	}, time.Minute, 200*time.Millisecond)
	return len(rawHistory(t, st.Client, id).GetEvents())
}

// workflowTaskFailure waits for a workflow task of id to fail after its first `after` events and
// returns the failure's message, opened with keys (the worker seals it under the keys it holds).
// Temporal writes only a workflow task's first failing attempt to the history: when the worker
// stopped for the restart held a task (the operation re-reads its epoch every second), that task
// times out, and the restarted worker's failures are later attempts, never written. The failure
// is then read where the worker logs it (workerLog, its "Workflow panic" entries for id).
func workflowTaskFailure(t *testing.T, st *Stack, id string, after int, keys *codec.Keyset, workerLog *observer.ObservedLogs) string {
	t.Helper()
	var failure string
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var types []string
		timedOut := false
		for _, ev := range rawHistory(t, st.Client, id).GetEvents()[after:] {
			f := ev.GetWorkflowTaskFailedEventAttributes().GetFailure()
			if f == nil {
				types = append(types, ev.GetEventType().String())
				timedOut = timedOut || ev.GetEventType() == enums.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT
				continue
			}
			converter.DecodeCommonFailureAttributes(codec.DataConverter(codec.New(keys)), f)
			failure = f.GetMessage()
			return
		}
		if timedOut {
			for _, e := range workerLog.FilterMessage("Workflow panic").FilterField(zap.String("WorkflowID", id)).All() {
				if msg, ok := e.ContextMap()["Error"]; ok {
					failure = fmt.Sprint(msg)
					return
				}
			}
		}
		assert.Fail(c, "no workflow task failed yet", "events since: %v", types)
	}, time.Minute, 200*time.Millisecond)
	return failure
}

func TestRotatedKeysetCompletesOperationsStartedUnderTheOldKey(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	keyset := filepath.Join(t.TempDir(), "keyset.json")
	k1, err := NewKeysetFile(keyset, "k1")
	require.NoError(t, err)
	logCore, workerLog := observer.New(zap.ErrorLevel)
	st := encryptedStack(t, ctx, keyset, 1, zap.New(logCore))
	staker := st.Stakers[0]

	var staked wfsolana.Result
	out := runStarter(t, st, keyset, "stake", "--network", "testnet", "--staker", staker.String(), "--sol", "2",
		"--id", fmt.Sprintf("stake-rotation-%d", time.Now().UnixNano()), "--wait", "--json")
	require.NoError(t, json.Unmarshal([]byte(out), &staked), out)
	require.NoError(t, st.Sandbox.Runtime().WarpEpochs(ctx, 1))
	id := fmt.Sprintf("unstake-rotation-%d", time.Now().UnixNano())
	runStarter(t, st, keyset, "unstake", "--network", "testnet", "--staker", staker.String(), "--stake-account", staked.StakeAccount, "--id", id)
	before := waitDeactivating(t, ctx, st, id)

	// A worker whose keyset lost k1.
	k2, err := codec.NewKey("k2")
	require.NoError(t, err)
	require.NoError(t, st.StopWorker())
	require.NoError(t, WriteKeyset(keyset, codec.KeysetFile{Current: "k2", Keys: []codec.Key{k2}}))
	require.NoError(t, st.StartWorker(ctx))
	k2only, err := codec.LoadKeyset(keyset)
	require.NoError(t, err)
	// The worker sealed the failure's message under the key it holds.
	failure := workflowTaskFailure(t, st, id, before, k2only, workerLog)
	require.Contains(t, failure, `key ID "k1"`, "the failed workflow task names the key it lacks")
	t.Logf("the workflow task failed: %s", failure)
	d, err := st.Client.DescribeWorkflowExecution(ctx, id, "")
	require.NoError(t, err)
	require.Equal(t, enums.WORKFLOW_EXECUTION_STATUS_RUNNING, d.GetWorkflowExecutionInfo().GetStatus(), "the operation neither failed nor ended")

	// The keyset rotated as it should be: k2 current, k1 kept to read what it sealed.
	require.NoError(t, st.StopWorker())
	require.NoError(t, WriteKeyset(keyset, codec.KeysetFile{Current: "k2", Keys: []codec.Key{k2, k1.Keys[0]}}))
	require.NoError(t, st.StartWorker(ctx))
	require.NoError(t, st.Sandbox.Runtime().WarpEpochs(ctx, 1))
	c, err := (&cli.Temporal{Address: st.TemporalAddress(), Namespace: "default", PayloadKeyset: keyset, Compression: cli.CompressionNone}).Dial(zap.NewNop())
	require.NoError(t, err)
	defer c.Close()
	var res wfsolana.Result
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer wcancel()
	require.NoError(t, c.GetWorkflow(wctx, id, "").Get(wctx, &res))
	require.Len(t, res.Transactions, 2, "deactivated, then withdrawn")

	byKey := map[string]int{}
	payloadsOf(t, rawHistory(t, c, id), func(p *commonpb.Payload) (*commonpb.Payload, error) {
		require.Equal(t, codec.Encoding, string(p.GetMetadata()[converter.MetadataEncoding]), "every payload is sealed")
		byKey[string(p.GetMetadata()[codec.MetadataKeyID])]++
		return p, nil
	})
	assert.Positive(t, byKey["k1"], "payloads sealed before the rotation")
	assert.Positive(t, byKey["k2"], "payloads sealed after it")
	assert.Len(t, byKey, 2, "k1 and k2 only: %v", byKey)
}

// TestSwitchingEncryptionOnCompletesOperationsStartedInClear: an unstake started in clear, parked
// at its deactivation wait, meets a worker restarted with a keyset. Strict, the worker cannot read
// its history: the operation neither fails nor ends, its workflow tasks fail saying the payload is
// not encrypted. With --accept-clear-payloads beside the keyset it completes, and what it writes
// from then on is sealed.
func TestSwitchingEncryptionOnCompletesOperationsStartedInClear(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	keyset := filepath.Join(t.TempDir(), "keyset.json")
	_, err := NewKeysetFile(keyset, "k1")
	require.NoError(t, err)
	// The worker's payload settings, switched between restarts.
	var workerKeyset string
	var acceptClear bool
	cliPath := os.Getenv("TEMPORAL_CLI")
	require.NotEmpty(t, cliPath, "TEMPORAL_CLI is not set: run through make")
	logCore, workerLog := observer.New(zap.ErrorLevel)
	st, err := Start(ctx, Options{
		TemporalCLI: cliPath, Dir: t.TempDir(), WorkerLogger: zap.New(logCore),
		Runtime:      solanart.Options{SlotDuration: 100 * time.Millisecond, SlotsPerEpoch: 100_000},
		EpochRecheck: time.Second,
		Stakers:      1, StakerLamports: 10_000_000_000,
		ConfigureWorker: func(cfg *worker.Config) {
			cfg.Temporal.PayloadKeyset, cfg.Temporal.AcceptClearPayloads = workerKeyset, acceptClear
		},
	})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	staker := st.Stakers[0]
	clearStarter := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		err := starter.Run(ctx, append(args, "--temporal-address", st.TemporalAddress()), &out, nil, all.StarterGroups()...)
		require.NoError(t, err, out.String())
		return out.String()
	}

	var staked wfsolana.Result
	out := clearStarter("stake", "--network", "testnet", "--staker", staker.String(), "--sol", "2",
		"--id", fmt.Sprintf("stake-switch-%d", time.Now().UnixNano()), "--wait", "--json")
	require.NoError(t, json.Unmarshal([]byte(out), &staked), out)
	require.NoError(t, st.Sandbox.Runtime().WarpEpochs(ctx, 1))
	id := fmt.Sprintf("unstake-switch-%d", time.Now().UnixNano())
	clearStarter("unstake", "--network", "testnet", "--staker", staker.String(), "--stake-account", staked.StakeAccount, "--id", id)
	before := waitDeactivating(t, ctx, st, id)

	// Switched on strict: the worker cannot read the operation's clear history.
	require.NoError(t, st.StopWorker())
	workerKeyset = keyset
	require.NoError(t, st.StartWorker(ctx))
	keys, err := codec.LoadKeyset(keyset)
	require.NoError(t, err)
	failure := workflowTaskFailure(t, st, id, before, keys, workerLog)
	require.Contains(t, failure, "not encrypted", "the failed workflow task says why")
	d, err := st.Client.DescribeWorkflowExecution(ctx, id, "")
	require.NoError(t, err)
	require.Equal(t, enums.WORKFLOW_EXECUTION_STATUS_RUNNING, d.GetWorkflowExecutionInfo().GetStatus(), "the operation neither failed nor ended")

	// With --accept-clear-payloads it completes.
	require.NoError(t, st.StopWorker())
	acceptClear = true
	require.NoError(t, st.StartWorker(ctx))
	require.NoError(t, st.Sandbox.Runtime().WarpEpochs(ctx, 1))
	c, err := (&cli.Temporal{Address: st.TemporalAddress(), Namespace: "default", PayloadKeyset: keyset, AcceptClearPayloads: true, Compression: cli.CompressionNone}).Dial(zap.NewNop())
	require.NoError(t, err)
	defer c.Close()
	var res wfsolana.Result
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer wcancel()
	require.NoError(t, c.GetWorkflow(wctx, id, "").Get(wctx, &res))
	require.Len(t, res.Transactions, 2, "deactivated, then withdrawn")

	// Before the switch clear, after it sealed: the result is among the sealed ones.
	var clear, sealed int
	payloadsOf(t, rawHistory(t, c, id), func(p *commonpb.Payload) (*commonpb.Payload, error) {
		if string(p.GetMetadata()[converter.MetadataEncoding]) == codec.Encoding {
			sealed++
		} else {
			clear++
		}
		return p, nil
	})
	assert.Positive(t, clear, "payloads written before the switch")
	assert.Positive(t, sealed, "payloads written after it")
	closed := rawHistory(t, c, id).GetEvents()
	result := closed[len(closed)-1].GetWorkflowExecutionCompletedEventAttributes().GetResult().GetPayloads()
	require.NotEmpty(t, result)
	assert.Equal(t, codec.Encoding, string(result[0].GetMetadata()[converter.MetadataEncoding]), "the result is sealed")
}
