package bench

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"

	"github.com/nexus-rpc/sdk-go/nexus"
	"go.temporal.io/sdk/activity"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actsolana "github.com/stakeflow/stakeflow/activities/solana"
)

// The ceiling is the stake's own workflow code with activities that do nothing: the workflows
// the stake's worker registers, registered as they are, and in place of each activity it
// registers a no-op of the same name and signature. Its shape is therefore the stake's by
// construction: an activity the stake gains, the ceiling runs the same day, local or normal, with
// the options the workflow gives it. It runs on a task queue of its own (the activity names are
// the stake's), served by a worker with the stake worker's settings.

// Registration is what a worker registration function registered, in order: RegisterCeiling
// reads the stake worker's registration through it, and the test compares both.
type Registration struct {
	// Workflows are the workflow functions with their options.
	Workflows []WorkflowRegistration
	// Activities are the activity functions or struct pointers with their options.
	Activities []ActivityRegistration
	// unsupported names registrations a ceiling cannot copy (dynamic ones, Nexus services).
	unsupported []string
}

// WorkflowRegistration is one workflow registration.
type WorkflowRegistration struct {
	Fn      any
	Options workflow.RegisterOptions
}

// ActivityRegistration is one activity registration: a function or a pointer to a struct whose
// exported methods are activities.
type ActivityRegistration struct {
	Fn      any
	Options activity.RegisterOptions
}

var _ sdkworker.Registry = (*Registration)(nil)

// Record runs register on a Registration and returns what it registered.
func Record(register func(sdkworker.Registry)) *Registration {
	r := &Registration{}
	register(r)
	return r
}

// RegisterWorkflow records a workflow.
func (r *Registration) RegisterWorkflow(w any) {
	r.RegisterWorkflowWithOptions(w, workflow.RegisterOptions{})
}

// RegisterWorkflowWithOptions records a workflow with its options.
func (r *Registration) RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions) {
	r.Workflows = append(r.Workflows, WorkflowRegistration{Fn: w, Options: options})
}

// RegisterDynamicWorkflow records that a dynamic workflow was registered, which a ceiling cannot copy.
func (r *Registration) RegisterDynamicWorkflow(any, workflow.DynamicRegisterOptions) {
	r.unsupported = append(r.unsupported, "a dynamic workflow")
}

// RegisterActivity records an activity function or struct.
func (r *Registration) RegisterActivity(a any) {
	r.RegisterActivityWithOptions(a, activity.RegisterOptions{})
}

// RegisterActivityWithOptions records an activity function or struct with its options.
func (r *Registration) RegisterActivityWithOptions(a any, options activity.RegisterOptions) {
	r.Activities = append(r.Activities, ActivityRegistration{Fn: a, Options: options})
}

// RegisterDynamicActivity records that a dynamic activity was registered, which a ceiling cannot copy.
func (r *Registration) RegisterDynamicActivity(any, activity.DynamicRegisterOptions) {
	r.unsupported = append(r.unsupported, "a dynamic activity")
}

// RegisterNexusService records that a Nexus service was registered, which a ceiling cannot copy.
func (r *Registration) RegisterNexusService(s *nexus.Service) {
	r.unsupported = append(r.unsupported, "Nexus service "+s.Name)
}

// ActivityFunc is one activity as the worker knows it: its type name and its function.
type ActivityFunc struct {
	Name string
	Fn   reflect.Value
}

// ActivityFuncs lists every activity the registration holds, by the name the SDK registers it
// under: a function under its option's name or its own; each exported method of a struct under
// the option's name (a prefix) and the method's.
func (r *Registration) ActivityFuncs() []ActivityFunc {
	var out []ActivityFunc
	for _, a := range r.Activities {
		v := reflect.ValueOf(a.Fn)
		if v.Kind() == reflect.Func {
			name := a.Options.Name
			if name == "" {
				name = funcName(v)
			}
			out = append(out, ActivityFunc{Name: name, Fn: v})
			continue
		}
		t := v.Type()
		for i := range t.NumMethod() {
			m := t.Method(i)
			if !m.IsExported() {
				continue
			}
			if a.Options.SkipInvalidStructFunctions && !activityShaped(m.Type) {
				continue
			}
			out = append(out, ActivityFunc{Name: a.Options.Name + m.Name, Fn: v.Method(i)})
		}
	}
	return out
}

// funcName is the name the SDK gives a function registered without one: the last element of its
// qualified name, without the "-fm" of a method value.
func funcName(v reflect.Value) string {
	name := runtime.FuncForPC(v.Pointer()).Name()
	name = name[strings.LastIndex(name, ".")+1:]
	return strings.TrimSuffix(name, "-fm")
}

// activityShaped tells whether a method (receiver included) returns an error last, as an
// activity must.
func activityShaped(t reflect.Type) bool {
	return t.NumOut() > 0 && t.Out(t.NumOut()-1) == errorType
}

var errorType = reflect.TypeFor[error]()

// RegisterCeiling registers on w the ceiling of the worker registration stake: every workflow it
// registers, as it registers it, and for every activity a no-op of the same name and signature
// that returns its result type's zero value, or the value results holds under its name (where a
// zero would not carry the workflow through, as an unconfirmed transaction would not). It fails
// on a registration it cannot copy, and on a result that does not fit its activity.
func RegisterCeiling(w sdkworker.Registry, stake func(sdkworker.Registry), results map[string]any) error {
	reg := Record(stake)
	if len(reg.unsupported) > 0 {
		return fmt.Errorf("bench: the ceiling cannot copy %s", strings.Join(reg.unsupported, ", "))
	}
	funcs := reg.ActivityFuncs()
	noops := make([]any, len(funcs))
	var errs []error
	for i, f := range funcs {
		fn, err := noop(f.Fn.Type(), results[f.Name])
		if err != nil {
			errs = append(errs, fmt.Errorf("bench: ceiling activity %s: %w", f.Name, err))
		}
		noops[i] = fn
	}
	for name := range results {
		if !containsFunc(funcs, name) {
			errs = append(errs, fmt.Errorf("bench: the ceiling has a result for %s, which the stake's worker does not register", name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, wf := range reg.Workflows {
		w.RegisterWorkflowWithOptions(wf.Fn, wf.Options)
	}
	for i, f := range funcs {
		w.RegisterActivityWithOptions(noops[i], activity.RegisterOptions{Name: f.Name})
	}
	return nil
}

func containsFunc(funcs []ActivityFunc, name string) bool {
	for _, f := range funcs {
		if f.Name == name {
			return true
		}
	}
	return false
}

// noop makes a function of type t that returns result (or the zero value of t's first result
// when result is nil) and a nil error.
func noop(t reflect.Type, result any) (any, error) {
	if t.NumOut() == 0 || t.Out(t.NumOut()-1) != errorType || t.NumOut() > 2 {
		return nil, fmt.Errorf("%s does not return (result, error) or error", t)
	}
	out := make([]reflect.Value, t.NumOut())
	for i := range out {
		out[i] = reflect.Zero(t.Out(i))
	}
	if result != nil {
		rv := reflect.ValueOf(result)
		if t.NumOut() != 2 || !rv.Type().AssignableTo(t.Out(0)) {
			return nil, fmt.Errorf("result %T does not fit %s", result, t)
		}
		out[0] = rv
	}
	return reflect.MakeFunc(t, func([]reflect.Value) []reflect.Value { return out }).Interface(), nil
}

// Stand-ins of the ceiling's results, as long as a real stake's: a base58 signature and
// addresses, and a base64 transaction of about a stake's size.
var (
	signatureLike   = strings.Repeat("5", 88)
	addressLike     = strings.Repeat("S", 44)
	blockhashLike   = strings.Repeat("H", 44)
	transactionLike = strings.Repeat("A", 600)
)

// StakeCeilingResults are the results of the stake's no-op activities where a zero value would
// not carry a stake through: Sign's signed transaction (what it fixes: signature, blockhash,
// stake account) and Confirm's finalized outcome. Build's unsigned transaction is of a real one's
// size, so that payloads cost alike.
func StakeCeilingResults() map[string]any {
	return map[string]any{
		"Build": actsolana.BuildResult{UnsignedTransaction: transactionLike},
		"Sign": actsolana.SignResult{
			Signature: signatureLike, SignedTransaction: transactionLike, RecentBlockhash: blockhashLike,
			StakeAccount: addressLike, VoteAccount: addressLike, FeeLamports: actsolana.LamportsPerSignature,
		},
		"Confirm": actsolana.ConfirmResult{Outcome: activities.OutcomeFinalized, Slot: 1, Fee: actsolana.LamportsPerSignature},
	}
}
