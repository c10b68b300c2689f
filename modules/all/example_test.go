package all

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAChainIsItsFolderAndTwoLines adds the example chain (testdata/examplechain: one operation,
// a transfer run through the operation core) to the worker as "Adding a chain" says: its own
// folder, modules/examplechain, and two lines in modules/all/all.go, an import and a list entry.
// The test counts the lines changed outside the folder (two, added, nothing removed), then builds
// and runs the chain's own test against the real worker packages with those files laid over the
// tree (go test -overlay): the worker takes its flags, accepts a configuration of it alone, its
// transfer lands on its ledger through the core, and the admin tool's `example transfer` starts it
// on the chain's own queue.
func TestAChainIsItsFolderAndTwoLines(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	allGo := filepath.Join(root, "modules", "all", "all.go")
	before, err := os.ReadFile(allGo)
	require.NoError(t, err)

	// The two registration lines, where a person adds them: the import, and the list entry.
	after := strings.Replace(string(before), "\n)\n", "\n\t\"github.com/stakeflow/stakeflow/modules/examplechain\"\n)\n", 1)
	after = strings.Replace(after, "\n\t}\n}\n", "\n\t\texamplechain.New(),\n\t}\n}\n", 1)
	added, removed := lineDiff(string(before), after)
	assert.Equal(t, 2, added, "lines added outside the chain's folder")
	assert.Zero(t, removed, "lines removed outside the chain's folder")

	dir := t.TempDir()
	patched := filepath.Join(dir, "all.go")
	require.NoError(t, os.WriteFile(patched, []byte(after), 0o600))
	replace := map[string]string{allGo: patched}
	files, err := filepath.Glob(filepath.Join("testdata", "examplechain", "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		abs, err := filepath.Abs(f)
		require.NoError(t, err)
		replace[filepath.Join(root, "modules", "examplechain", filepath.Base(f))] = abs
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	require.NoError(t, err)
	overlayFile := filepath.Join(dir, "overlay.json")
	require.NoError(t, os.WriteFile(overlayFile, overlay, 0o600))

	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command builds the example chain")
	// The folder exists only in the overlay: the test binary is built there and run here.
	bin := filepath.Join(dir, "examplechain.test")
	build := exec.Command(goBin, "test", "-c", "-vet=off", "-overlay", overlayFile, "-o", bin, "./modules/examplechain/")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	run := exec.Command(bin, "-test.count=1", "-test.run", "TestTheWorkerServesTheExampleChain", "-test.v")
	run.Dir = dir
	out, err = run.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "--- PASS: TestTheWorkerServesTheExampleChain")
}

// lineDiff counts the lines of b not in a (added) and of a not in b (removed), as multisets.
func lineDiff(a, b string) (added, removed int) {
	count := map[string]int{}
	for _, l := range strings.Split(a, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(b, "\n") {
		count[l]--
	}
	for _, n := range count {
		if n < 0 {
			added -= n
		} else {
			removed += n
		}
	}
	return added, removed
}
