package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/stakeflow/stakeflow/sandbox"
)

func TestPlanOpsIsReproducible(t *testing.T) {
	a, b := PlanOps(42, 50, 0.4), PlanOps(42, 50, 0.4)
	require.Equal(t, a, b, "the same seed gives the same plan, keys included")
	c := PlanOps(43, 50, 0.4)
	require.NotEqual(t, a[0].Staker, c[0].Staker, "another seed gives other stakers")
	require.Equal(t, "chaos-42-0007-stake", a[7].StakeID)

	stakers := map[string]bool{}
	chains := 0
	for i, op := range a {
		require.Equal(t, i, op.Index)
		require.False(t, stakers[op.Staker.String()], "one staker per operation")
		stakers[op.Staker.String()] = true
		require.GreaterOrEqual(t, op.Lamports, sol)
		require.Equal(t, op.Lamports+fundingMargin, op.Funding)
		require.Equal(t, op.key.PublicKey(), op.Staker)
		if op.Kind == KindChain {
			chains++
			require.Equal(t, op.StakeID[:len(op.StakeID)-len("stake")]+"unstake", op.UnstakeID)
		} else {
			require.Empty(t, op.UnstakeID)
		}
	}
	require.InDelta(t, 20, chains, 10, "about 40%% chains")
}

func TestScheduleEvents(t *testing.T) {
	tests := []struct {
		name     string
		kills    int
		restart  bool
		wantKind map[EventKind]int
	}{
		{name: "kills and a restart", kills: 4, restart: true, wantKind: map[EventKind]int{EventKillWorker: 4, EventRestartTemporal: 1, EventLostResponseDrop: 1}},
		{name: "no process faults", kills: 0, restart: false, wantKind: map[EventKind]int{EventLostResponseDrop: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := ScheduleEvents(7, tt.kills, tt.restart)
			require.Equal(t, evs, ScheduleEvents(7, tt.kills, tt.restart), "reproducible")
			got := map[EventKind]int{}
			for i, ev := range evs {
				got[ev.Kind]++
				if i > 0 {
					require.LessOrEqual(t, evs[i-1].Progress, ev.Progress, "in progress order")
				}
				require.Greater(t, ev.Progress, 0.0)
				require.LessOrEqual(t, ev.Progress, 0.75, "every fault lands while a quarter of the operations still run")
				if ev.Kind != EventLostResponseDrop {
					require.Positive(t, ev.Pause)
				}
			}
			require.Equal(t, tt.wantKind, got)
		})
	}
}

func TestServiceFaults(t *testing.T) {
	cfg := ServiceFaults(3, true)
	require.NoError(t, cfg.Validate())
	require.Equal(t, cfg, ServiceFaults(3, true))
	for _, ep := range []string{sandbox.EndpointStake, sandbox.EndpointUnstake, sandbox.EndpointWithdraw,
		sandbox.EndpointBroadcast, sandbox.EndpointValidatorStatus} {
		f, ok := cfg.Endpoints[ep]
		require.True(t, ok, ep)
		require.Positive(t, f.Rate429)
		require.Positive(t, f.Rate500)
		require.Positive(t, f.RateDrop)
		require.Positive(t, f.Latency)
		require.Equal(t, 1, f.RetryAfterSeconds)
	}
	require.Positive(t, cfg.BroadcastLostResponse.Rate)
	require.True(t, cfg.BroadcastLostResponse.Drop)
	require.False(t, ServiceFaults(3, false).BroadcastLostResponse.Drop)
}

func TestConfigValidate(t *testing.T) {
	ok := Config{TemporalCLI: "/bin/temporal"}.withDefaults()
	require.NoError(t, ok.Validate())
	tests := []struct {
		name  string
		edit  func(*Config)
		field string
	}{
		{"no ops", func(c *Config) { c.Ops = -1 }, "ops"},
		{"no concurrency", func(c *Config) { c.Concurrency = -2 }, "concurrency"},
		{"share above one", func(c *Config) { c.ChainShare = 1.5 }, "chain share"},
		{"negative kills", func(c *Config) { c.WorkerKills = -1 }, "worker kills"},
		{"no CLI", func(c *Config) { c.TemporalCLI = "" }, "Temporal CLI"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			require.ErrorContains(t, c.Validate(), tt.field)
		})
	}
}

// TestCountingCore counts the sandbox's "injected fault" entries by endpoint and kind, whether
// the endpoint comes from a child logger's fields or the entry's own, and passes every entry on.
func TestCountingCore(t *testing.T) {
	counts := &FaultCounts{}
	next, logs := newObserver()
	l := zap.New(newCountingCore(next, counts))
	l.With(zap.String("requestId", "r1"), zap.String("endpoint", "broadcast")).Info("injected fault", zap.String("fault", Fault429))
	l.With(zap.String("endpoint", "broadcast")).Info("injected fault", zap.String("fault", FaultLostResponse))
	l.Info("injected fault", zap.String("endpoint", "stake"), zap.String("fault", FaultDrop))
	l.With(zap.String("endpoint", "stake")).Info("request failed", zap.String("fault", "ignored"))
	require.Equal(t, 1, counts.Get("broadcast", Fault429))
	require.Equal(t, 1, counts.Get("broadcast", FaultLostResponse))
	require.Equal(t, 1, counts.Get("stake", FaultDrop))
	require.Equal(t, 3, counts.Total())
	require.Equal(t, []string{"broadcast", "stake"}, counts.Endpoints())
	require.Equal(t, 4, logs(), "every entry reaches the next core")
}

// newObserver is a core that counts the entries written to it.
func newObserver() (zapcore.Core, func() int) {
	c := &countCore{LevelEnabler: zapcore.DebugLevel}
	return c, func() int { return c.n }
}

type countCore struct {
	zapcore.LevelEnabler
	n int
}

func (c *countCore) With([]zapcore.Field) zapcore.Core { return c }
func (c *countCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	return ce.AddCore(e, c)
}
func (c *countCore) Write(zapcore.Entry, []zapcore.Field) error { c.n++; return nil }
func (c *countCore) Sync() error                                { return nil }

func TestSleepCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	require.True(t, sleepCtx(ctx, time.Millisecond))
	cancel()
	require.False(t, sleepCtx(ctx, time.Hour))
}
