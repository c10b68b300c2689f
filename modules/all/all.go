// Package all lists the modules: adding a chain is one import and one line here. The worker
// serves them (Modules) and the admin tool takes their command groups (StarterGroups).
package all

import (
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/internal/starter"
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

// StarterGroups are the command groups the modules contribute to `starter`, in the modules'
// order.
func StarterGroups() []starter.Group {
	var out []starter.Group
	for _, m := range Modules() {
		if g, ok := m.(interface{ StarterGroups() []starter.Group }); ok {
			out = append(out, g.StarterGroups()...)
		}
	}
	return out
}
