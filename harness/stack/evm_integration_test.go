//go:build integration

package stack

import (
	"context"
	"flag"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/params"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/harness/sandbox/evmchain"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/internal/module"
	evmmod "github.com/stakeflow/stakeflow/modules/evm"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// TestStackWithEVMChain starts the stack with its EVM chain and checks what Polygon operations
// rely on: the stakers hold gas and POL on a real geth node, their keystore files load with the
// passphrase file the worker is given (and only their owner can read them), the worker's EVM
// settings validate and give a signer policy naming the deployed contracts, and the sandbox's
// endpoint 4 forwards to the chain.
func TestStackWithEVMChain(t *testing.T) {
	cliPath := os.Getenv("TEMPORAL_CLI")
	require.NotEmpty(t, cliPath, "TEMPORAL_CLI is not set: run through make")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	pol := new(big.Int).Mul(big.NewInt(500), big.NewInt(params.Ether))
	st, err := Start(ctx, Options{
		TemporalCLI: cliPath, Dir: t.TempDir(), NoWorker: true,
		Runtime: solanart.Options{SlotDuration: 100 * time.Millisecond},
		EVM:     &EVMOptions{Stakers: 2, StakerPOL: pol},
	})
	require.NoError(t, err)
	defer st.Close()
	e := st.EVM
	require.Len(t, e.Stakers, 2)
	for _, a := range e.Stakers {
		bal, err := e.Node.Client().BalanceAt(ctx, a, nil)
		require.NoError(t, err)
		require.Equal(t, new(big.Int).Mul(big.NewInt(10), big.NewInt(params.Ether)), bal, "gas money")
		tok, err := e.Deployment.TokenBalance(ctx, a)
		require.NoError(t, err)
		require.Equal(t, pol, tok, "POL to stake")
	}
	kr, err := signerevm.LoadKeyring(e.KeyDir, e.PassphraseFile)
	require.NoError(t, err, "the keystore files load as the worker loads them")
	require.ElementsMatch(t, e.Stakers, kr.Addresses())

	cfg := st.WorkerConfig()
	require.NoError(t, cfg.Validate())
	// A worker process given WorkerArgs reads the same EVM settings as the in-process one.
	parsed := evmmod.New()
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	parsed.Flags(fs)
	require.NoError(t, fs.Parse(e.WorkerArgs()))
	evm, ok := module.Find[*evmmod.Module](cfg.Modules)
	require.True(t, ok)
	require.Equal(t, evm.Config, parsed.Config)
	p, err := evm.SignerPolicy(EVMNetwork)
	require.NoError(t, err)
	require.Equal(t, e.Deployment.Token, p.POLToken)
	require.Equal(t, e.Deployment.StakeManager, p.StakeManager)
	require.Len(t, p.ValidatorShares, len(e.Deployment.Validators))
	require.Equal(t, uint64(1337), p.ChainID)
	require.Equal(t, e.Node.RPCURL(), evm.RPC[EVMNetwork])

	// Endpoint 4 puts a staker's signed approve on the chain.
	staker := e.Stakers[0]
	data, err := e.Deployment.Pack(evmchain.ContractToken, "approve", e.Deployment.StakeManager, big.NewInt(12345))
	require.NoError(t, err)
	tx, err := e.Deployment.SignTx(ctx, e.Key(staker), e.Deployment.Token, data)
	require.NoError(t, err)
	raw, err := tx.MarshalBinary()
	require.NoError(t, err)
	svc, err := apiclient.New(st.Sandbox.URL(), apiclient.WithTokenFile(st.TokenFile))
	require.NoError(t, err)
	_, err = svc.PolygonSend(ctx, apiclient.PolygonSendRequest{SignedTransaction: hexutil.Encode(raw), StakerAddress: staker.Hex()})
	require.NoError(t, err)
	_, err = e.Deployment.WaitMined(ctx, tx.Hash())
	require.NoError(t, err)
	allowance, err := e.Deployment.Allowance(ctx, staker, e.Deployment.StakeManager)
	require.NoError(t, err)
	require.Equal(t, big.NewInt(12345), allowance, "the approve sent through the sandbox landed")
}
