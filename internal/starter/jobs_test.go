package starter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	actjobs "github.com/stakeflow/stakeflow/activities/jobs"
	"github.com/stakeflow/stakeflow/activities/jobs/jobstest"
	"github.com/stakeflow/stakeflow/internal/cli"
	wfjobs "github.com/stakeflow/stakeflow/workflows/jobs"
)

const delegator = "0x00000000219ab540356cbb839cbe05303d7705fa"

// scheduleRecorder is a Temporal client that records the schedules created through it.
type scheduleRecorder struct {
	client.Client
	schedules *schedules
}

type schedules struct {
	client.ScheduleClient
	created []client.ScheduleOptions
}

func (s *scheduleRecorder) ScheduleClient() client.ScheduleClient { return s.schedules }
func (s *scheduleRecorder) Close()                                {}
func (s *schedules) Create(_ context.Context, o client.ScheduleOptions) (client.ScheduleHandle, error) {
	s.created = append(s.created, o)
	return nil, nil
}

func TestScheduleCreateJob(t *testing.T) {
	for _, tt := range []struct {
		name   string
		args   []string
		id     string
		wfType string
		input  any
		attrs  map[string]string
	}{
		{"apy", []string{"--job", "apy", "--network", "polkadot"}, "job-apy-polkadot", wfjobs.APYJobWorkflowType,
			wfjobs.APYJobInput{Network: "polkadot"}, map[string]string{"StakeflowOperation": "job-apy", "StakeflowNetwork": "polkadot"}},
		{"rewards", []string{"--job", "rewards", "--network", "ethereum", "--address", strings.ToUpper(delegator[:2]) + strings.ToUpper(delegator[2:]), "--since", "2026-01-01"},
			"job-rewards-ethereum-" + delegator, wfjobs.RewardsJobWorkflowType,
			wfjobs.RewardsJobInput{Network: "ethereum", Address: delegator, Since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
			map[string]string{"StakeflowOperation": "job-rewards", "StakeflowNetwork": "ethereum", "StakeflowStaker": delegator}},
		{"ssv with its own ID", []string{"--job", "ssv", "--schedule-id", "ssv-watch"}, "ssv-watch", wfjobs.SSVJobWorkflowType,
			wfjobs.SSVJobInput{}, map[string]string{"StakeflowOperation": "job-ssv"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &scheduleRecorder{schedules: &schedules{}}
			var out bytes.Buffer
			args := append([]string{"schedule", "create", "--every", "1h"}, tt.args...)
			require.NoError(t, Run(context.Background(), args, &out, func(cli.Temporal) (client.Client, error) { return rec, nil }))
			require.Len(t, rec.schedules.created, 1)
			o := rec.schedules.created[0]
			assert.Equal(t, tt.id, o.ID)
			assert.Equal(t, enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, o.Overlap, "one job of a kind per scope at a time")
			a, ok := o.Action.(*client.ScheduleWorkflowAction)
			require.True(t, ok)
			assert.Equal(t, tt.id, a.ID)
			assert.Equal(t, tt.wfType, a.Workflow)
			assert.Equal(t, []any{tt.input}, a.Args)
			assert.Equal(t, "stakeflow-jobs", a.TaskQueue, "a data job runs on the jobs module's queue")
			got := map[string]string{}
			for k, v := range a.TypedSearchAttributes.GetUntypedValues() {
				got[k.GetName()] = v.(string)
			}
			assert.Equal(t, tt.attrs, got, "no StakeflowStep: a job has no operation steps")
			assert.Contains(t, out.String(), "created schedule "+tt.id)
		})
	}
}

func TestJobAndDataInputRefusedBeforeAnythingStarts(t *testing.T) {
	old := OpenStore
	t.Cleanup(func() { OpenStore = old })
	OpenStore = func(context.Context, string) (actjobs.Reader, error) {
		t.Fatalf("the store was opened for input that should have been refused")
		return nil, nil
	}
	every := []string{"schedule", "create", "--every", "1h"}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown job", append(every, "--job", "tvl"), `--job "tvl": want apy, rewards or ssv`},
		{"apy unknown network", append(every, "--job", "apy", "--network", "bitcoin"), `invalid network: "bitcoin" is not one of solana, polkadot, kusama, sui, ethereum, celestia`},
		{"apy without network", append(every, "--job", "apy"), `invalid network: "" is not one of`},
		{"apy with address", append(every, "--job", "apy", "--network", "sui", "--address", delegator), "the APY job's scope is a network"},
		{"rewards malformed address", append(every, "--job", "rewards", "--network", "ethereum", "--address", "0x1234"), `invalid address: "0x1234"`},
		{"rewards other network", append(every, "--job", "rewards", "--network", "solana", "--address", delegator), `invalid network: "solana" is not one of ethereum`},
		{"ssv with network", append(every, "--job", "ssv", "--network", "ethereum"), "the SSV job reads every request"},
		{"job with an operation's flags", append(every, "--job", "apy", "--network", "sui", "--staker", staker, "--sol", "1"), "--sol, --staker: an operation's"},
		{"job with bad since", append(every, "--job", "apy", "--network", "sui", "--since", "yesterday"), `--since "yesterday"`},
		{"address without job", append(every, "--network", "testnet", "--staker", staker, "--sol", "1", "--address", delegator), "give --job"},
		{"job schedule too often", []string{"schedule", "create", "--every", "10s", "--job", "ssv"}, "at least 1m"},
		{"data without verb", []string{"data"}, "data: give a command: export"},
		{"data unknown verb", []string{"data", "import"}, `unknown data command "import"`},
		{"export unknown kind", []string{"data", "export", "--kind", "tvl"}, `--kind "tvl"`},
		{"export no kind", []string{"data", "export"}, `--kind ""`},
		{"export bad format", []string{"data", "export", "--kind", "apy", "--format", "xml"}, `--format "xml"`},
		{"export bad from", []string{"data", "export", "--kind", "apy", "--from", "01/11/2026"}, `--from "01/11/2026"`},
		{"export to before from", []string{"data", "export", "--kind", "apy", "--from", "2026-11-02", "--to", "2026-11-01"}, "--to must be after --from"},
		{"ssv without verb", []string{"ssv"}, "ssv: give a command: list"},
		{"ssv unknown verb", []string{"ssv", "retry"}, `unknown ssv command "retry"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := Run(context.Background(), tt.args, &out, noDial(t))
			require.ErrorContains(t, err, tt.want)
			var usage *UsageError
			require.ErrorAs(t, err, &usage)
		})
	}
}

// seededStore holds two APY periods, two rewards of one period and two set-up requests.
func seededStore(t *testing.T) *jobstest.Store {
	t.Helper()
	ctx := context.Background()
	st := jobstest.New()
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	_, err := st.UpsertAPY(ctx, []actjobs.APY{
		{Network: "ethereum", Period: 2130, PeriodStart: day, PeriodEnd: day.Add(24 * time.Hour), UpdatedAt: day.Add(24 * time.Hour),
			NetworkAPY: "3.1000000000000000001", ConsensusAPY: "2.6", ExecutionAPY: "0.5000000000000000001"},
		{Network: "ethereum", Period: 2131, PeriodStart: day.Add(24 * time.Hour), PeriodEnd: day.Add(48 * time.Hour), UpdatedAt: day.Add(30 * time.Hour),
			NetworkAPY: "1000000000000", ConsensusAPY: "2.7", ExecutionAPY: "0.5", Flag: "networkApy 1000000000000% is above 1000%: beyond what any staking network pays"},
	})
	require.NoError(t, err)
	_, err = st.UpsertRewards(ctx, []actjobs.Reward{
		{Network: "ethereum", Address: delegator, Period: "2130", Type: "consensus", Validator: "0xv", Currency: "ETH", Recipient: delegator,
			Amount: "0.002681233453981221", NetAmount: "0.002413110108583099", Fee: "0.000268123345398122", PeriodStart: day, PeriodEnd: day.Add(24 * time.Hour)},
		{Network: "ethereum", Address: delegator, Period: "2130", Type: "execution", Validator: "0xv", Currency: "ETH", Recipient: "0xr, \"quoted\"",
			Amount: "1", NetAmount: "0.9", Fee: "0.1", PeriodStart: day, PeriodEnd: day.Add(24 * time.Hour), NotFinalized: true},
		{Network: "ethereum", Address: delegator, Period: "2131", Type: "execution", Validator: "0xv", Currency: "ETH", Recipient: delegator,
			Amount: "0.000537976", NetAmount: "0.00537976", Fee: "0.000053798", PeriodStart: day.Add(24 * time.Hour), PeriodEnd: day.Add(48 * time.Hour),
			Flag: "netAmount 0.00537976 is not amount 0.000537976 minus fee 0.000053798 (0.000484178), beyond rounding"},
	})
	require.NoError(t, err)
	_, err = st.UpsertSSVRequests(ctx, []actjobs.SSVRequest{
		{ID: "a1", Status: "processing", ValidatorsCount: 2, AmountPerValidator: "32", Type: "without-encrypt-key", SSVOwnerAddress: "0xo"},
		{ID: "b2", Status: "failed", ValidatorsCount: 0, AmountPerValidator: "32", Type: "without-encrypt-key", SSVOwnerAddress: "0xo",
			Flag: "validatorsCount 0 is below 1"},
	}, day)
	require.NoError(t, err)
	return st
}

func withStore(t *testing.T, st actjobs.Reader) *[]string {
	t.Helper()
	old := OpenStore
	t.Cleanup(func() { OpenStore = old })
	var dsns []string
	OpenStore = func(_ context.Context, dsn string) (actjobs.Reader, error) {
		dsns = append(dsns, dsn)
		return st, nil
	}
	return &dsns
}

func TestDataExportCSV(t *testing.T) {
	dsns := withStore(t, seededStore(t))
	var out bytes.Buffer
	require.NoError(t, Run(context.Background(), []string{"data", "export", "--kind", "rewards", "--store", "sqlite:/tmp/x.db", "--from", "2026-11-01", "--to", "2026-11-02"}, &out, noDial(t)))
	assert.Equal(t, []string{"sqlite:/tmp/x.db"}, *dsns)
	// Written by hand, RFC 4180: a field with a comma or a quote is quoted, quotes doubled.
	// A flagged row says why in its last column; the others leave it empty.
	assert.Equal(t, `network,address,period,periodStart,periodEnd,type,validator,currency,recipient,amount,netAmount,fee,notFinalized,flag
ethereum,0x00000000219ab540356cbb839cbe05303d7705fa,2130,2026-11-01T00:00:00Z,2026-11-02T00:00:00Z,consensus,0xv,ETH,0x00000000219ab540356cbb839cbe05303d7705fa,0.002681233453981221,0.002413110108583099,0.000268123345398122,false,
ethereum,0x00000000219ab540356cbb839cbe05303d7705fa,2130,2026-11-01T00:00:00Z,2026-11-02T00:00:00Z,execution,0xv,ETH,"0xr, ""quoted""",1,0.9,0.1,true,
`, out.String())

	out.Reset()
	require.NoError(t, Run(context.Background(), []string{"data", "export", "--kind", "rewards", "--from", "2026-11-02"}, &out, noDial(t)))
	assert.Equal(t, `network,address,period,periodStart,periodEnd,type,validator,currency,recipient,amount,netAmount,fee,notFinalized,flag
ethereum,0x00000000219ab540356cbb839cbe05303d7705fa,2131,2026-11-02T00:00:00Z,2026-11-03T00:00:00Z,execution,0xv,ETH,0x00000000219ab540356cbb839cbe05303d7705fa,0.000537976,0.00537976,0.000053798,false,"netAmount 0.00537976 is not amount 0.000537976 minus fee 0.000053798 (0.000484178), beyond rounding"
`, out.String())

	out.Reset()
	require.NoError(t, Run(context.Background(), []string{"data", "export", "--kind", "apy", "--to", "2026-11-02"}, &out, noDial(t)))
	assert.Equal(t, `network,period,periodStart,periodEnd,updatedAt,networkApy,consensusApy,executionApy,flag
ethereum,2130,2026-11-01T00:00:00Z,2026-11-02T00:00:00Z,2026-11-02T00:00:00Z,3.1000000000000000001,2.6,0.5000000000000000001,
`, out.String(), "--to is exclusive")
	assert.Equal(t, defaultStore, (*dsns)[1])
}

func TestDataExportJSON(t *testing.T) {
	withStore(t, seededStore(t))
	var out bytes.Buffer
	require.NoError(t, Run(context.Background(), []string{"data", "export", "--kind", "apy", "--format", "json"}, &out, noDial(t)))
	dec := json.NewDecoder(&out)
	dec.UseNumber()
	var got []map[string]any
	require.NoError(t, dec.Decode(&got))
	require.Len(t, got, 2)
	assert.Equal(t, map[string]any{"network": "ethereum", "period": json.Number("2130"), "periodStart": "2026-11-01T00:00:00Z",
		"periodEnd": "2026-11-02T00:00:00Z", "updatedAt": "2026-11-02T00:00:00Z",
		"networkApy": "3.1000000000000000001", "consensusApy": "2.6", "executionApy": "0.5000000000000000001", "flag": ""}, got[0], "decimals are strings, exact")
	assert.Equal(t, "networkApy 1000000000000% is above 1000%: beyond what any staking network pays", got[1]["flag"], "a flagged APY says why")

	out.Reset()
	require.NoError(t, Run(context.Background(), []string{"data", "export", "--kind", "rewards", "--format", "json"}, &out, noDial(t)))
	var rewards []map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &rewards))
	require.Len(t, rewards, 3)
	assert.Equal(t, "0.000268123345398122", rewards[0]["fee"])
	assert.Equal(t, false, rewards[0]["notFinalized"])
	assert.Equal(t, true, rewards[1]["notFinalized"])
	assert.Equal(t, "0xr, \"quoted\"", rewards[1]["recipient"])
}

func TestSSVListFailed(t *testing.T) {
	withStore(t, seededStore(t))
	var out bytes.Buffer
	require.NoError(t, Run(context.Background(), []string{"ssv", "list", "--status", "failed", "--json"}, &out, noDial(t)))
	var got []map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	require.Len(t, got, 1)
	assert.Equal(t, "b2", got[0]["id"])
	assert.Equal(t, "validatorsCount 0 is below 1", got[0]["flag"])
	assert.Equal(t, "failed", got[0]["status"])
	assert.Equal(t, 0.0, got[0]["validatorsCount"])

	out.Reset()
	require.NoError(t, Run(context.Background(), []string{"ssv", "list"}, &out, noDial(t)))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3, "header and two requests")
	assert.True(t, strings.HasPrefix(lines[0], "ID"), lines[0])
	assert.True(t, strings.HasPrefix(lines[2], "b2  "), lines[2])
}

func TestStoreThatDoesNotOpen(t *testing.T) {
	old := OpenStore
	t.Cleanup(func() { OpenStore = old })
	OpenStore = func(context.Context, string) (actjobs.Reader, error) { return nil, errors.New("connection refused") }
	var out bytes.Buffer
	err := Run(context.Background(), []string{"ssv", "list", "--store", "postgres://u:s3cr3t@127.0.0.1:1/db"}, &out, noDial(t))
	require.EqualError(t, err, "opening the store postgres://u:xxxxx@127.0.0.1:1/db (--store): connection refused")

	// The real store: a server that is not there is named, its password is not.
	OpenStore = old
	err = Run(context.Background(), []string{"ssv", "list", "--store", "postgres://u:s3cr3t@127.0.0.1:1/db"}, &out, noDial(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "127.0.0.1:1")
	assert.NotContains(t, err.Error(), "s3cr3t")

	// Every password form of a DSN, through data export and ssv list, against the real store.
	for _, dsn := range []string{
		"postgres://u@127.0.0.1:1/db?sslmode=disable&password=s3cr3t",
		"postgres://u@127.0.0.1:1/db?PASS=s3cr3t",
		"host=127.0.0.1 port=1 user=u password='s3cr3t pw' dbname=db sslmode=disable",
	} {
		for _, args := range [][]string{{"data", "export", "--kind", "apy"}, {"ssv", "list"}} {
			err = Run(context.Background(), append(args, "--store", dsn), &out, noDial(t))
			require.Error(t, err, dsn)
			assert.Contains(t, err.Error(), "127.0.0.1:1", dsn)
			assert.NotContains(t, err.Error(), "s3cr3t", dsn)
		}
	}
}
