package contract

import (
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"strings"

	"go.temporal.io/sdk/activity"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/internal/worker"
	"github.com/stakeflow/stakeflow/lease"
	"github.com/stakeflow/stakeflow/modules/all"
	"github.com/stakeflow/stakeflow/workflows"
	wfcelestia "github.com/stakeflow/stakeflow/workflows/celestia"
	wfeigenlayer "github.com/stakeflow/stakeflow/workflows/eigenlayer"
	wfhyperliquid "github.com/stakeflow/stakeflow/workflows/hyperliquid"
	wfjobs "github.com/stakeflow/stakeflow/workflows/jobs"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
	wfton "github.com/stakeflow/stakeflow/workflows/ton"
)

// Handler is a query or an update.
type Handler struct {
	Name string
	// Input is the type of the handler's one argument; nil when it takes none.
	Input reflect.Type
	// Result is the type of what it returns.
	Result reflect.Type
}

// Workflow is a workflow type admin tools may start.
type Workflow struct {
	// Type is the workflow type name, as `temporal workflow start --type` takes it.
	Type string
	// Module is the worker module serving it: runs start on its task queue,
	// workflows.TaskQueueOf(prefix, Module).
	Module string
	// Chain is the StakeflowChain of its operations; Networks the values its input's network takes.
	Chain    string
	Networks []string
	// Input and Result are the types of the workflow function's argument and result.
	Input, Result reflect.Type
	// Queries and Updates are the handlers every run answers.
	Queries, Updates []Handler
}

// Queries are the queries every operation answers.
var Queries = []Handler{
	{Name: workflows.QueryStatus, Result: reflect.TypeFor[workflows.Status]()},
}

// Updates are the updates every operation accepts: each returns the status once the decision is
// recorded.
var Updates = []Handler{
	{Name: workflows.UpdateApprove, Input: reflect.TypeFor[workflows.ApprovalInput](), Result: reflect.TypeFor[workflows.Status]()},
	{Name: workflows.UpdateReject, Input: reflect.TypeFor[workflows.ApprovalInput](), Result: reflect.TypeFor[workflows.Status]()},
}

// Internal names the workflow types the worker registers for its own use, and why admin tools
// must not start them.
var Internal = map[string]string{
	workflows.NotifyWorkflowType: "the delivery of one event of an operation to the worker's webhook (--notify-webhook): " +
		"started by the operation itself, as an abandoned child whose ID is the event's",
	lease.WorkflowType: "the nonce lease of an address: one per chain family, network and address, started by the operations' " +
		"request activity (EVMRequestLease, CelestiaRequestLease, HLRequestLease), which hands out nonces in order; " +
		"a run started by hand would hand out nonces no operation tracks",
	wfjobs.APYJobWorkflowType: "the network APY job: started by a schedule (starter schedule create --job apy), one per network, " +
		"so that one job of a kind runs per scope at a time",
	wfjobs.RewardsJobWorkflowType: "the delegator rewards job: started by a schedule (starter schedule create --job rewards), " +
		"one per network and address",
	wfjobs.SSVJobWorkflowType: "the SSV set-up requests job: started by a schedule (starter schedule create --job ssv)",
}

// chains maps the package of a chain's workflows to what the contract says of that chain.
var chains = map[string]struct {
	chain    string
	networks []string
}{
	pkgOf(wfsolana.StakeWorkflow):  {wfsolana.Chain, networks.Solana.Names()},
	pkgOf(wfpolygon.Delegate):      {wfpolygon.Chain, networks.EVM.Names()},
	pkgOf(wfcelestia.Delegate):     {wfcelestia.Chain, networks.Celestia.Names()},
	pkgOf(wfton.Watch):             {wfton.Chain, networks.TON.Names()},
	pkgOf(wfhyperliquid.Withdraw):  {wfhyperliquid.Chain, networks.Hyperliquid.Names()},
	pkgOf(wfsolana.StakeWorkflow):  {wfsolana.Chain, networks.Solana.Names()},
	pkgOf(wfpolygon.Delegate):      {wfpolygon.Chain, networks.EVM.Names()},
	pkgOf(wfeigenlayer.Checkpoint): {wfeigenlayer.Chain, networks.EVM.Names()},
}

// Workflows lists the workflow types admin tools may start, sorted by type name: every workflow the
// worker registers except the Internal ones, with its input and result types read from the
// function's signature.
func Workflows() ([]Workflow, error) {
	fns, modules, err := registered()
	if err != nil {
		return nil, err
	}
	var out []Workflow
	for _, name := range sortedKeys(fns) {
		if _, internal := Internal[name]; internal {
			continue
		}
		fn := fns[name]
		t := reflect.TypeOf(fn)
		ctx := reflect.TypeFor[workflow.Context]()
		if t.NumIn() != 2 || t.In(0) != ctx || t.NumOut() != 2 || t.Out(1) != reflect.TypeFor[error]() {
			return nil, fmt.Errorf("workflow %s: %s is not func(workflow.Context, Input) (Result, error)", name, t)
		}
		c, ok := chains[pkgOf(fn)]
		if !ok {
			return nil, fmt.Errorf("workflow %s: package %s is not a chain the contract knows", name, pkgOf(fn))
		}
		out = append(out, Workflow{
			Type: name, Module: modules[name], Chain: c.chain, Networks: c.networks,
			Input: t.In(1), Result: t.Out(0),
			Queries: Queries, Updates: Updates,
		})
	}
	return out, nil
}

// Registered lists every workflow type the worker registers, internal ones included, sorted.
func Registered() ([]string, error) {
	fns, _, err := registered()
	if err != nil {
		return nil, err
	}
	return sortedKeys(fns), nil
}

// registered registers the worker's workflows on recorders, as the worker registers them on each
// module's queue: the functions by type name. A type registered twice on one queue is an error;
// on two queues (a lease each module runs on its own) it is listed once. modules names the module
// of each type (the last to register it).
func registered() (fns map[string]any, modules map[string]string, err error) {
	fns, modules = map[string]any{}, map[string]string{}
	for _, m := range all.Modules() {
		rec := &recorder{fns: map[string]any{}}
		worker.RegisterCommon(rec, nil)
		m.Workflows(rec)
		if rec.err != nil {
			return nil, nil, fmt.Errorf("module %s: %w", m.Name(), rec.err)
		}
		for name, fn := range rec.fns {
			fns[name], modules[name] = fn, m.Name()
		}
	}
	return fns, modules, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// recorder is a registry that only records the workflows registered on it, by type name.
type recorder struct {
	// Registry is nil: the worker registers workflows and activities only, and Nexus services
	// would panic here.
	sdkworker.Registry
	fns map[string]any
	err error
}

func (r *recorder) RegisterWorkflow(w any) { r.add(funcName(w), w) }

func (r *recorder) RegisterWorkflowWithOptions(w any, o workflow.RegisterOptions) {
	name := o.Name
	if name == "" {
		name = funcName(w)
	}
	r.add(name, w)
}

func (r *recorder) RegisterActivity(any) {}

func (r *recorder) RegisterActivityWithOptions(any, activity.RegisterOptions) {}

func (r *recorder) add(name string, w any) {
	if _, dup := r.fns[name]; dup && r.err == nil {
		r.err = fmt.Errorf("workflow type %s registered twice", name)
	}
	r.fns[name] = w
}

// funcName is the type name the SDK gives a workflow registered without one: the function's
// short name.
func funcName(fn any) string {
	full := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	return strings.TrimSuffix(full[strings.LastIndex(full, ".")+1:], "-fm")
}

// pkgOf is the import path of a function's package.
func pkgOf(fn any) string {
	full := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	slash := strings.LastIndex(full, "/")
	return full[:slash+strings.Index(full[slash:], ".")]
}
