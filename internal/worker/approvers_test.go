package worker

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/internal/cli"
)

// A bad approvers file keeps the worker from starting, naming the line and what is wrong; a good
// one is read.
func TestApproversFileIsCheckedAtStart(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(token, []byte("t"), 0o600))
	cfg := defaultConfig(t)
	cfg.ServiceURL, cfg.ServiceTokenFile = "http://127.0.0.1:1", token
	sol := solanaOf(t, cfg)
	sol.Keys = cli.StringList{dir}
	sol.RPC = cli.StringMap{"testnet": "http://127.0.0.1:1"}

	bad := filepath.Join(dir, "approvers")
	require.NoError(t, os.WriteFile(bad, []byte("# team\nbob ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQC\n"), 0o644))
	cfg.ApproversFile = bad
	err := cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--approvers: approvers file "+bad+", line 2: approver \"bob\": not an OpenSSH public key line")

	require.NoError(t, os.WriteFile(bad, []byte("bob ed25519:RJsgT1fhCWwLyjxZOHBlogEprk1sgNdsSvBveKFrg14=\n"), 0o644))
	require.NoError(t, cfg.Validate())
	got, err := cfg.Approvers()
	require.NoError(t, err)
	require.Len(t, got, 1)
	// ssh-keygen -lf's fingerprint of this key (approval/testdata/approvers, bob).
	assert.Equal(t, "SHA256:9Id81ys80yw3JWUQL4AQP7RUepsUaKHzcGpX6uhYOu8", got[0].Fingerprint)
}
