package chaos

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/stakeflow/stakeflow/harness/sandbox"
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
		require.GreaterOrEqual(t, op.Lamports, minStake)
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

// The least stake the Solana runtime accepts, 1.00228288 SOL: the worker's refusal of a planned
// stake of 1.001333561 SOL (seed 31, operation 294 of 400) read the stake account's rent-exempt
// reserve (0.00228288 SOL) and the minimum delegation (1 SOL) from the runtime.
const runtimeMinStake = uint64(1_002_282_880)

func TestPlannedStakesAreAtLeastTheChainsMinimum(t *testing.T) {
	require.Equal(t, runtimeMinStake, minStake)
	ops := PlanOps(31, 400, 0.4)
	require.Equal(t, "chaos-31-0294-stake", ops[294].StakeID)
	for seed := uint64(1); seed <= 200; seed++ {
		for _, op := range PlanOps(seed, 400, 0.4) {
			require.GreaterOrEqual(t, op.Lamports, runtimeMinStake, "seed %d: %s", seed, op.StakeID)
		}
	}
}

// minimums answers the chain's minimum for a stake account, or an error.
type minimums struct {
	rent, delegation uint64
	err              error
}

func (m minimums) RentExemptMinimum(_ context.Context, size uint64) (uint64, error) {
	if size != 200 {
		return 0, fmt.Errorf("asked the reserve of %d bytes, not a stake account's 200", size)
	}
	return m.rent, m.err
}

func (m minimums) MinimumDelegation(context.Context) (uint64, error) { return m.delegation, m.err }

func TestCheckPlanMinimumRefusesAStakeUnderTheChainsMinimum(t *testing.T) {
	ops := []OpSpec{{StakeID: "a", Lamports: 1_002_282_880}, {StakeID: "b", Lamports: 1_002_282_879}}
	chain := minimums{rent: 2_282_880, delegation: 1_000_000_000}
	require.NoError(t, checkPlanMinimum(context.Background(), chain, ops[:1]), "a stake of exactly the minimum")
	err := checkPlanMinimum(context.Background(), chain, ops)
	require.ErrorContains(t, err, "b would stake 1002282879 lamports, under the runtime's minimum of 1002282880 (rent-exempt reserve 2282880 plus minimum delegation 1000000000)")
	require.ErrorContains(t, checkPlanMinimum(context.Background(), minimums{err: errors.New("down")}, ops[:1]), "down")
}

func TestScheduleEvents(t *testing.T) {
	tests := []struct {
		name     string
		kills    int
		restart  bool
		wantKill bool
		wantKind map[EventKind]int
	}{
		{name: "kills and a restart", kills: 4, restart: true, wantKill: true,
			wantKind: map[EventKind]int{EventForcedExpiry: 1, EventKillWorker: 3, EventRestartTemporal: 1, EventLostResponseDrop: 1}},
		{name: "one kill: the forced expiry's", kills: 1, wantKill: true,
			wantKind: map[EventKind]int{EventForcedExpiry: 1, EventLostResponseDrop: 1}},
		{name: "no process faults", kills: 0, restart: false,
			wantKind: map[EventKind]int{EventForcedExpiry: 1, EventLostResponseDrop: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := ScheduleEvents(7, tt.kills, tt.restart)
			require.Equal(t, evs, ScheduleEvents(7, tt.kills, tt.restart), "reproducible")
			require.Equal(t, EventForcedExpiry, evs[0].Kind, "the forced expiry comes first")
			require.Zero(t, evs[0].Progress, "at once")
			require.Equal(t, tt.wantKill, evs[0].KillWorker, "the forced expiry makes the first kill")
			require.Equal(t, tt.wantKill, evs[0].Pause > 0)
			got := map[EventKind]int{EventForcedExpiry: 1}
			for i, ev := range evs[1:] {
				got[ev.Kind]++
				require.LessOrEqual(t, evs[i].Progress, ev.Progress, "in progress order")
				require.Greater(t, ev.Progress, 0.0)
				require.LessOrEqual(t, ev.Progress, 0.75, "every fault lands while a quarter of the operations still run")
				require.False(t, ev.KillWorker)
				if ev.Kind != EventLostResponseDrop {
					require.Positive(t, ev.Pause)
				}
			}
			require.Equal(t, tt.wantKind, got)
		})
	}
}

func TestServiceFaults(t *testing.T) {
	for _, stage := range []FaultStage{StageLostAnswer500, StageDropBroadcast, StageLostAnswerDrop} {
		t.Run(stage.String(), func(t *testing.T) {
			cfg := ServiceFaults(3, stage)
			require.NoError(t, cfg.Validate())
			require.Equal(t, cfg, ServiceFaults(3, stage), "reproducible")
			first := ServiceFaults(3, StageLostAnswer500)
			for _, ep := range faultEndpoints {
				f, ok := cfg.Endpoints[ep]
				require.True(t, ok, ep)
				require.Positive(t, f.Rate429)
				require.Positive(t, f.Rate500)
				require.Positive(t, f.RateDrop)
				require.Positive(t, f.Latency)
				require.Equal(t, 1, f.RetryAfterSeconds)
				require.Equal(t, first.Endpoints[ep], f, "the same endpoint faults in every stage")
			}
			require.Zero(t, cfg.BroadcastLoseThenRefuse.Next, "the refused re-send is armed once, by OpeningFaults")
			switch stage {
			case StageDropBroadcast:
				require.Equal(t, sandbox.LostResponse{Next: 1}, cfg.BroadcastDropped)
				require.Zero(t, cfg.BroadcastLostResponse, "no lost answer may hide the dropped broadcast")
			case StageLostAnswer500:
				require.Zero(t, cfg.BroadcastDropped)
				require.Equal(t, 1, cfg.BroadcastLostResponse.Next)
				require.Positive(t, cfg.BroadcastLostResponse.Rate)
				require.False(t, cfg.BroadcastLostResponse.Drop)
				require.False(t, cfg.BroadcastLoseThenRefuse.Drop)
			case StageLostAnswerDrop:
				require.Zero(t, cfg.BroadcastDropped)
				require.Equal(t, 1, cfg.BroadcastLostResponse.Next)
				require.True(t, cfg.BroadcastLostResponse.Drop)
				require.True(t, cfg.BroadcastLoseThenRefuse.Drop, "a carried-over refused re-send loses its answer as the stage does")
			}
		})
	}
	require.NotEqual(t, ServiceFaults(3, StageLostAnswer500).Seed, ServiceFaults(3, StageLostAnswerDrop).Seed, "each stage draws its own faults")
}

func TestOpeningFaults(t *testing.T) {
	cfg := OpeningFaults(3)
	require.NoError(t, cfg.Validate())
	stage := ServiceFaults(3, StageLostAnswer500)
	for _, ep := range faultEndpoints {
		f := cfg.Endpoints[ep]
		require.Equal(t, []int{1, 1, 1}, []int{f.Next429, f.Next500, f.NextDrop}, "the first 429, 500 and drop of %s are forced", ep)
		f.Next429, f.Next500, f.NextDrop = 0, 0, 0
		require.Equal(t, stage.Endpoints[ep], f, "otherwise the stage's faults")
	}
	require.Equal(t, sandbox.LostResponse{Next: 1}, cfg.BroadcastLoseThenRefuse)
	require.Equal(t, stage.BroadcastLostResponse, cfg.BroadcastLostResponse)
}

func TestCarryCounts(t *testing.T) {
	cur := OpeningFaults(5)
	f := cur.Endpoints[sandbox.EndpointUnstake]
	f.Next429 = 0 // used
	cur.Endpoints[sandbox.EndpointUnstake] = f
	next := carryCounts(ServiceFaults(5, StageDropBroadcast), cur)
	require.NoError(t, next.Validate())
	u := next.Endpoints[sandbox.EndpointUnstake]
	require.Equal(t, []int{0, 1, 1}, []int{u.Next429, u.Next500, u.NextDrop}, "the forced faults not used yet carry over")
	require.Equal(t, 1, next.Endpoints[sandbox.EndpointWithdraw].NextDrop)
	require.Equal(t, 1, next.BroadcastDropped.Next, "the stage's own broadcast faults stay")
	require.Equal(t, 1, next.BroadcastLoseThenRefuse.Next, "a refused re-send not taken yet carries over")

	last := carryCounts(ServiceFaults(5, StageLostAnswerDrop), next)
	require.Equal(t, sandbox.LostResponse{Next: 1, Drop: true}, last.BroadcastLoseThenRefuse)
	require.Equal(t, 1, last.BroadcastLostResponse.Next)

	next.BroadcastLoseThenRefuse.Next = 0 // taken
	require.Zero(t, carryCounts(ServiceFaults(5, StageLostAnswerDrop), next).BroadcastLoseThenRefuse.Next, "taken once, never armed again")
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

// TestCountingCoreBroadcastFaults: the broadcast handler's own entries (a dropped broadcast, a
// refused re-send) carry no endpoint field and count under the broadcast endpoint, with their
// signatures kept once each; lost answers split by the mode in force.
func TestCountingCoreBroadcastFaults(t *testing.T) {
	counts := &FaultCounts{}
	next, _ := newObserver()
	l := zap.New(newCountingCore(next, counts))
	l.Info("injected fault", zap.String("fault", FaultDropped), zap.String("txSig", "sigA"))
	l.Info("injected fault", zap.String("fault", FaultRefusedResend), zap.String("txSig", "sigB"))
	l.Info("injected fault", zap.String("fault", FaultRefusedResend), zap.String("txSig", "sigB"))
	lost := l.With(zap.String("endpoint", "broadcast"))
	lost.Info("injected fault", zap.String("fault", FaultLostResponse))
	counts.SetLostAnswerDrop(true)
	lost.Info("injected fault", zap.String("fault", FaultLostResponse))
	lost.Info("injected fault", zap.String("fault", FaultLostResponse))

	require.Equal(t, 1, counts.Get(sandbox.EndpointBroadcast, FaultDropped))
	require.Equal(t, 2, counts.Get(sandbox.EndpointBroadcast, FaultRefusedResend))
	require.Equal(t, []string{"sigA"}, counts.Signatures(FaultDropped))
	require.Equal(t, []string{"sigB"}, counts.Signatures(FaultRefusedResend))
	require.Equal(t, 3, counts.Get(sandbox.EndpointBroadcast, FaultLostResponse))
	require.Equal(t, 1, counts.Get(sandbox.EndpointBroadcast, FaultLostAnswer500))
	require.Equal(t, 2, counts.Get(sandbox.EndpointBroadcast, FaultLostAnswerDrop))
	require.Equal(t, 6, counts.Total(), "a lost answer counts once in the total")
	require.Equal(t, []string{"broadcast"}, counts.Endpoints())
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
