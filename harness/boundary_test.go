package harness

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/stakeflow/stakeflow/"

// goList runs go list from the module's root with a template, one line per package.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	require.NoError(t, err, "go list %v", args)
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// harnessOrTests is whether a package is the harness itself or a test-only package that drives
// the product end to end (integration, uitest).
func harnessOrTests(pkg string) bool {
	for _, p := range []string{"harness", "integration", "uitest"} {
		if pkg == module+p || strings.HasPrefix(pkg, module+p+"/") {
			return true
		}
	}
	return false
}

// The shipped binaries (worker, starter, the container health probe) hold no harness package
// among all their dependencies.
func TestShippedBinariesHoldNoHarness(t *testing.T) {
	deps := goList(t, "-deps", "-f", "{{.ImportPath}}", "./cmd/worker", "./cmd/starter", "./deploy/healthprobe")
	require.Contains(t, deps, module+"workflows", "the list is the binaries' real dependencies")
	for _, d := range deps {
		assert.False(t, harnessOrTests(d), "a shipped binary depends on %s", d)
	}
}

// No product package imports the harness (its tests may: they are not shipped).
func TestProductImportsNoHarness(t *testing.T) {
	lines := goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	products := 0
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 || harnessOrTests(f[0]) {
			continue
		}
		products++
		for _, imp := range f[1:] {
			assert.False(t, harnessOrTests(imp), "product package %s imports %s", f[0], imp)
		}
	}
	assert.Greater(t, products, 20, "the product's packages were listed")
}
