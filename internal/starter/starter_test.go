package starter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/internal/cli"
)

const (
	staker = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
	acct   = "5Q544fKrFoe6tsEbD7S8EmxGTJYAKtTVhAW5Q5pge4j1"
)

func TestParseLamports(t *testing.T) {
	tests := []struct {
		lamports, sol string
		want          uint64
		err           string
	}{
		{lamports: "1", want: 1},
		{lamports: "18446744073709551615", want: 18446744073709551615},
		{sol: "2", want: 2_000_000_000},
		{sol: "0.5", want: 500_000_000},
		{sol: "0.25", want: 250_000_000},
		{sol: "18446744073.709551615", want: 18446744073709551615},
		{sol: "1.000000001", want: 1_000_000_001},
		{lamports: "0", err: "--lamports: must be more than zero"},
		{lamports: "-5", err: `--lamports "-5": want a whole number of the base unit, without a sign`},
		{lamports: "+5", err: "without a sign"},
		{lamports: "1.5", err: "without a decimal point"},
		{lamports: "18446744073709551616", err: `--lamports "18446744073709551616": too large: at most 18446744073709551615 lamports fit in 64 bits`},
		{lamports: "abc", err: "(digits only)"},
		{lamports: "01", err: `--lamports "01": write it without leading zeros`},
		{lamports: " 1", err: "without spaces"},
		{sol: "0", err: "--sol: must be more than zero"},
		{sol: "0.000000000", err: "--sol: must be more than zero"},
		{sol: "-1", err: `--sol "-1": want a decimal number such as 2 or 0.5 (at most 9 decimals), without a sign`},
		{sol: "1e9", err: "without an exponent"},
		{sol: ".25", err: `--sol ".25": write a digit before the point (0.25)`},
		{sol: "1.0000000001", err: `--sol "1.0000000001": more than 9 decimals: the smallest unit is 0.000000001`},
		{sol: "1.", err: "digits after the decimal point"},
		{sol: "18446744073.709551616", err: `--sol "18446744073.709551616": too large`},
		{sol: "99999999999999999999", err: "too large"},
		{lamports: "1", sol: "1", err: "not both"},
	}
	for _, tt := range tests {
		got, err := parseLamports(tt.lamports, tt.sol)
		if tt.err != "" {
			require.ErrorContains(t, err, tt.err, "lamports=%q sol=%q", tt.lamports, tt.sol)
			continue
		}
		require.NoError(t, err, "lamports=%q sol=%q", tt.lamports, tt.sol)
		require.Equal(t, tt.want, got)
	}
}

// noDial fails the test if a command reaches Temporal: bad input must be refused before.
func noDial(t *testing.T) func(cli.Temporal) (client.Client, error) {
	return func(cli.Temporal) (client.Client, error) {
		t.Fatalf("Temporal was dialled for input that should have been refused")
		return nil, errors.New("unreachable")
	}
}

const (
	evmStaker = "0x1111111111111111111111111111111111111111"
	evmShare  = "0x2222222222222222222222222222222222222222"
)

func TestParseWei(t *testing.T) {
	// Expected values written out by hand: 1 POL = 10^18 wei.
	for _, tt := range []struct{ wei, pol, want string }{
		{"", "1", "1000000000000000000"},
		{"", "0.5", "500000000000000000"},
		{"", "0.25", "250000000000000000"},
		{"", "115792089237316195423570985008687907853269984665640564039457.584007913129639935", "115792089237316195423570985008687907853269984665640564039457584007913129639935"},
		{"", "0.000000000000000001", "1"},
		{"", "123456789.123456789123456789", "123456789123456789123456789"},
		{"", "100000000000000000000000000000", "100000000000000000000000000000000000000000000000"},
		{"42", "", "42"},
	} {
		got, err := ParseWei(tt.wei, tt.pol)
		require.NoError(t, err, "%q %q", tt.wei, tt.pol)
		require.Equal(t, tt.want, got, "%q %q", tt.wei, tt.pol)
	}
	for _, bad := range [][2]string{{"", ""}, {"-1", ""}, {"+1", ""}, {"0", ""}, {"", "1."}, {"", "1e18"}, {"", "-1"}, {"", "0.0"}, {"0042", ""}, {"", ".25"}, {"", "1.0000000000000000001"}, {"1", "1"}} {
		_, err := ParseWei(bad[0], bad[1])
		require.Error(t, err, "%q %q", bad[0], bad[1])
	}
}

func TestBadInputRefusedBeforeAnyWorkflowStarts(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "no command"},
		{"unknown command", []string{"restake"}, "unknown command"},
		{"stake without amount", []string{"stake", "--network", "testnet", "--staker", staker}, "--lamports or --sol"},
		{"stake zero", []string{"stake", "--network", "testnet", "--staker", staker, "--lamports", "0"}, "more than zero"},
		{"stake negative", []string{"stake", "--network", "testnet", "--staker", staker, "--lamports", "-1"}, `--lamports "-1": want a whole number of the base unit, without a sign`},
		{"stake decimal lamports", []string{"stake", "--network", "testnet", "--staker", staker, "--lamports", "1.5"}, `--lamports "1.5": want a whole number of the base unit, without a decimal point`},
		{"stake overflow", []string{"stake", "--network", "testnet", "--staker", staker, "--lamports", "99999999999999999999"}, "64 bits"},
		{"stake over int64", []string{"stake", "--network", "testnet", "--staker", staker, "--lamports", "18446744073709551615"}, "largest amount"},
		{"unknown network", []string{"stake", "--network", "devnet", "--staker", staker, "--sol", "1"}, "invalid network"},
		{"missing network", []string{"stake", "--staker", staker, "--sol", "1"}, "invalid network"},
		{"bad base58 staker", []string{"stake", "--network", "testnet", "--staker", "0OIl", "--sol", "1"}, "invalid staker"},
		{"short staker", []string{"stake", "--network", "testnet", "--staker", "abc", "--sol", "1"}, "invalid staker"},
		{"bad vote account", []string{"stake", "--network", "testnet", "--staker", staker, "--sol", "1", "--vote-account", "xyz"}, "invalid voteAccount"},
		{"operation ID with space", []string{"stake", "--network", "testnet", "--staker", staker, "--sol", "1", "--id", "a b"}, "operation ID"},
		{"unstake missing stake account", []string{"unstake", "--network", "testnet", "--staker", staker}, "invalid stakeAccount"},
		{"unstake stake account is staker", []string{"unstake", "--network", "testnet", "--staker", staker, "--stake-account", staker}, "not a stake account"},
		{"withdraw bad amount", []string{"withdraw", "--network", "testnet", "--staker", staker, "--stake-account", acct, "--lamports", "x"}, `--lamports "x": want a whole number of the base unit (digits only)`},
		{"approve without approver", []string{"approve", "--id", "op-1"}, "give --key FILE or --ssh-agent (signed decisions), or --approver NAME"},
		{"approve with a name and a key", []string{"approve", "--id", "op-1", "--approver", "bob", "--ssh-agent"}, "--approver names a free-text approver; a signed decision is named by its key"},
		{"fingerprint without agent", []string{"reject", "--id", "op-1", "--key", "k", "--key-fingerprint", "SHA256:x"}, "--key-fingerprint picks one of the SSH agent's keys: give --ssh-agent"},
		{"reject without id", []string{"reject", "--approver", "a"}, "--id is required"},
		{"cancel without id", []string{"cancel"}, "--id is required"},
		{"status without id", []string{"status"}, "--id is required"},
		{"stray argument", []string{"status", "--id", "x", "extra"}, "unexpected argument"},
		{"unknown flag", []string{"stake", "--amount", "1"}, "flag provided but not defined"},
		{"schedule without verb", []string{"schedule"}, "give a command"},
		{"schedule unknown verb", []string{"schedule", "explode"}, "unknown schedule command"},
		{"schedule create without id", []string{"schedule", "create", "--every", "1h", "--network", "testnet", "--staker", staker, "--sol", "1"}, "--schedule-id is required"},
		{"schedule create both specs", []string{"schedule", "create", "--schedule-id", "s", "--every", "1h", "--cron", "0 9 * * *", "--network", "testnet", "--staker", staker, "--sol", "1"}, "exactly one of --cron or --every"},
		{"schedule create no spec", []string{"schedule", "create", "--schedule-id", "s", "--network", "testnet", "--staker", staker, "--sol", "1"}, "exactly one of --cron or --every"},
		{"schedule create too often", []string{"schedule", "create", "--schedule-id", "s", "--every", "10s", "--network", "testnet", "--staker", staker, "--sol", "1"}, "at least 1m"},
		{"schedule create bad overlap", []string{"schedule", "create", "--schedule-id", "s", "--every", "1h", "--overlap", "sometimes", "--network", "testnet", "--staker", staker, "--sol", "1"}, "--overlap"},
		{"schedule create no amount", []string{"schedule", "create", "--schedule-id", "s", "--every", "1h", "--network", "testnet", "--staker", staker}, "--lamports or --sol"},
		{"schedule create bad staker", []string{"schedule", "create", "--schedule-id", "s", "--every", "1h", "--network", "testnet", "--staker", "xyz", "--sol", "1"}, "invalid staker"},
		{"schedule pause without id", []string{"schedule", "pause"}, "--schedule-id is required"},
		{"schedule unknown chain", []string{"schedule", "create", "--schedule-id", "s", "--every", "1h", "--chain", "tron", "--network", "testnet", "--staker", staker, "--sol", "1"}, `--chain "tron"`},
		{"schedule solana other operation", []string{"schedule", "create", "--schedule-id", "s", "--every", "1h", "--operation", "unstake", "--network", "testnet", "--staker", staker, "--sol", "1"}, "a Solana schedule stakes"},
		{"schedule solana with polygon flags", []string{"schedule", "create", "--schedule-id", "s", "--every", "1h", "--network", "testnet", "--staker", staker, "--sol", "1", "--validator-share", evmShare}, "are Polygon's"},
		{"schedule polygon without operation", []string{"schedule", "create", "--schedule-id", "s", "--every", "1h", "--chain", "polygon", "--network", "dev", "--staker", evmStaker, "--validator-share", evmShare}, "give --operation"},
		{"schedule polygon unstake", []string{"schedule", "create", "--schedule-id", "s", "--every", "1h", "--chain", "polygon", "--operation", "unstake", "--network", "dev", "--staker", evmStaker, "--validator-share", evmShare, "--pol", "1"}, "start it by hand"},
		{"schedule polygon delegate without amount", []string{"schedule", "create", "--schedule-id", "s", "--every", "1h", "--chain", "polygon", "--operation", "delegate", "--network", "dev", "--staker", evmStaker, "--validator-share", evmShare}, "--pol or --wei"},
		{"schedule polygon restake with amount", []string{"schedule", "create", "--schedule-id", "s", "--every", "1h", "--chain", "polygon", "--operation", "restake", "--network", "dev", "--staker", evmStaker, "--validator-share", evmShare, "--pol", "1"}, "no amount"},
		{"schedule polygon with solana flags", []string{"schedule", "create", "--schedule-id", "s", "--every", "1h", "--chain", "polygon", "--operation", "restake", "--network", "dev", "--staker", evmStaker, "--validator-share", evmShare, "--sol", "1"}, "are Solana's"},
		{"schedule polygon bad share", []string{"schedule", "create", "--schedule-id", "s", "--every", "1h", "--chain", "polygon", "--operation", "restake", "--network", "dev", "--staker", evmStaker, "--validator-share", "0x12"}, "validatorShare"},
		{"list by a step never recorded", []string{"list", "--step", "signing"}, `--step "signing" is never recorded; the recorded steps are validating, awaiting-approval, checking-validator, building, confirming`},
		{"list by an unknown step", []string{"list", "--step", "stuck"}, `--step "stuck" is never recorded`},
		{"polygon list by its wait", []string{"list", "--step", "waiting-withdrawal-delayed"}, "waiting-withdrawal-delay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := Run(context.Background(), tt.args, &out, noDial(t))
			require.ErrorContains(t, err, tt.want)
			var usage *UsageError
			require.ErrorAs(t, err, &usage)
		})
	}
}

func TestEnvironmentTwinFillsFlags(t *testing.T) {
	t.Setenv("STAKEFLOW_NETWORK", "devnet")
	var out bytes.Buffer
	err := Run(context.Background(), []string{"stake", "--staker", staker, "--sol", "1"}, &out, noDial(t))
	require.ErrorContains(t, err, `"devnet" is not one of`)
}

func TestListReasonIsOneShortLine(t *testing.T) {
	require.Equal(t, "insufficient funds", firstLine("insufficient funds\nstack trace"))
	require.Equal(t, "a", firstLine("  a \r\nb"))
	require.Equal(t, "abcd", shorten("abcd", 4))
	require.Equal(t, "abc…", shorten("abcde", 4))
	require.Equal(t, "", shorten("", 4))
}

// TestRetriesFromPendingActivities: only activities past their first attempt, or with a failure,
// are reported, with the failure in one line and the next attempt's time unless one is running.
func TestRetriesFromPendingActivities(t *testing.T) {
	next := time.Date(2026, 11, 25, 18, 42, 10, 0, time.UTC)
	desc := &workflowservice.DescribeWorkflowExecutionResponse{PendingActivities: []*workflowpb.PendingActivityInfo{
		{ActivityType: &commonpb.ActivityType{Name: "Confirm"}, Attempt: 1, State: enums.PENDING_ACTIVITY_STATE_STARTED},
		{ActivityType: &commonpb.ActivityType{Name: "Build"}, Attempt: 4, MaximumAttempts: 0,
			State:         enums.PENDING_ACTIVITY_STATE_SCHEDULED,
			LastFailure:   &failurepb.Failure{Message: "build: apiclient: POST /stake: status 500\nmore"},
			ScheduledTime: timestamppb.New(next)},
		{ActivityType: &commonpb.ActivityType{Name: "Broadcast"}, Attempt: 2, MaximumAttempts: 5,
			State: enums.PENDING_ACTIVITY_STATE_STARTED, LastFailure: &failurepb.Failure{Message: "status 429"}},
	}}
	got := retries(desc, converter.GetDefaultDataConverter())
	require.Len(t, got, 2)
	require.Equal(t, "Build attempt 4; last failure: build: apiclient: POST /stake: status 500; next attempt 2026-11-25T18:42:10Z (in 25s)",
		retryLine(got[0], next.Add(-25*time.Second)))
	require.Equal(t, "Broadcast attempt 2 of 5; last failure: status 429; attempt running", retryLine(got[1], next))
	require.Nil(t, got[1].NextAttempt)
}

// TestRetriesOpenTheSealedLastFailure: a last failure the worker sealed (payload codec, failure
// message in its encoded attributes) reads in clear through the session's converter, and not
// through one without the key; the description is left as the server gave it.
func TestRetriesOpenTheSealedLastFailure(t *testing.T) {
	f, err := codec.NewKeyFile("k1")
	require.NoError(t, err)
	raw, err := json.Marshal(f)
	require.NoError(t, err)
	keys, err := codec.ParseKeyset(raw)
	require.NoError(t, err)
	dc := codec.DataConverter(codec.New(keys))
	sealed := codec.FailureConverter(dc).ErrorToFailure(errors.New("build: apiclient: POST /stake: status 500"))
	require.NotContains(t, sealed.GetMessage(), "500", "the message is sealed")
	desc := &workflowservice.DescribeWorkflowExecutionResponse{PendingActivities: []*workflowpb.PendingActivityInfo{
		{ActivityType: &commonpb.ActivityType{Name: "Build"}, Attempt: 3, State: enums.PENDING_ACTIVITY_STATE_STARTED, LastFailure: sealed},
	}}
	got := retries(desc, dc)
	require.Len(t, got, 1)
	require.Equal(t, "build: apiclient: POST /stake: status 500", got[0].LastFailure)
	require.Equal(t, sealed.GetMessage(), desc.GetPendingActivities()[0].GetLastFailure().GetMessage())
	require.NotContains(t, retries(desc, converter.GetDefaultDataConverter())[0].LastFailure, "500")
}
