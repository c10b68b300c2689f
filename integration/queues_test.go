//go:build integration

package integration

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/internal/contract"
	"github.com/stakeflow/stakeflow/workflows"
)

// queueOf is the task queue a workflow (a type name, or a function registered under its own
// name) is started on: its module's, under the default prefix, as the contract lists it.
func queueOf(t *testing.T, wf any) string {
	t.Helper()
	name, ok := wf.(string)
	if !ok {
		full := runtime.FuncForPC(reflect.ValueOf(wf).Pointer()).Name()
		name = full[strings.LastIndex(full, ".")+1:]
	}
	ws, err := contract.Workflows()
	require.NoError(t, err)
	for _, w := range ws {
		if w.Type == name {
			return workflows.TaskQueueOf(workflows.DefaultTaskQueuePrefix, w.Module)
		}
	}
	t.Fatalf("no module serves workflow type %q", name)
	return ""
}
