package contract_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/stakeflow/stakeflow/internal/contract"
	"github.com/stakeflow/stakeflow/workflows"
	wfcelestia "github.com/stakeflow/stakeflow/workflows/celestia"
	wfeigenlayer "github.com/stakeflow/stakeflow/workflows/eigenlayer"
	wfhyperliquid "github.com/stakeflow/stakeflow/workflows/hyperliquid"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
	wfton "github.com/stakeflow/stakeflow/workflows/ton"
)

const regenerate = "run `go generate ./internal/contract` (or `make schemas`) and commit docs/schemas"

// TestSchemasAreCurrent regenerates the schemas from the Go types and compares them with the
// committed files: one that differs, is missing, or is no longer generated fails the test.
func TestSchemasAreCurrent(t *testing.T) {
	want, err := contract.Generate()
	require.NoError(t, err)
	dir, err := contract.SchemaPath()
	require.NoError(t, err)
	for name, content := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if os.IsNotExist(err) {
			t.Errorf("%s/%s is missing: %s", contract.SchemaDir, name, regenerate)
			continue
		}
		require.NoError(t, err)
		if !bytes.Equal(got, content) {
			t.Errorf("%s/%s differs from what the Go types give: %s", contract.SchemaDir, name, regenerate)
		}
	}
	committed, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	for _, f := range committed {
		if _, ok := want[filepath.Base(f)]; !ok {
			t.Errorf("%s/%s is not generated from any type of the contract: %s", contract.SchemaDir, filepath.Base(f), regenerate)
		}
	}
}

// TestWorkflowsAreTheWorkersAndTheStartersOwn checks the contract against what the worker
// registers (every type is public or internal, nothing else) and against the types the starter
// starts each workflow with.
func TestWorkflowsAreTheWorkersAndTheStartersOwn(t *testing.T) {
	ws, err := contract.Workflows()
	require.NoError(t, err)
	registered, err := contract.Registered()
	require.NoError(t, err)
	var public []string
	for _, w := range ws {
		public = append(public, w.Type)
	}
	for name := range contract.Internal {
		require.Contains(t, registered, name, "internal workflow %s is not registered by the worker", name)
		public = append(public, name)
	}
	slices.Sort(public)
	require.Equal(t, registered, public, "every registered workflow is public or internal")

	// The starter starts Solana workflows by function and Polygon ones by these type names, with
	// these inputs.
	want := map[string][2]any{
		"StakeWorkflow":                        {wfsolana.StakeInput{}, wfsolana.Result{}},
		"UnstakeWorkflow":                      {wfsolana.UnstakeInput{}, wfsolana.Result{}},
		"WithdrawWorkflow":                     {wfsolana.WithdrawInput{}, wfsolana.Result{}},
		wfpolygon.DelegateWorkflowType:         {wfpolygon.DelegateInput{}, wfpolygon.Result{}},
		wfpolygon.UnstakeWorkflowType:          {wfpolygon.UnstakeInput{}, wfpolygon.Result{}},
		wfpolygon.WithdrawRewardsWorkflowType:  {wfpolygon.RewardsInput{}, wfpolygon.Result{}},
		wfpolygon.RestakeWorkflowType:          {wfpolygon.RewardsInput{}, wfpolygon.Result{}},
		wfcelestia.DelegateWorkflowType:        {wfcelestia.Input{}, wfcelestia.Result{}},
		wfcelestia.UndelegateWorkflowType:      {wfcelestia.Input{}, wfcelestia.Result{}},
		wfcelestia.RedelegateWorkflowType:      {wfcelestia.Input{}, wfcelestia.Result{}},
		wfcelestia.WithdrawRewardsWorkflowType: {wfcelestia.Input{}, wfcelestia.Result{}},
		wfton.WatchWorkflowType:                {wfton.WatchInput{}, wfton.WatchResult{}},
		wfhyperliquid.WithdrawWorkflowType:     {wfhyperliquid.WithdrawInput{}, wfhyperliquid.WithdrawResult{}},
		wfeigenlayer.CheckpointWorkflowType:    {wfeigenlayer.CheckpointInput{}, wfeigenlayer.Result{}},
	}
	require.Len(t, ws, len(want))
	for _, w := range ws {
		io, ok := want[w.Type]
		require.True(t, ok, "unexpected public workflow %s", w.Type)
		require.Equal(t, reflect.TypeOf(io[0]), w.Input, w.Type)
		require.Equal(t, reflect.TypeOf(io[1]), w.Result, w.Type)
	}
}

// schemas compiles the committed schemas with an independent validator, by Go type.
func schemas(t *testing.T) map[reflect.Type]*jsonschema.Schema {
	t.Helper()
	ws, err := contract.Workflows()
	require.NoError(t, err)
	list, err := contract.Schemas(ws)
	require.NoError(t, err)
	dir, err := contract.SchemaPath()
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	out := map[reflect.Type]*jsonschema.Schema{}
	for _, s := range list {
		f, err := os.Open(filepath.Join(dir, s.File))
		require.NoError(t, err, regenerate)
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		require.NoError(t, err, s.File)
		url := contract.SchemaBaseID + s.File
		require.NoError(t, c.AddResource(url, doc))
		sch, err := c.Compile(url)
		require.NoError(t, err, s.File)
		out[s.Type] = sch
	}
	return out
}

// payload is v as the SDK's default data converter writes it into a payload.
func payload(t *testing.T, v any) []byte {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	require.NoError(t, err)
	require.Equal(t, "json/plain", string(p.GetMetadata()[converter.MetadataEncoding]))
	return p.GetData()
}

func validate(t *testing.T, sch *jsonschema.Schema, data []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err)
	return sch.Validate(inst)
}

const (
	staker      = "96w4tydVr6jFSKRnSG9UWzqYTH8PZ8GE3rs6UsXRBrsH"
	voteAccount = "8g9nmVuH1fyct7trPkz5jYNkHWUhKbcSUwmRLhTK8cUi"
	evmStaker   = "0x71C7656EC7ab88b098defB751B7401B5f6d8976F"
	share       = "0x3B2F1aD2f4a5BcE0cD6d8eD6a8F2E1b4c5d6e7f8"
)

// TestPayloadsValidate marshals inputs the way the starter builds them, the status as an
// operation reports it, and a value of every contract type with every field set, through the SDK's
// data converter, and validates each against its committed schema.
func TestPayloadsValidate(t *testing.T) {
	sch := schemas(t)
	at := time.Date(2026, 11, 25, 18, 0, 0, 123456789, time.UTC)
	samples := []any{
		wfsolana.StakeInput{Network: "testnet", Staker: staker, Lamports: 60_000_000_000, RequestedBy: "alice"},
		wfsolana.StakeInput{Network: "mainnet-beta", Staker: staker, Lamports: 2_000_000_000, VoteAccount: voteAccount, RequestedBy: "alice",
			Options: workflows.Options{ApprovalTimeout: time.Hour}},
		wfsolana.UnstakeInput{Network: "testnet", Staker: staker, StakeAccount: voteAccount, RequestedBy: "alice"},
		wfpolygon.DelegateInput{Network: "sepolia", Staker: evmStaker, ValidatorShare: share, Amount: "1000000000000000000000", RequestedBy: "alice"},
		wfpolygon.RewardsInput{Network: "mainnet", Staker: evmStaker, ValidatorShare: share, RequestedBy: "alice"},
		wfcelestia.Input{Network: "celestia-mocha-testnet", Delegator: "celestia1pkptre7fdkl6gfrzlesjjvhxhlc3r4gm2ukn2h",
			Validator: "celestiavaloper1u3drplq4vr90nnwz0tvnrhetc82heq8halazeh", Amount: "1000000", RequestedBy: "alice"},
		wfton.WatchInput{Network: "testnet", Hash: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", Deadline: time.Minute, RequestedBy: "alice"},
		wfhyperliquid.WithdrawInput{Network: "testnet", Delegator: evmStaker, Amount: "12.5", RequestedBy: "alice"},
		wfeigenlayer.CheckpointInput{Network: "mainnet", Owner: evmStaker, RequestedBy: "alice"},
		wfeigenlayer.CheckpointInput{Network: "dev", Owner: evmStaker, Submitter: share},
		workflows.ApprovalInput{Approver: "bob"},
		workflows.ApprovalInput{Approver: "bob", Reason: "treasury plan"},
		// The status of a stake waiting for its approval, as NewOperation and CheckPolicy leave it.
		workflows.Status{OperationID: "stake-0123456789ab", Operation: "stake", Chain: wfsolana.Chain, Network: "testnet",
			Staker: staker, Amount: "60000000000", Unit: wfsolana.Unit, RequestedBy: "alice",
			Step: workflows.StepAwaitingApproval, StepSince: at, StartedAt: at,
			Approval: workflows.Approval{Required: true, ApprovalsRequired: 1, Threshold: "50000000000", Decisions: []workflows.ApprovalRecord{}},
			Attempts: []workflows.Attempt{}, Transactions: []workflows.TxRecord{}},
	}
	for _, v := range samples {
		s, ok := sch[reflect.TypeOf(v)]
		require.True(t, ok, "no schema for %T", v)
		data := payload(t, v)
		require.NoError(t, validate(t, s, data), "%T: %s", v, data)
	}

	ws, err := contract.Workflows()
	require.NoError(t, err)
	networks := map[reflect.Type][]string{}
	for _, w := range ws {
		networks[w.Input] = w.Networks
	}
	for typ, s := range sch {
		v := reflect.New(typ).Elem()
		fill(v)
		if n := networks[typ]; len(n) > 0 {
			v.FieldByName("Network").SetString(n[len(n)-1])
		}
		data := payload(t, v.Interface())
		require.NoError(t, validate(t, s, data), "%s with every field set: %s", typ, data)
	}

	// A result's or the status's zero value, nil lists (written as null) included: what a client
	// reads from a Go value before anything was recorded, and how the Temporal CLI's JSON output
	// shows empty lists.
	list, err := contract.Schemas(ws)
	require.NoError(t, err)
	outputs := 0
	for _, s := range list {
		if s.Input {
			continue
		}
		outputs++
		data := payload(t, reflect.New(s.Type).Elem().Interface())
		require.NoError(t, validate(t, sch[s.Type], data), "zero %s: %s", s.Type, data)
	}
	require.Equal(t, 7, outputs, "the Solana, Polygon, EigenLayer, Celestia, TON and Hyperliquid results, the status")
}

// fill sets every exported field of v, recursively: the largest unsigned integers, a time with
// nanoseconds and a zone, one element in each slice.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 11, 25, 18, 0, 0, 123456789, time.FixedZone("", 2*3600))))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0))
		v.Set(s)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(math.MaxUint64 >> (64 - v.Type().Bits()))
	default:
		panic("fill: unhandled kind " + v.Kind().String())
	}
}

// TestSchemasRefuse checks that the schemas refuse what the workflows refuse: a wrong type (which
// Go's decoder refuses too), a missing required field (which the input's validation refuses), an
// unknown property (which the decoder would drop), a network the chain does not serve.
func TestSchemasRefuse(t *testing.T) {
	sch := schemas(t)
	stake := sch[reflect.TypeFor[wfsolana.StakeInput]()]
	good := `{"network":"testnet","staker":"` + staker + `","lamports":60000000000,"requestedBy":"alice"}`
	require.NoError(t, validate(t, stake, []byte(good)))
	var in wfsolana.StakeInput
	require.NoError(t, json.Unmarshal([]byte(good), &in))
	require.NoError(t, in.Validate())

	for _, tc := range []struct {
		name, json string
		// goRefuses is how the workflow refuses it: "decode" (the data converter fails) or
		// "validate" (the input's Validate); empty when it is silently accepted.
		goRefuses string
	}{
		{"lamports as a string", strings.Replace(good, "60000000000", `"60000000000"`, 1), "decode"},
		{"negative lamports", strings.Replace(good, "60000000000", "-1", 1), "decode"},
		{"fractional lamports", strings.Replace(good, "60000000000", "1.5", 1), "decode"},
		{"staker missing", `{"network":"testnet","lamports":60000000000}`, "validate"},
		{"network missing", `{"staker":"` + staker + `","lamports":60000000000}`, "validate"},
		{"network not served", strings.Replace(good, "testnet", "devnet", 1), "validate"},
		{"duration as a string", strings.Replace(good, `"requestedBy"`, `"options":{"approvalTimeout":"1h"},"requestedBy"`, 1), "decode"},
		{"unknown property", strings.Replace(good, `"lamports"`, `"lamport":1,"lamports"`, 1), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Error(t, validate(t, stake, []byte(tc.json)), tc.json)
			var in wfsolana.StakeInput
			err := converter.GetDefaultDataConverter().FromPayload(jsonPayload(tc.json), &in)
			switch tc.goRefuses {
			case "decode":
				require.Error(t, err)
			case "validate":
				require.NoError(t, err)
				require.Error(t, in.Validate())
			default:
				require.NoError(t, err)
				require.NoError(t, in.Validate())
			}
		})
	}

	approval := sch[reflect.TypeFor[workflows.ApprovalInput]()]
	require.Error(t, validate(t, approval, []byte(`{"reason":"ok"}`)), "approver missing")
	require.Error(t, validate(t, approval, []byte(`{"approver":7}`)), "approver not a string")

	delegate := sch[reflect.TypeFor[wfpolygon.DelegateInput]()]
	require.Error(t, validate(t, delegate, []byte(`{"network":"sepolia","staker":"`+evmStaker+`","validatorShare":"`+share+`","amount":1000}`)),
		"amount is a decimal string, not a number")

	status := sch[reflect.TypeFor[workflows.Status]()]
	full := reflect.New(reflect.TypeFor[workflows.Status]()).Elem()
	fill(full)
	var m map[string]any
	require.NoError(t, json.Unmarshal(payload(t, full.Interface()), &m))
	m["newField"] = "a later version's"
	withNew, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, validate(t, status, withNew), "a result or status accepts properties added later")
	delete(m, "step")
	noStep, err := json.Marshal(m)
	require.NoError(t, err)
	require.Error(t, validate(t, status, noStep), "step missing")
	m["step"] = 3
	m["stepSince"] = "yesterday"
	bad, err := json.Marshal(m)
	require.NoError(t, err)
	require.Error(t, validate(t, status, bad), "step not a string, stepSince not a date-time")
}

// jsonPayload is a payload as the Temporal CLI sends --input: the JSON text, as json/plain.
func jsonPayload(s string) *commonpb.Payload {
	return &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(converter.MetadataEncodingJSON)}, Data: []byte(s)}
}

// TestCommittedHistoriesValidate validates the inputs and results of the committed workflow
// histories (recorded from real runs on a Temporal server, replayed by the workflows' tests)
// against the schemas: what the SDK wrote is what the contract says.
func TestCommittedHistoriesValidate(t *testing.T) {
	sch := schemas(t)
	ws, err := contract.Workflows()
	require.NoError(t, err)
	byType := map[string]contract.Workflow{}
	for _, w := range ws {
		byType[w.Type] = w
	}
	dir, err := contract.SchemaPath()
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(dir, "..", "..", "workflows", "*", "testdata", "histories", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	type payloads struct {
		Payloads []struct {
			Data []byte `json:"data"`
		} `json:"payloads"`
	}
	inputs, results := 0, 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var h struct {
			Events []struct {
				Started *struct {
					WorkflowType struct{ Name string } `json:"workflowType"`
					Input        payloads              `json:"input"`
				} `json:"workflowExecutionStartedEventAttributes"`
				Completed *struct {
					Result payloads `json:"result"`
				} `json:"workflowExecutionCompletedEventAttributes"`
			} `json:"events"`
		}
		require.NoError(t, json.Unmarshal(raw, &h), f)
		require.NotEmpty(t, h.Events, f)
		start := h.Events[0].Started
		require.NotNil(t, start, "%s starts with its start event", f)
		w, public := byType[start.WorkflowType.Name]
		if !public {
			require.Contains(t, contract.Internal, start.WorkflowType.Name, f)
			continue
		}
		require.Len(t, start.Input.Payloads, 1, f)
		require.NoError(t, validate(t, sch[w.Input], start.Input.Payloads[0].Data), "%s input: %s", f, start.Input.Payloads[0].Data)
		inputs++
		for _, e := range h.Events {
			if e.Completed != nil {
				require.Len(t, e.Completed.Result.Payloads, 1, f)
				data := e.Completed.Result.Payloads[0].Data
				require.NoError(t, validate(t, sch[w.Result], data), "%s result: %s", f, data)
				results++
			}
		}
	}
	t.Logf("%d inputs and %d results of %d histories valid", inputs, results, len(files))
	require.Positive(t, results)
}
