// Package all lists the worker's modules: adding a chain is one import and one line here.
package all

import (
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/modules/celestia"
	"github.com/stakeflow/stakeflow/modules/evm"
	"github.com/stakeflow/stakeflow/modules/hyperliquid"
	"github.com/stakeflow/stakeflow/modules/jobs"
	"github.com/stakeflow/stakeflow/modules/solana"
	"github.com/stakeflow/stakeflow/modules/ton"
)

// Modules are every module, each with its settings' defaults, in the order the worker builds them.
func Modules() []module.Module {
	return []module.Module{
		solana.New(),
		evm.New(),
		celestia.New(),
		hyperliquid.New(),
		ton.New(),
		jobs.New(),
	}
}
