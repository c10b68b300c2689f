package chaos

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A failed run's report shows, for each operation a violation names, its last lines of the worker
// log, and nothing of the others.
func TestWriteOpLogsShowsTheViolatingOperationsLines(t *testing.T) {
	dir := t.TempDir()
	log := strings.Join([]string{
		`{"msg":"Awaiting approval","operationId":"chaos-1-p005-unstake"}`,
		`{"msg":"Broadcast","operationId":"chaos-1-s001"}`,
		`{"msg":"Confirming","operationId":"chaos-1-p005-unstake","try":1}`,
		`{"msg":"Confirming","operationId":"chaos-1-p005-unstake","try":2}`,
		`{"msg":"Confirming","operationId":"chaos-1-p005-unstake","try":3}`,
	}, "\n") + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "worker.log"), []byte(log), 0o600))
	rep := &Report{Dir: dir, Violations: []Violation{
		{Op: "chaos-1-p005-unstake", What: "did not complete"}, {What: "address sent 7 transactions"},
		{Op: "chaos-1-p005-unstake", What: "again"},
	}}
	var out strings.Builder
	require.NoError(t, rep.WriteOpLogs(&out, 2))
	got := out.String()
	assert.Equal(t, 1, strings.Count(got, "worker log lines of chaos-1-p005-unstake (2 shown):"), got)
	assert.Contains(t, got, `"try":2`)
	assert.Contains(t, got, `"try":3`)
	assert.NotContains(t, got, `"try":1`, "only the last max lines")
	assert.NotContains(t, got, "chaos-1-s001", "no line of an operation no violation names")
}
