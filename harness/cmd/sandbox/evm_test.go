package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEVMRPCFlag: --evm-rpc and its twin SANDBOX_EVM_RPC reach sandbox.Config.EVMRPC; the flag
// wins.
func TestEVMRPCFlag(t *testing.T) {
	var cfg Config
	require.NoError(t, parse(newServeFlags(&cfg, io.Discard), nil, env(map[string]string{"SANDBOX_EVM_RPC": "http://127.0.0.1:8545"})))
	sc, err := cfg.sandboxConfig([]byte("s"))
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:8545", sc.EVMRPC)

	cfg = Config{}
	require.NoError(t, parse(newServeFlags(&cfg, io.Discard), []string{"--evm-rpc", "http://127.0.0.1:9"}, env(map[string]string{"SANDBOX_EVM_RPC": "http://127.0.0.1:8545"})))
	sc, err = cfg.sandboxConfig([]byte("s"))
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:9", sc.EVMRPC)
}
