package bench

import (
	"context"

	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/harness/stack"
)

// startLocalStack starts the local stack (harness/stack) without its worker: the benchmark runs
// its own, which also registers the ceiling workflows. The dev server takes the configured extra
// dynamic configuration, and a database file in file mode; with Polygon, Hyperliquid or EigenLayer
// sides, the geth --dev chain too (its keys are also Hyperliquid's delegators, and the sandbox's
// Hyperliquid exchange and EigenLayer stand-ins come with it), and with Celestia sides the
// sandbox's Celestia ledger.
func startLocalStack(ctx context.Context, cfg Config, mode, dir string, lamportsPerStaker uint64) (*stack.Stack, error) {
	var evm *stack.EVMOptions
	if n := evmKeysOf(cfg).total; n > 0 {
		evm = &stack.EVMOptions{Stakers: n}
	}
	var celestia *stack.CelestiaOptions
	if cfg.CelestiaOps > 0 {
		// The Celestia sides' ledger: one delegator per concurrent delegate of each side.
		celestia = &stack.CelestiaOptions{Delegators: 2 * cfg.CelestiaConcurrency, BlockTime: celestiaBlockTime}
	}
	return stack.Start(ctx, stack.Options{
		EVM:                 evm,
		Celestia:            celestia,
		TemporalCLI:         cfg.TemporalCLI,
		Dir:                 dir,
		Persist:             mode == ModeFile,
		ServerDynamicConfig: cfg.ServerDynamicConfig,
		Runtime: solanart.Options{
			SlotDuration: cfg.SlotDuration, FinalizationDepth: cfg.FinalizationDepth, BlockhashValidity: cfg.BlockhashValidity,
			// Epochs turn only when the benchmark warps them.
			SlotsPerEpoch: 100_000_000,
		},
		Stakers:         cfg.Stakers,
		StakerLamports:  lamportsPerStaker,
		NoWorker:        true,
		GRPCCompression: cfg.GRPCCompression,
		ServerMetrics:   cfg.ServerMetrics,
		Logger:          cfg.SDKLogger,
	})
}

// evmKeys lays the stack's EVM keys out among the sides that use them, each side's keys its own:
// from key 0 the Polygon sides' (one address per concurrent delegate of each side), then from
// hyperliquid the Hyperliquid sides' delegators (hyperliquidDelegators each), then from
// eigenlayer the EigenLayer sides' pod owners (one each); total counts them all.
type evmKeys struct{ hyperliquid, eigenlayer, total int }

func evmKeysOf(cfg Config) evmKeys {
	var k evmKeys
	if cfg.PolygonOps > 0 {
		k.total += 2 * cfg.PolygonConcurrency
	}
	k.hyperliquid = k.total
	if cfg.HyperliquidOps > 0 {
		k.total += 2 * hyperliquidDelegators(cfg)
	}
	k.eigenlayer = k.total
	if cfg.EigenLayerOps > 0 {
		k.total += 2
	}
	return k
}
