package worker

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/params"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/activities/eigenlayer"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/amount"
	evmchain "github.com/stakeflow/stakeflow/chain/evm"
	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/metrics"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// EVMConfig is the worker's configuration of Polygon staking on Ethereum networks. It is off (no
// EVM activity can run, and Polygon operations fail naming the missing --evm-rpc) unless
// --evm-rpc names a network.
type EVMConfig struct {
	// RPC maps network name (networks.EVM) to its JSON-RPC URL; its chain id is proven before
	// anything is read through it.
	RPC cli.StringMap
	// Keys is a directory of Ethereum keystore v3 files; PassphraseFile holds their passphrase.
	Keys           string
	PassphraseFile string
	// PolygonToken and PolygonStakeManager map network name to the POL token and the StakeManager
	// (proxy) contracts: approve targets only the token and names only the StakeManager.
	PolygonToken        cli.StringMap
	PolygonStakeManager cli.StringMap
	// PolygonValidatorShares allow-lists ValidatorShare contracts (address=validator id): every
	// delegate, unstake, claim and rewards call targets one of them.
	PolygonValidatorShares cli.StringMap
	// Caps of what the signer signs: gas limit, max fee per gas (gwei), most a transaction may pay
	// (wei); 0 or empty: the signer's defaults.
	MaxGasLimit       uint64
	MaxFeePerGasGwei  uint64
	MaxTransactionFee string
	// SlippageBps bounds minSharesToMint / maximumSharesToBurn around the shares read from the
	// chain, in basis points.
	SlippageBps uint
	// ApprovalThresholdWei and DualApprovalThresholdWei: operations of at least this many wei
	// wait for one and two approvals (empty: never).
	ApprovalThresholdWei     string
	DualApprovalThresholdWei string
	// EigenPodManager maps network name to the EigenPodManager whose pods EigenLayer checkpoints
	// run on (empty: no checkpoint runs); EigenMaxGasLimit and EigenMaxTransactionFee cap the
	// checkpoint transactions signed (0 or empty: the checkpoint signer's defaults).
	EigenPodManager        cli.StringMap
	EigenMaxGasLimit       uint64
	EigenMaxTransactionFee string
}

// DefaultSlippageBps is --polygon-slippage-bps's default: rewards accrue at each checkpoint, so
// the exchange rate can move between the read and the block.
const DefaultSlippageBps = 50

// Register adds the EVM flags to fs.
func (c *EVMConfig) Register(fs *flag.FlagSet) {
	fs.Var(&c.RPC, "evm-rpc", "comma-separated network=url Ethereum JSON-RPC endpoints for Polygon staking ("+strings.Join(networks.EVM.Names(), ", ")+"); empty: no EVM operation runs")
	fs.StringVar(&c.Keys, "evm-keys", "", "directory of Ethereum keystore v3 files")
	fs.StringVar(&c.PassphraseFile, "evm-passphrase-file", "", "file holding the keystore files' passphrase")
	fs.Var(&c.PolygonToken, "polygon-token", "comma-separated network=0x... POL token contracts")
	fs.Var(&c.PolygonStakeManager, "polygon-stake-manager", "comma-separated network=0x... StakeManager (proxy) contracts")
	fs.Var(&c.PolygonValidatorShares, "polygon-validator-shares", "comma-separated 0xShare=validatorID ValidatorShare contracts operations may target")
	fs.Uint64Var(&c.MaxGasLimit, "evm-max-gas-limit", 0, "highest gas limit to sign (0: the signer's default, 500,000)")
	fs.Uint64Var(&c.MaxFeePerGasGwei, "evm-max-fee-per-gas-gwei", 0, "highest maxFeePerGas to sign, gwei (0: the signer's default, 200)")
	fs.StringVar(&c.MaxTransactionFee, "evm-max-fee-wei", "", "most a signed transaction may pay, maxFeePerGas x gas, wei (empty: the signer's default, 0.02 ether)")
	fs.UintVar(&c.SlippageBps, "polygon-slippage-bps", DefaultSlippageBps, "how far, in basis points, share bounds may lie from the shares read from the chain")
	fs.StringVar(&c.ApprovalThresholdWei, "polygon-approval-threshold-wei", "", "Polygon operations of at least this many wei wait for approval (empty: never)")
	fs.StringVar(&c.DualApprovalThresholdWei, "polygon-dual-approval-threshold-wei", "", "Polygon operations of at least this many wei wait for two approvals (empty: never)")
	c.registerEigenLayer(fs)
}

// Enabled reports whether any EVM network is configured.
func (c *EVMConfig) Enabled() bool { return len(c.RPC) > 0 }

// Validate checks the EVM settings; the error names every setting that is wrong.
func (c *EVMConfig) Validate() error {
	if !c.Enabled() {
		for _, f := range []struct {
			name string
			set  bool
		}{{"--evm-keys", c.Keys != ""}, {"--evm-passphrase-file", c.PassphraseFile != ""},
			{"--polygon-token", len(c.PolygonToken) > 0}, {"--polygon-stake-manager", len(c.PolygonStakeManager) > 0},
			{"--eigenlayer-pod-manager", len(c.EigenPodManager) > 0}} {
			if f.set {
				return fmt.Errorf("%s is set but --evm-rpc names no network", f.name)
			}
		}
		return nil
	}
	var errs []error
	if c.Keys == "" {
		errs = append(errs, errors.New("--evm-keys is required with --evm-rpc"))
	}
	if c.PassphraseFile == "" {
		errs = append(errs, errors.New("--evm-passphrase-file is required with --evm-rpc"))
	}
	for _, n := range sortedKeys(c.RPC) {
		if !networks.EVM.Has(n) {
			errs = append(errs, fmt.Errorf("--evm-rpc: unknown network %q (want one of %s)", n, strings.Join(networks.EVM.Names(), ", ")))
		}
		if u, err := url.Parse(c.RPC[n]); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("--evm-rpc %s: %q is not an http(s) URL", n, c.RPC[n]))
		}
		for _, f := range c.contractFlags() {
			if _, err := hexAddress(f.values[n]); err != nil {
				errs = append(errs, fmt.Errorf("%s %s: %v", f.name, n, err))
			}
		}
	}
	for _, f := range c.contractFlags() {
		for _, n := range sortedKeys(f.values) {
			if _, ok := c.RPC[n]; !ok {
				errs = append(errs, fmt.Errorf("%s names network %q, which has no --evm-rpc", f.name, n))
			}
		}
	}
	if _, err := c.validatorShares(); err != nil {
		errs = append(errs, err)
	}
	if c.SlippageBps > 10_000 {
		errs = append(errs, fmt.Errorf("--polygon-slippage-bps %d: want at most 10000 (100%%)", c.SlippageBps))
	}
	caps := map[string]string{"--evm-max-fee-wei": c.MaxTransactionFee, "--polygon-approval-threshold-wei": c.ApprovalThresholdWei,
		"--polygon-dual-approval-threshold-wei": c.DualApprovalThresholdWei}
	for _, name := range []string{"--evm-max-fee-wei", "--polygon-approval-threshold-wei", "--polygon-dual-approval-threshold-wei"} {
		if _, err := optionalWei(caps[name]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", name, err))
		}
	}
	one, _ := optionalWei(c.ApprovalThresholdWei)
	two, _ := optionalWei(c.DualApprovalThresholdWei)
	if one != nil && two != nil && two.Cmp(one) < 0 {
		errs = append(errs, fmt.Errorf("--polygon-dual-approval-threshold-wei %s is below --polygon-approval-threshold-wei %s", two, one))
	}
	if err := c.validateEigenLayer(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// contractFlags are the per-network contract settings, in the order errors name them.
func (c *EVMConfig) contractFlags() []struct {
	name   string
	values cli.StringMap
} {
	return []struct {
		name   string
		values cli.StringMap
	}{{"--polygon-token", c.PolygonToken}, {"--polygon-stake-manager", c.PolygonStakeManager}}
}

// validatorShares reads --polygon-validator-shares.
func (c *EVMConfig) validatorShares() ([]signerevm.ValidatorShare, error) {
	var out []signerevm.ValidatorShare
	for _, a := range sortedKeys(c.PolygonValidatorShares) {
		addr, err := hexAddress(a)
		if err != nil {
			return nil, fmt.Errorf("--polygon-validator-shares: %v", err)
		}
		id, err := strconv.ParseUint(c.PolygonValidatorShares[a], 10, 64)
		if err != nil || id == 0 {
			return nil, fmt.Errorf("--polygon-validator-shares %s: validator id %q is not a positive whole number", a, c.PolygonValidatorShares[a])
		}
		out = append(out, signerevm.ValidatorShare{ValidatorID: id, Address: addr})
	}
	return out, nil
}

// SignerPolicy is the signer's policy for network, from the settings.
func (c *EVMConfig) SignerPolicy(network string) (signerevm.Policy, error) {
	shares, err := c.validatorShares()
	if err != nil {
		return signerevm.Policy{}, err
	}
	token, err := hexAddress(c.PolygonToken[network])
	if err != nil {
		return signerevm.Policy{}, fmt.Errorf("--polygon-token %s: %v", network, err)
	}
	manager, err := hexAddress(c.PolygonStakeManager[network])
	if err != nil {
		return signerevm.Policy{}, fmt.Errorf("--polygon-stake-manager %s: %v", network, err)
	}
	p := signerevm.Policy{
		ChainID: evmChainID(network), POLToken: token, StakeManager: manager, ValidatorShares: shares,
		MaxGasLimit: c.MaxGasLimit, SlippageBps: uint32(c.SlippageBps),
	}
	if c.MaxFeePerGasGwei > 0 {
		p.MaxFeePerGas = new(big.Int).Mul(new(big.Int).SetUint64(c.MaxFeePerGasGwei), big.NewInt(params.GWei))
	}
	if p.MaxTotalFee, err = optionalWei(c.MaxTransactionFee); err != nil {
		return signerevm.Policy{}, fmt.Errorf("--evm-max-fee-wei: %v", err)
	}
	return p, nil
}

// hexAddress reads a 0x-prefixed, non-zero 20-byte address.
func hexAddress(s string) (common.Address, error) {
	if s == "" {
		return common.Address{}, errors.New("is required")
	}
	if !strings.HasPrefix(s, "0x") || !common.IsHexAddress(s) {
		return common.Address{}, fmt.Errorf("%q is not a 0x-prefixed 20-byte hex address", s)
	}
	a := common.HexToAddress(s)
	if a == (common.Address{}) {
		return common.Address{}, fmt.Errorf("%q is the zero address", s)
	}
	return a, nil
}

// optionalWei reads an optional positive whole number of wei (empty: nil).
func optionalWei(s string) (*big.Int, error) {
	if s == "" {
		return nil, nil
	}
	a, err := amount.Parse(s)
	if err == nil {
		err = a.Positive()
	}
	if err != nil {
		return nil, fmt.Errorf("%q is not a positive whole number of wei: %w", s, err)
	}
	return a.Big(), nil
}

// evmChain is the chain label of the EVM networks' metrics and logs.
const evmChain = "evm"

// newEVMActivities builds the EVM activities: the keystore keyring, one proven reader and one
// signer per configured network, the staking service (endpoint 4) and the Temporal client that
// starts the nonce sequencers. With EVM off they serve no network: a Polygon operation fails at
// once, naming the network this worker does not serve.
func newEVMActivities(ctx context.Context, cfg Config, logger *zap.Logger, h client.MetricsHandler, svc actevm.StakingService, c client.Client) (*actevm.Activities, []*evmchain.Network, error) {
	acts, _, proven, err := newEVMAndEigenLayerActivities(ctx, cfg, logger, h, svc, nil, c)
	return acts, proven, err
}

// newEVMAndEigenLayerActivities builds the EVM activities (newEVMActivities) and, on the same
// keys and readers, the EigenLayer checkpoint activities (elSvc: endpoint 5).
func newEVMAndEigenLayerActivities(ctx context.Context, cfg Config, logger *zap.Logger, h client.MetricsHandler, svc actevm.StakingService,
	elSvc eigenlayer.Service, c client.Client) (*actevm.Activities, *eigenlayer.Activities, []*evmchain.Network, error) {
	acts := &actevm.Activities{Networks: map[string]actevm.Network{}, Service: svc, Temporal: c, TaskQueue: cfg.TaskQueue,
		EpochRecheck: cfg.EpochRecheck}
	if !cfg.EVM.Enabled() {
		acts.Keys = noKeys{}
		return acts, &eigenlayer.Activities{Service: elSvc}, nil, nil
	}
	keys, err := signerevm.LoadKeyring(cfg.EVM.Keys, cfg.EVM.PassphraseFile)
	if err != nil {
		// The keyring's error names the file; it never carries the passphrase.
		return nil, nil, nil, fmt.Errorf("loading EVM keys: %w", err)
	}
	if keys.Len() == 0 {
		return nil, nil, nil, fmt.Errorf("no keystore file found in %s", cfg.EVM.Keys)
	}
	acts.Keys = keys
	acts.Policy.ApprovalThresholdWei, _ = optionalWei(cfg.EVM.ApprovalThresholdWei)
	acts.Policy.DualApprovalThresholdWei, _ = optionalWei(cfg.EVM.DualApprovalThresholdWei)
	var proven []*evmchain.Network
	readers := map[string]*evmchain.Network{}
	for _, network := range sortedKeys(cfg.EVM.RPC) {
		policy, err := cfg.EVM.SignerPolicy(network)
		if err != nil {
			return nil, nil, nil, err
		}
		s, err := signerevm.New(keys, policy)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("EVM signer for %s: %w", network, err)
		}
		cl, err := evmchain.Dial(ctx, cfg.EVM.RPC[network])
		if err != nil {
			return nil, nil, nil, err
		}
		n := evmchain.NewNetwork(network, evmChainID(network), cl, evmchain.NetworkOptions{OnChange: func(st evmchain.NetworkStatus) {
			logEVMNetwork(logger, st)
			metrics.SetRPCVerified(h, evmChain, st.Network, st.Verified)
		}})
		metrics.SetRPCVerified(h, evmChain, network, false)
		acts.Networks[network] = actevm.Network{Chain: n, Signer: s}
		readers[network] = n
		proven = append(proven, n)
	}
	el, err := newEigenLayerActivities(cfg, keys, readers, elSvc)
	if err != nil {
		return nil, nil, nil, err
	}
	return acts, el, proven, nil
}

// NewEVMActivities builds the EVM activities as the worker does, for a process that runs a worker
// of its own (the benchmark): svc is the staking service (endpoint 4), c the Temporal client that
// starts the nonce sequencers. Each network's RPC is proven on its first read.
func NewEVMActivities(ctx context.Context, cfg Config, logger *zap.Logger, svc actevm.StakingService, c client.Client) (*actevm.Activities, error) {
	acts, _, err := newEVMActivities(ctx, cfg, logger, nil, svc, c)
	return acts, err
}

// noKeys holds no key: the EVM activities of a worker without EVM settings.
type noKeys struct{}

func (noKeys) Has(common.Address) bool { return false }

// logEVMNetwork logs a change of an EVM network's proof (its chain id).
func logEVMNetwork(logger *zap.Logger, st evmchain.NetworkStatus) {
	fields := []zap.Field{zap.String("network", st.Network), zap.String("expectedChainId", st.Expected), zap.String("servedChainId", st.Served)}
	switch {
	case st.Verified:
		logger.Info("EVM RPC proven to serve its network", fields...)
	case st.Served != "" && st.Served != st.Expected:
		logger.Error("EVM RPC serves another chain: refusing every read from it; the worker stays unready until the RPC is fixed",
			append(fields, zap.String("reason", st.Reason))...)
	default:
		logger.Warn("EVM RPC not proven to serve its network: refusing reads until it is", append(fields, zap.String("reason", st.Reason))...)
	}
}

// runEVMNetworks starts the chain-id checks of the EVM networks until ctx is done, and returns a
// function listing, one line each, those not proven and why.
func runEVMNetworks(ctx context.Context, wg *sync.WaitGroup, networks []*evmchain.Network) func() []string {
	for _, n := range networks {
		wg.Add(1)
		go func() { defer wg.Done(); n.Run(ctx) }()
	}
	proven := make([]provenNetwork, 0, len(networks))
	for _, n := range networks {
		proven = append(proven, n)
	}
	return unprovenOf(proven)
}

// evmChainID is the EIP-155 chain id of an EVM network of the catalogue (0 for a name it lacks,
// which the configuration's check refuses first).
func evmChainID(network string) uint64 {
	id, _ := networks.EVM.ID(network)
	return id
}
