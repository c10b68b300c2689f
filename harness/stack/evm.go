package stack

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/harness/gethdev"
	"github.com/stakeflow/stakeflow/harness/sandbox/evmchain"
	"github.com/stakeflow/stakeflow/internal/cli"
	evmmod "github.com/stakeflow/stakeflow/modules/evm"
)

// EVMNetwork is the network name the local EVM chain serves Polygon staking under.
const EVMNetwork = "dev"

// EVMOptions configure the stack's EVM chain: a real geth --dev node with stand-ins of Polygon's
// staking contracts and of EigenLayer's pods deployed, funded staker keys in keystore v3 files, the
// sandbox's endpoint 4 forwarding to it and its endpoint 5 proving from it, and the worker
// configured for both.
type EVMOptions struct {
	// Stakers is how many staker keys to create; each gets StakerETH for gas and StakerPOL.
	Stakers   int
	StakerETH *big.Int
	StakerPOL *big.Int
	// WithdrawalDelay is the StakeManager's delay in checkpoints (default evmchain's).
	WithdrawalDelay uint64
	// Binary is the geth executable (default gethdev's: $GETH or scripts/tools.sh geth).
	Binary string
}

// EVM is the stack's running EVM chain.
type EVM struct {
	Node       *gethdev.Node
	Deployment *evmchain.Deployment
	// EigenLayer is the EigenLayer stand-ins (beacon root oracle, EigenPodManager) the sandbox's
	// endpoint 5 builds proofs from; their admin is a key of its own, funded by the dev account.
	EigenLayer *evmchain.EigenLayer
	// Stakers are the funded staker addresses; their keystore files are in KeyDir, sealed with
	// the passphrase in PassphraseFile.
	Stakers        []common.Address
	KeyDir         string
	PassphraseFile string
	keys           map[common.Address]*ecdsa.PrivateKey
}

// Key is a staker's private key, for tests that act as a stranger sending from the address.
func (e *EVM) Key(addr common.Address) *ecdsa.PrivateKey { return e.keys[addr] }

// startEVM starts the stack's EVM chain (StartEVM) under its directory.
func (s *Stack) startEVM(ctx context.Context, o EVMOptions) error {
	e, err := StartEVM(ctx, s.opts.Dir, o, s.opts.Logger)
	s.EVM = e
	return err
}

// StartEVM starts a geth --dev node, deploys the staking contracts and writes and funds the
// stakers' keystore files under dir (evm-keys, sealed with the passphrase in evm-passphrase). On
// an error the returned EVM holds what did start: Close it.
func StartEVM(ctx context.Context, dir string, o EVMOptions, logger *zap.Logger) (*EVM, error) {
	e := &EVM{KeyDir: filepath.Join(dir, "evm-keys"), PassphraseFile: filepath.Join(dir, "evm-passphrase"),
		keys: map[common.Address]*ecdsa.PrivateKey{}}
	if logger == nil {
		logger = zap.NewNop()
	}
	return e, e.start(ctx, o, logger)
}

func (e *EVM) start(ctx context.Context, o EVMOptions, logger *zap.Logger) error {
	node, err := gethdev.Start(ctx, gethdev.Options{Binary: o.Binary, Logger: logger.Named("geth")})
	if err != nil {
		return fmt.Errorf("starting geth: %w", err)
	}
	e.Node = node
	// The keys are the chain's, which starts empty each time: keys of an earlier start (sealed
	// with its passphrase) would keep the worker from loading the directory.
	if err := os.RemoveAll(e.KeyDir); err != nil {
		return err
	}
	if err := os.MkdirAll(e.KeyDir, 0o700); err != nil {
		return err
	}
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	passphrase := hex.EncodeToString(secret)
	if err := os.WriteFile(e.PassphraseFile, []byte(passphrase+"\n"), 0o600); err != nil {
		return err
	}
	ks := keystore.NewKeyStore(e.KeyDir, keystore.LightScryptN, keystore.LightScryptP)
	eth := o.StakerETH
	if eth == nil {
		eth = new(big.Int).Mul(big.NewInt(10), big.NewInt(params.Ether))
	}
	pol := o.StakerPOL
	if pol == nil {
		pol = new(big.Int).Mul(big.NewInt(10_000), big.NewInt(params.Ether))
	}
	var opts []evmchain.Option
	if o.WithdrawalDelay > 0 {
		opts = append(opts, evmchain.WithWithdrawalDelay(o.WithdrawalDelay))
	}
	for i := 0; i < o.Stakers; i++ {
		key, err := crypto.GenerateKey()
		if err != nil {
			return err
		}
		acct, err := ks.ImportECDSA(key, passphrase)
		if err != nil {
			return fmt.Errorf("writing an EVM staker's keystore file: %w", err)
		}
		if err := os.Chmod(acct.URL.Path, 0o600); err != nil {
			return err
		}
		if _, err := node.Fund(ctx, acct.Address, eth); err != nil {
			return fmt.Errorf("funding EVM staker %s: %w", acct.Address, err)
		}
		e.Stakers = append(e.Stakers, acct.Address)
		e.keys[acct.Address] = key
		opts = append(opts, evmchain.WithStaker(acct.Address, pol))
	}
	if e.Deployment, err = evmchain.Deploy(ctx, node.RPCURL(), node.DevKey(), opts...); err != nil {
		return fmt.Errorf("deploying the staking contracts: %w", err)
	}
	admin, err := crypto.GenerateKey()
	if err != nil {
		return err
	}
	if _, err := node.Fund(ctx, crypto.PubkeyToAddress(admin.PublicKey), new(big.Int).Mul(big.NewInt(1000), big.NewInt(params.Ether))); err != nil {
		return fmt.Errorf("funding the EigenLayer admin: %w", err)
	}
	if e.EigenLayer, err = evmchain.DeployEigenLayer(ctx, node.RPCURL(), admin); err != nil {
		return fmt.Errorf("deploying the EigenLayer stand-ins: %w", err)
	}
	return nil
}

// evmWorkerConfig is the worker's EVM configuration for the stack's chain.
func (e *EVM) workerConfig() evmmod.Config {
	shares := cli.StringMap{}
	for _, v := range e.Deployment.Validators {
		shares[v.Share.Hex()] = fmt.Sprint(v.ID)
	}
	return evmmod.Config{
		RPC:                    cli.StringMap{EVMNetwork: e.Node.RPCURL()},
		Keys:                   e.KeyDir,
		PassphraseFile:         e.PassphraseFile,
		PolygonToken:           cli.StringMap{EVMNetwork: e.Deployment.Token.Hex()},
		PolygonStakeManager:    cli.StringMap{EVMNetwork: e.Deployment.StakeManager.Hex()},
		PolygonEventsHub:       cli.StringMap{EVMNetwork: e.Deployment.EventsHub.Hex()},
		PolygonValidatorShares: shares,
		SlippageBps:            evmmod.DefaultSlippageBps,
		// This geth prices a new storage slot far above mainnet (a first delegate estimates about
		// 530,000 gas, twice mainnet's): the local chain's cap is raised to match, not the default.
		MaxGasLimit:     2_000_000,
		EigenPodManager: cli.StringMap{EVMNetwork: e.EigenLayer.Manager.Hex()},
		// The node mines a transaction as it arrives and seals a block each gethdev.DefaultPeriod:
		// one unmined for 15 s (150 blocks) was dropped, as one unmined for the default 3 minutes
		// (15 blocks) is on mainnet.
		ReplaceAfter: LocalEVMReplaceAfter,
		ResendEvery:  LocalEVMResendEvery,
	}
}

// The local chain's --evm-replace-after and --evm-resend-every.
const (
	LocalEVMReplaceAfter = 15 * time.Second
	LocalEVMResendEvery  = 2 * time.Second
)

// WorkerArgs are the command-line flags that give a cmd/worker process this chain, as
// workerConfig gives an in-process worker.
func (e *EVM) WorkerArgs() []string {
	c := e.workerConfig()
	return []string{
		"--evm-rpc", c.RPC.String(), "--evm-keys", c.Keys, "--evm-passphrase-file", c.PassphraseFile,
		"--polygon-token", c.PolygonToken.String(), "--polygon-stake-manager", c.PolygonStakeManager.String(),
		"--polygon-events-hub", c.PolygonEventsHub.String(),
		"--polygon-validator-shares", c.PolygonValidatorShares.String(),
		"--polygon-slippage-bps", fmt.Sprint(c.SlippageBps), "--evm-max-gas-limit", fmt.Sprint(c.MaxGasLimit),
		"--eigenlayer-pod-manager", c.EigenPodManager.String(),
		"--evm-replace-after", c.ReplaceAfter.String(), "--evm-resend-every", c.ResendEvery.String(),
	}
}

// Close stops the node and the deployment's connections.
func (e *EVM) Close() { e.close() }

func (e *EVM) close() {
	if e.EigenLayer != nil {
		e.EigenLayer.Close()
	}
	if e.Deployment != nil {
		e.Deployment.Close()
	}
	if e.Node != nil {
		_ = e.Node.Close()
	}
}
