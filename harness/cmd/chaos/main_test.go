package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want func(t *testing.T, o options)
	}{
		{
			name: "defaults",
			want: func(t *testing.T, o options) {
				require.Equal(t, 200, o.cfg.Ops)
				require.Equal(t, 4, o.cfg.WorkerKills)
				require.True(t, o.cfg.RestartTemporal)
				require.Equal(t, uint64(1), o.cfg.Seed)
				require.Equal(t, 30*time.Minute, o.cfg.Timeout)
			},
		},
		{
			name: "flags",
			args: []string{"--ops", "30", "--concurrency", "5", "--worker-kills", "2", "--restart-temporal=false", "--seed", "9", "--timeout", "4m"},
			want: func(t *testing.T, o options) {
				require.Equal(t, 30, o.cfg.Ops)
				require.Equal(t, 5, o.cfg.Concurrency)
				require.Equal(t, 2, o.cfg.WorkerKills)
				require.False(t, o.cfg.RestartTemporal)
				require.Equal(t, uint64(9), o.cfg.Seed)
				require.Equal(t, 4*time.Minute, o.cfg.Timeout)
			},
		},
		{
			name: "environment twins, the flag wins",
			args: []string{"--seed", "3"},
			env:  map[string]string{"STAKEFLOW_OPS": "12", "STAKEFLOW_SEED": "8", "TEMPORAL_CLI": "/opt/temporal"},
			want: func(t *testing.T, o options) {
				require.Equal(t, 12, o.cfg.Ops)
				require.Equal(t, uint64(3), o.cfg.Seed)
				require.Equal(t, "/opt/temporal", o.cfg.TemporalCLI)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TEMPORAL_CLI", "")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			o, err := parse(tt.args)
			require.NoError(t, err)
			tt.want(t, o)
		})
	}
}

func TestParseRefusesBadValues(t *testing.T) {
	_, err := parse([]string{"--ops", "many"})
	require.Error(t, err)
	t.Setenv("STAKEFLOW_WORKER_KILLS", "x")
	_, err = parse(nil)
	require.ErrorContains(t, err, "STAKEFLOW_WORKER_KILLS")
}
