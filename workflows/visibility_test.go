package workflows

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// warnLog is a logger that keeps the warnings, each with its key-values.
type warnLog struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnLog) Debug(string, ...any) {}
func (w *warnLog) Info(string, ...any)  {}
func (w *warnLog) Error(string, ...any) {}
func (w *warnLog) Warn(msg string, keyvals ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, fmt.Sprintln(append([]any{msg}, keyvals...)...))
}

func (w *warnLog) matching(prefix string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, m := range w.msgs {
		if strings.HasPrefix(m, prefix) {
			out = append(out, m)
		}
	}
	return out
}

// runLogged runs one step of the fake chain and keeps its warnings.
func runLogged(t *testing.T) (*testsuite.TestWorkflowEnvironment, *warnLog) {
	w := &warnLog{}
	var s testsuite.WorkflowTestSuite
	s.SetLogger(w)
	env := s.NewTestWorkflowEnvironment()
	f := &fakeChain{}
	env.RegisterWorkflowWithOptions(f.workflow, workflow.RegisterOptions{Name: "CoreWorkflow"})
	env.RegisterActivity(f)
	env.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil)
	env.ExecuteWorkflow("CoreWorkflow", coreInput{Amount: "10", Steps: 1})
	require.True(t, env.IsWorkflowCompleted())
	return env, w
}

// An upsert the SDK accepts is not reported as refused: "Search attributes not updated" is kept
// for a refusal, so that it means one. (The test environment cannot make an upsert fail: the SDK
// only refuses attributes it cannot serialize, which typed keys never are.)
func TestAcceptedUpsertsAreNotReported(t *testing.T) {
	env, w := runLogged(t)
	assert.NoError(t, env.GetWorkflowError())
	assert.Empty(t, w.matching("Search attributes not updated"))
}
