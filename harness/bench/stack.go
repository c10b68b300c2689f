package bench

import (
	"context"

	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/harness/stack"
)

// startLocalStack starts the local stack (harness/stack) without its worker: the benchmark runs
// its own, which also registers the ceiling workflows. The dev server takes the configured extra
// dynamic configuration, and a database file in file mode; with Polygon sides, the geth --dev
// chain too, and with Celestia sides the sandbox's Celestia ledger.
func startLocalStack(ctx context.Context, cfg Config, mode, dir string, lamportsPerStaker uint64) (*stack.Stack, error) {
	var evm *stack.EVMOptions
	if cfg.PolygonOps > 0 {
		// The Polygon sides' chain: one address per concurrent delegate of each side.
		evm = &stack.EVMOptions{Stakers: 2 * cfg.PolygonConcurrency}
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
