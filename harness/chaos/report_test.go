package chaos

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/harness/sandbox"
)

// fullReport is a report in which every path happened once.
func fullReport() *Report {
	f := &FaultCounts{}
	for _, ep := range []string{sandbox.EndpointStake, sandbox.EndpointBroadcast, sandbox.EndpointValidatorStatus} {
		for _, k := range []string{Fault429, Fault500, FaultDrop} {
			f.Add(ep, k)
		}
	}
	return &Report{
		Config: Config{Ops: 3, WorkerKills: 2, RestartTemporal: true}, Faults: f, FailedByType: map[string]int{},
		RebuiltAfterExpiry: 1, AlreadyProcessed: 1, LostAnswers500: 1, LostAnswersDropped: 1, RefusedThenDone: 1,
		KillsWhileConfirming: 1, TemporalRestarts: 1,
	}
}

func TestUnexercised(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *Report)
		want []string // substrings of the messages, in order
	}{
		{name: "every path", edit: func(*Report) {}},
		{name: "no rebuild", edit: func(r *Report) { r.RebuiltAfterExpiry = 0 }, want: []string{"rebuilt after a proven expiry"}},
		{name: "no already processed", edit: func(r *Report) { r.AlreadyProcessed = 0 }, want: []string{`"already processed"`}},
		{name: "no lost answers", edit: func(r *Report) { r.LostAnswers500, r.LostAnswersDropped = 0, 0 },
			want: []string{"answer lost as a 500", "answer lost as a dropped connection"}},
		{name: "no refused re-send", edit: func(r *Report) { r.RefusedThenDone = 0 }, want: []string{"re-send refused"}},
		{name: "no kill while confirming", edit: func(r *Report) { r.KillsWhileConfirming = 0 }, want: []string{"while an operation was confirming"}},
		{name: "no kills configured", edit: func(r *Report) { r.Config.WorkerKills, r.KillsWhileConfirming = 0, 0 }},
		{name: "no Temporal restart", edit: func(r *Report) { r.TemporalRestarts = 0 }, want: []string{"Temporal dev server"}},
		{name: "no Temporal restart configured", edit: func(r *Report) { r.Config.RestartTemporal, r.TemporalRestarts = false, 0 }},
		{name: "no dropped connection on the validator status", edit: func(r *Report) { r.Faults.n[[2]string{sandbox.EndpointValidatorStatus, FaultDrop}] = 0 },
			want: []string{"validator status: dropped connection"}},
		{name: "build faults on any build endpoint", edit: func(r *Report) {
			r.Faults.n[[2]string{sandbox.EndpointStake, Fault429}] = 0
			r.Faults.Add(sandbox.EndpointWithdraw, Fault429)
		}},
		{name: "no 429 on a build", edit: func(r *Report) { r.Faults.n[[2]string{sandbox.EndpointStake, Fault429}] = 0 },
			want: []string{"build: 429 with Retry-After"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fullReport()
			tt.edit(r)
			got := r.Unexercised()
			require.Len(t, got, len(tt.want), "%v", got)
			for i, m := range got {
				require.Contains(t, m, tt.want[i])
				require.Contains(t, m, "never happened (forced by: ", "the message says how the path was to be forced")
			}
		})
	}
}

func TestWriteNamesMissingPaths(t *testing.T) {
	r := fullReport()
	var out strings.Builder
	require.NoError(t, r.Write(&out))
	require.Contains(t, out.String(), "paths the run must exercise")
	require.NotContains(t, out.String(), "MISSING")
	require.NotContains(t, out.String(), "NOT EXERCISED")

	r.RefusedThenDone = 0
	out.Reset()
	require.NoError(t, r.Write(&out))
	require.Contains(t, out.String(), "MISSING")
	require.Contains(t, out.String(), "1 PATHS NOT EXERCISED:\n  - re-send refused after a lost answer")
}
