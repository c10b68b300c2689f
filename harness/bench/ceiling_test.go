package bench

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	sdkworker "go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	"github.com/stakeflow/stakeflow/internal/module"
	solanamod "github.com/stakeflow/stakeflow/modules/solana"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// stakeRegistration is what the benchmark's stake worker registers (registerSolana), with the
// Solana module built as the worker builds it, from a keypair file of the test's own.
func stakeRegistration(t *testing.T) func(sdkworker.Registry) {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	nums := make([]int, len(key))
	for i, b := range key {
		nums[i] = int(b)
	}
	raw, err := json.Marshal(nums)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "staker.json"), raw, 0o600))
	sol := solanamod.New()
	sol.Keys = []string{dir}
	built, err := sol.Build(context.Background(), module.Env{TaskQueue: benchQueue(sol.Name()), Logger: zap.NewNop()})
	require.NoError(t, err)
	return func(r sdkworker.Registry) { registerSolana(r, sol, built) }
}

// activityTypes lists the activities a registration holds as the SDK names them, with their
// function types (receiver left out), read here independently of the ceiling's own reading: a
// struct's exported methods, a function under its option's name.
func activityTypes(t *testing.T, reg *Registration) map[string]reflect.Type {
	t.Helper()
	out := map[string]reflect.Type{}
	for _, a := range reg.Activities {
		v := reflect.ValueOf(a.Fn)
		if v.Kind() == reflect.Func {
			require.NotEmpty(t, a.Options.Name, "a function activity registered without a name")
			out[a.Options.Name] = v.Type()
			continue
		}
		for i := range v.NumMethod() {
			if m := v.Type().Method(i); m.IsExported() {
				out[a.Options.Name+m.Name] = v.Method(i).Type()
			}
		}
	}
	return out
}

// TestCeilingRegistersEveryActivityOfTheStake checks that the ceiling registers, for every
// activity the stake's worker registers (read from that registration, with the module built as
// the worker builds it), one of the same name and signature, and nothing else; and that the SDK
// finds each name on a worker with either registration. The workflows are the stake's own.
func TestCeilingRegistersEveryActivityOfTheStake(t *testing.T) {
	stake := stakeRegistration(t)
	want := activityTypes(t, Record(stake))
	require.NotEmpty(t, want)
	ceiling := Record(func(r sdkworker.Registry) { require.NoError(t, RegisterCeiling(r, stake, StakeCeilingResults())) })
	got := activityTypes(t, ceiling)
	assert.ElementsMatch(t, slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got)), "activity names: the stake's, the ceiling's")
	for name, typ := range want {
		if g, ok := got[name]; ok {
			assert.Equal(t, typ, g, "signature of %s", name)
		}
	}
	for _, a := range ceiling.Activities {
		assert.Equal(t, reflect.Func, reflect.TypeOf(a.Fn).Kind(), "the ceiling registers functions, never the stake's activities")
	}
	var stakeWfs, ceilingWfs []string
	for _, w := range Record(stake).Workflows {
		stakeWfs = append(stakeWfs, funcName(reflect.ValueOf(w.Fn))+"/"+w.Options.Name)
	}
	for _, w := range ceiling.Workflows {
		ceilingWfs = append(ceilingWfs, funcName(reflect.ValueOf(w.Fn))+"/"+w.Options.Name)
	}
	assert.Equal(t, stakeWfs, ceilingWfs, "the ceiling registers the stake worker's workflows as it does")

	// The SDK knows each name on either worker (OnActivity panics on a name not registered).
	var s testsuite.WorkflowTestSuite
	stakeEnv, ceilingEnv := s.NewTestWorkflowEnvironment(), s.NewTestWorkflowEnvironment()
	stake(stakeEnv)
	require.NoError(t, RegisterCeiling(ceilingEnv, stake, StakeCeilingResults()))
	for name := range want {
		assert.NotPanics(t, func() { stakeEnv.OnActivity(name, mock.Anything) }, "stake worker: %s", name)
		assert.NotPanics(t, func() { ceilingEnv.OnActivity(name, mock.Anything) }, "ceiling worker: %s", name)
	}
}

// TestCeilingRunsTheStakeToTheEnd runs the stake workflow on the ceiling's registration alone:
// the no-op activities carry it to a finalized transaction, the one the no-op Sign returned.
func TestCeilingRunsTheStakeToTheEnd(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	require.NoError(t, RegisterCeiling(env, stakeRegistration(t), StakeCeilingResults()))
	env.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil).Maybe()
	ran := map[string]int{}
	env.SetOnActivityCompletedListener(func(info *activity.Info, _ converter.EncodedValue, err error) {
		if err == nil {
			ran[info.ActivityType.Name]++
		}
	})
	in := wfsolana.StakeInput{Network: "testnet", Staker: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
		Lamports: 2_000_000_000, VoteAccount: "Vote111111111111111111111111111111111111111"}
	env.ExecuteWorkflow(wfsolana.StakeWorkflow, in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res wfsolana.Result
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Len(t, res.Transactions, 1)
	assert.Equal(t, signatureLike, res.Transactions[0].TxID)
	assert.Equal(t, addressLike, res.StakeAccount)
	assert.Equal(t, 1, ran["Confirm"], "the stake's transaction was followed to its end")
}

// TestRegisterCeilingRefusesWhatItCannotCopy checks the errors of RegisterCeiling: a result for an
// activity the stake does not have, a result of another type, a registration it cannot copy.
func TestRegisterCeilingRefusesWhatItCannotCopy(t *testing.T) {
	stake := stakeRegistration(t)
	for name, tc := range map[string]struct {
		stake   func(sdkworker.Registry)
		results map[string]any
		want    string
	}{
		"unknown activity": {stake, map[string]any{"Rebalance": actsolana.BuildResult{}}, "result for Rebalance, which the stake's worker does not register"},
		"wrong type":       {stake, map[string]any{"Confirm": actsolana.BuildResult{}}, "ceiling activity Confirm: result solana.BuildResult does not fit"},
		"dynamic": {func(r sdkworker.Registry) {
			stake(r)
			r.RegisterDynamicActivity(func(context.Context, any) error { return nil }, activity.DynamicRegisterOptions{})
		}, nil, "cannot copy a dynamic activity"},
	} {
		t.Run(name, func(t *testing.T) {
			reg := &Registration{}
			err := RegisterCeiling(reg, tc.stake, tc.results)
			require.ErrorContains(t, err, tc.want)
			assert.Empty(t, reg.Activities, "nothing is registered when the ceiling is refused")
		})
	}
}
