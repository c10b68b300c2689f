package module_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const root = "github.com/stakeflow/stakeflow/"

// chainPackages are the packages of one chain (or the data jobs): the layers' per-chain folders.
var chainLayers = []string{"workflows/", "activities/", "signer/", "chain/", "modules/"}

// isChainPackage reports whether pkg is a chain's own package (a folder per chain in a layer),
// rather than a layer's chain-neutral core (workflows, activities, the signer's key seam, the
// network catalogue and proof, the one module list).
func isChainPackage(pkg string) bool {
	switch strings.TrimPrefix(pkg, root) {
	case "signer/keys", "signer/keys/keystest", "chain/networks", "chain/rpcproof", "chain/endpoint",
		"activities/notify", "activities/notify/notifytest", "modules/all":
		return false
	}
	for _, l := range chainLayers {
		if strings.HasPrefix(pkg, root+l) {
			return true
		}
	}
	return false
}

// The worker knows no chain: internal/worker and internal/module depend on no chain's package
// (the modules come to it through modules/all, from cmd/worker). And no module imports another
// module: each chain is its own.
func TestTheWorkerKnowsNoChainAndModulesStandApart(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", root+"internal/worker", root+"internal/module").Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, root+"workflows", "the list is the real dependencies")
	for _, d := range deps {
		assert.False(t, isChainPackage(d), "the worker depends on a chain's package %s", d)
	}

	out, err = exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", root+"modules/...").Output()
	require.NoError(t, err)
	modules := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == root+"modules/all" {
			continue
		}
		modules++
		for _, imp := range f[1:] {
			assert.False(t, strings.HasPrefix(imp, root+"modules/"), "module %s imports module %s", f[0], imp)
		}
	}
	assert.GreaterOrEqual(t, modules, 6, "every module was listed")
}
