package contract_test

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// standInOnly are names that exist only in the local stack's stand-ins, never on the chains the
// product runs on: product code that mentions one has a branch, a default or a read that only a
// stand-in answers. Each with why it is the stand-in's alone.
var standInOnly = []struct{ name, why string }{
	{"EXCHANGE_RATE_PRECISION", "Polygon's ValidatorShare has no such getter (its precision constants are private): the rate precision follows from the validator id"},
	{"addCheckpointReward", "the stand-in ValidatorShare's reward hook; Polygon's StakeManager distributes rewards by checkpoints"},
	{"advanceEpochs", "the stand-in StakeManager's owner control in place of checkpoints"},
	{"setCheckpointReward", "the stand-in StakeManager's owner control"},
	{"registerValidator", "the stand-in StakeManager's owner control; Polygon's validators stake for themselves"},
	{"getValidatorIds", "the stand-in StakeManager's listing"},
	{"validator already checkpointed", "a revert the stand-in EigenPod once gave; EigenLayer's EigenPod skips a proof of a validator already checkpointed (EigenPod.sol verifyCheckpointProofs), it does not revert"},
	{"b71c71a67e1177ad4e901695e1b4b9ee17ae16c6668d313eac2f96dbcda3f291", "geth --dev's public development key (harness/gethdev)"},
	{"71562b71999873DB5b286dF957af199Ec94617F7", "geth --dev's development account, deployer of the local stand-ins"},
}

// notProduct are the top-level directories that hold no product code: the local stack and its
// stand-ins, the integration tests, test data, the UI tests.
var notProduct = map[string]bool{"harness": true, "integration": true, "testdata": true, "uitest": true, ".git": true, "node_modules": true}

// TestNoStandInOnlyNameInProduct reads every non-test .go file of the product's packages
// (everything but notProduct and testdata directories) and fails naming file:line where one of
// standInOnly appears (case-insensitively for the hex ones).
func TestNoStandInOnlyNameInProduct(t *testing.T) {
	root := moduleDir(t)
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			top := strings.Split(rel, string(filepath.Separator))[0]
			if notProduct[top] || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		checked++
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 1<<16), 1<<22)
		for line := 1; sc.Scan(); line++ {
			text := strings.ToLower(sc.Text())
			for _, n := range standInOnly {
				if strings.Contains(text, strings.ToLower(n.name)) {
					t.Errorf("%s:%d mentions %s, which only a stand-in has: %s", rel, line, n.name, n.why)
				}
			}
		}
		return sc.Err()
	})
	require.NoError(t, err)
	require.Greater(t, checked, 100, "the product's packages were found")
}
