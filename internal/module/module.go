// Package module is the seam between the worker and the chains. Each chain family (Solana, the
// EVM chains, Celestia, Hyperliquid, TON) and the data jobs is one Module: it declares its
// settings, checks them, builds its activities and the readers that prove their networks, and
// registers its workflows and activities on its own task queue. The worker loops over the
// modules it is configured for (modules/all lists them) and knows no chain by name.
//
// A module holds only its own keys and serves only its own queue: a worker started with Celestia
// settings alone holds no Solana key and never receives a Solana task, and an operation of one
// chain can never take the pollers, the keys or the readiness of another.
package module

import (
	"context"
	"flag"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/approval"
	"github.com/stakeflow/stakeflow/internal/hsmkeys"
)

// A Module is one chain family (or the data jobs) as the worker sees it.
type Module interface {
	// Name names the module in its task queue (workflows.TaskQueueOf), logs, /readyz and errors.
	Name() string
	// Flags adds the module's settings to fs, each flag named with the module's own prefix.
	Flags(fs *flag.FlagSet)
	// Enabled reports whether the settings ask this worker to serve the module.
	Enabled() bool
	// Workflows registers the module's workflows on r: all of them, whatever the settings (the
	// replay tests and the contract read them from here too).
	Workflows(r sdkworker.WorkflowRegistry)
	// Validate checks the settings; the error names every setting that is wrong. It is called
	// on a module that is not enabled too: a setting of a module left off is an error, not
	// silently ignored.
	Validate() error
	// Build builds the module for one worker from its settings and what the worker shares. It
	// runs only when the module is enabled, after Validate.
	Build(ctx context.Context, env Env) (Built, error)
}

// Env is what the worker shares with the modules it runs.
type Env struct {
	// TaskQueue is the module's own queue: the one its worker polls, where its operations are
	// started and where it starts its leases.
	TaskQueue string
	Logger    *zap.Logger
	// Metrics records the module's readers' proofs (nil: none recorded).
	Metrics client.MetricsHandler
	// Service is the staking service's client, every call counted and timed.
	Service *apiclient.Client
	// Temporal is the worker's client (the leases are started and their holders described
	// through it).
	Temporal client.Client
	// Store is the worker's store (package store's *DB; a test's in its place): each module takes
	// the part it needs by interface (the data jobs' records, Hyperliquid's nonce book), so the
	// worker knows none of them.
	Store any
	// EpochRecheck caps every wait for a chain's epoch or queue before the chain is read again.
	EpochRecheck time.Duration
	// HSM is the worker's PKCS#11 token (--pkcs11-*), shared by every module whose keys are in
	// it (--<chain>-hsm-keys); nil when none is configured.
	HSM *hsmkeys.Token
	// Approvers are the worker's approvers (--approvers): a module whose operations wait for
	// approval carries them in its policy decision (activities.PolicyDecision.Approvers), so that
	// decisions must be signed by their keys. None: decisions name their approver in free text.
	Approvers []approval.Approver
}

// Built is a module built for one worker.
type Built struct {
	// Activities are the structs whose methods are the module's activities, registered on its
	// queue's worker beside its Workflows.
	Activities []any
	// Keys counts the keys the module signs with; nil when it signs nothing. A module that signs
	// and holds no key keeps the worker unready.
	Keys func() int
	// Networks are the readers that prove they serve their network; the worker keeps them
	// checking until it stops, and /readyz names those not proven.
	Networks []Network
}

// A Network is a chain reader that proves it serves its network, and keeps proving it.
type Network interface {
	// Verified is nil once the network is proven, else why it is not (naming the network).
	Verified() error
	// Run checks the network until ctx is done: again after a failure, and periodically.
	Run(ctx context.Context)
}

// Find returns the module of type M among mods (ok false when there is none): how a program
// that builds the worker's configuration in code reaches one module's settings.
func Find[M Module](mods []Module) (m M, ok bool) {
	for _, x := range mods {
		if m, ok = x.(M); ok {
			return m, true
		}
	}
	return m, false
}
