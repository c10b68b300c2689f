// Package ton is the worker's TON module: it follows TON transactions to their final word
// through the staking service (endpoint 9), on the TON task queue. It signs nothing and holds no
// key.
//
// TON's code lives in workflows/ton and activities/ton.
package ton

import (
	"context"
	"flag"

	sdkworker "go.temporal.io/sdk/worker"

	actton "github.com/stakeflow/stakeflow/activities/ton"
	"github.com/stakeflow/stakeflow/internal/module"
	wfton "github.com/stakeflow/stakeflow/workflows/ton"
)

// Module is the TON module; Serve turns it on (--ton, on by default).
type Module struct{ Serve bool }

// New is the TON module, on.
func New() *Module { return &Module{Serve: true} }

// Name is wfton.Module.
func (m *Module) Name() string { return wfton.Module }

// Workflows registers the module's workflows on r.
func (m *Module) Workflows(r sdkworker.WorkflowRegistry) {
	wfton.Register(r)
}

// Flags adds --ton to fs.
func (m *Module) Flags(fs *flag.FlagSet) {
	fs.BoolVar(&m.Serve, "ton", m.Serve, "serve TON's operations (it needs only the staking service)")
}

// Enabled is Serve.
func (m *Module) Enabled() bool { return m.Serve }

// Validate accepts every setting: there is none to get wrong.
func (m *Module) Validate() error { return nil }

// Build builds the activities over the staking service.
func (m *Module) Build(_ context.Context, env module.Env) (module.Built, error) {
	acts := &actton.Activities{Service: env.Service}
	return module.Built{Activities: []any{acts}}, nil
}
