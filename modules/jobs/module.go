// Package jobs is the worker's module of the data jobs (rewards, APY, SSV requests): they read the
// staking service and write the worker's store, on the jobs task queue. It signs nothing.
//
// The jobs' code lives in workflows/jobs, activities/jobs and store.
package jobs

import (
	"context"
	"errors"
	"flag"

	sdkworker "go.temporal.io/sdk/worker"

	actjobs "github.com/stakeflow/stakeflow/activities/jobs"
	"github.com/stakeflow/stakeflow/internal/module"
	wfjobs "github.com/stakeflow/stakeflow/workflows/jobs"
)

// Module is the data jobs' module; Serve turns it on (--jobs, on by default). Workers that write
// different stores must not both serve it: each run would write to whichever picked it.
type Module struct{ Serve bool }

// New is the jobs module, on.
func New() *Module { return &Module{Serve: true} }

// Name is wfjobs.Module.
func (m *Module) Name() string { return wfjobs.Module }

// Workflows registers the module's workflows on r.
func (m *Module) Workflows(r sdkworker.WorkflowRegistry) {
	wfjobs.Register(r)
}

// Flags adds --jobs to fs.
func (m *Module) Flags(fs *flag.FlagSet) {
	fs.BoolVar(&m.Serve, "jobs", m.Serve, "serve the data jobs (rewards, APY, SSV requests), writing the store of --store; one store per deployment: turn it off on workers of another store")
}

// Enabled is Serve.
func (m *Module) Enabled() bool { return m.Serve }

// Validate accepts every setting: there is none to get wrong.
func (m *Module) Validate() error { return nil }

// Build builds the jobs' activities over the staking service and the store.
func (m *Module) Build(_ context.Context, env module.Env) (module.Built, error) {
	st, ok := env.Store.(actjobs.Store)
	if !ok {
		return module.Built{}, errors.New("the data jobs need the worker's store")
	}
	acts := actjobs.New(env.Service, st)
	return module.Built{Activities: []any{acts}}, nil
}
