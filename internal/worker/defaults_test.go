package worker

import (
	"crypto/ed25519"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/modules/all"
	solanamod "github.com/stakeflow/stakeflow/modules/solana"
	"github.com/stakeflow/stakeflow/signer"
)

// defaultConfig is the configuration a worker started with no flag, environment variable or
// config file gets: every flag at its default.
func defaultConfig(t *testing.T) Config {
	t.Helper()
	cfg := Config{Modules: all.Modules()}
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	cfg.Register(fs)
	require.NoError(t, fs.Parse(nil))
	return cfg
}

// TestFlagDefaultsAreTheDocumentedOnes pins each default docs/configuration.md states
// and docs/exactly-once.md. The values are written out, not read from the code's constants.
func TestFlagDefaultsAreTheDocumentedOnes(t *testing.T) {
	cfg := defaultConfig(t)
	sol := solanaOf(t, cfg)
	for _, tc := range []struct {
		flag string
		got  any
		want any
	}{
		{"--grpc-compression", cfg.Temporal.Compression, "gzip"},
		{"--task-queue-prefix", cfg.Temporal.TaskQueue("solana"), "stakeflow-solana"},
		{"--solana-slot-duration", sol.SlotDuration, 400 * time.Millisecond},
		{"--epoch-recheck", cfg.EpochRecheck, time.Hour},
		{"--max-commission", sol.MaxCommission, uint(10)},
		// 0 takes the signer's default, pinned below.
		{"--max-fee-lamports", sol.MaxFeeLamports, uint64(0)},
		{"--max-compute-unit-limit", sol.MaxComputeUnitLimit, uint64(0)},
		{"--max-compute-unit-price", sol.MaxComputeUnitPrice, uint64(0)},
		{"--approval-threshold-lamports", sol.ApprovalThreshold, uint64(0)},
		{"--dual-approval-threshold-lamports", sol.DualApprovalThreshold, uint64(0)},
		{"--health-addr", cfg.HealthAddr, "127.0.0.1:8081"},
		{"--log-format", cfg.LogFormat, "json"},
		{"--pollers", cfg.Pollers, 8},
		{"--stop-timeout", cfg.StopTimeout, 30 * time.Second},
		{"--sticky-cache", cfg.StickyCache, 500},
		{"--data-dir", cfg.DataDir, "data"},
		{"--store", cfg.StoreDSN(), "sqlite:data/stakeflow.db"},
	} {
		assert.Equal(t, tc.want, tc.got, tc.flag)
	}
	c, err := cli.GRPCCompression(cfg.Temporal.Compression)
	require.NoError(t, err)
	assert.IsType(t, &client.GrpcCompressionGzip{}, c, "the default compression the connection uses")
}

// TestDefaultsReachTheActivitiesAndTheSigner: with every flag at its default, the activities and
// the signer the worker builds cap what is signed as README says (fee 100,000 lamports, unit limit
// 200,000, unit price 1,000,000 micro-lamports), refuse validators above 10% commission, and wait
// at most an hour, sized with 400 ms slots, before reading a deactivating account again.
func TestDefaultsReachTheActivitiesAndTheSigner(t *testing.T) {
	dir := t.TempDir()
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 7
	// The Solana CLI form: the 64 bytes of the private key as an array of numbers.
	var ints []int
	for _, b := range ed25519.NewKeyFromSeed(seed) {
		ints = append(ints, int(b))
	}
	key, err := json.Marshal(ints)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "staker.json"), key, 0o600))
	token := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(token, []byte("t"), 0o600))

	cfg := defaultConfig(t)
	cfg.ServiceURL, cfg.ServiceTokenFile = "http://127.0.0.1:1", token
	sol := solanaOf(t, cfg)
	sol.Keys = cli.StringList{dir}
	sol.RPC = cli.StringMap{"testnet": "http://127.0.0.1:1"}
	require.NoError(t, cfg.Validate())
	acts, _, err := sol.Activities(module.Env{Logger: zap.NewNop(), EpochRecheck: cfg.EpochRecheck})
	require.NoError(t, err)

	s, ok := acts.Signer.(*signer.Solana)
	require.True(t, ok, "%T", acts.Signer)
	p := s.Policy()
	assert.Equal(t, uint64(100_000), p.MaxFeeLamports, "--max-fee-lamports 0")
	assert.Equal(t, uint32(200_000), p.MaxComputeUnitLimit, "--max-compute-unit-limit 0")
	assert.Equal(t, uint64(1_000_000), p.MaxComputeUnitPrice, "--max-compute-unit-price 0")
	assert.Equal(t, uint8(10), acts.Policy.MaxCommission)
	assert.Equal(t, time.Hour, acts.EpochRecheck)
	assert.Equal(t, 400*time.Millisecond, acts.SlotDuration)
	assert.Zero(t, acts.Policy.ApprovalThreshold)
	assert.Zero(t, acts.Policy.DualApprovalThreshold)
}

// solanaOf is cfg's Solana module.
func solanaOf(t *testing.T, cfg Config) *solanamod.Module {
	t.Helper()
	sol, ok := module.Find[*solanamod.Module](cfg.Modules)
	require.True(t, ok, "the worker has a Solana module")
	return sol
}
