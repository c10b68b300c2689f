// Package evm is the worker's module of the EVM chains: Polygon's staking operations and
// EigenLayer's checkpoints, which share the EVM keys (keystore v3 files), the networks (one proven
// reader per --evm-rpc) and each address's nonce lease, and so one task queue.
//
// Their code lives in workflows/polygon and workflows/eigenlayer (the operations), workflows/evm
// (the EVM transaction step), activities/evm and activities/eigenlayer, signer/evm (the
// verifiers and keys) and chain/evm (the chain-id-proving reader).
package evm

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/params"
	sdkworker "go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	actel "github.com/stakeflow/stakeflow/activities/eigenlayer"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/amount"
	evmchain "github.com/stakeflow/stakeflow/chain/evm"
	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/hsmkeys"
	"github.com/stakeflow/stakeflow/internal/hsmkeys/pkcs11"
	"github.com/stakeflow/stakeflow/internal/metrics"
	"github.com/stakeflow/stakeflow/internal/module"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
	"github.com/stakeflow/stakeflow/signer/keys"
	wfeigenlayer "github.com/stakeflow/stakeflow/workflows/eigenlayer"
	wfevm "github.com/stakeflow/stakeflow/workflows/evm"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
)

// Config is the worker's configuration of Polygon staking on Ethereum networks. It is off (no
// EVM activity can run, and Polygon operations fail naming the missing --evm-rpc) unless
// --evm-rpc names a network.
type Config struct {
	// RPC maps network name (networks.EVM) to its JSON-RPC URL; its chain id is proven before
	// anything is read through it.
	RPC cli.StringMap
	// Keys is a directory of Ethereum keystore v3 files; PassphraseFile holds their passphrase.
	Keys           string
	PassphraseFile string
	// HSMKeys are the labels (or id:<hex>) of secp256k1 keys in the worker's PKCS#11 token,
	// instead of Keys: Polygon's stakers and EigenLayer's pod owners.
	HSMKeys cli.StringList
	// PolygonToken and PolygonStakeManager map network name to the POL token and the StakeManager
	// (proxy) contracts: approve targets only the token and names only the StakeManager.
	// A network of PolygonDefaults needs neither: its value is the default.
	PolygonToken        cli.StringMap
	PolygonStakeManager cli.StringMap
	// PolygonEventsHub maps network name to Polygon's EventsHub (proxy), which emits the
	// ValidatorShares' ShareBurnedWithId (an unstake's unbond nonce); default as PolygonToken.
	PolygonEventsHub cli.StringMap
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
	// ReplaceAfter is how long a sent transaction may stay unmined, its nonce unused, before a
	// replacement is built under the same nonce; ResendEvery is how often the newest build is
	// sent again while the node knows none. Both follow the chain's block time; 0: the
	// activities' defaults (actevm.DefaultReplaceAfter, DefaultResendEvery).
	ReplaceAfter time.Duration
	ResendEvery  time.Duration
}

// PolygonContracts are Polygon's staking contracts on one Ethereum network.
type PolygonContracts struct {
	// Token is the POL ERC-20 token; StakeManager the StakeManager proxy (approve's spender);
	// EventsHub the EventsHub proxy (emitter of ShareBurnedWithId).
	Token, StakeManager, EventsHub string
}

// PolygonDefaults are the defaults of --polygon-token, --polygon-stake-manager and
// --polygon-events-hub by network, so that a mainnet or Sepolia worker needs no hand-typed
// address (docs/polygon.md, "Where each constant comes from"). Sources:
//   - StakeManager and EventsHub: npm @maticnetwork/meta@2.4.59, network/mainnet/v1/index.json
//     and network/testnet/amoy/index.json (Amoy's L1 is Sepolia, Main.ChainId 11155111),
//     Main.Contracts.StakeManagerProxy and EventsHubProxy;
//   - POL token (not in that package): 0xPolygon/pos-contracts at commit
//     ff11f0e08a43a207a3e7bcb7430771ba95d292ec, script/validatorShare-upgrade/input.json,
//     polToken under chain ids 1 and 11155111 (whose stakeManagerProxy agrees with the package).
//
// TestPolygonDefaultsMatchSources checks them against the pinned package.
var PolygonDefaults = map[string]PolygonContracts{
	"mainnet": {
		Token:        "0x455e53CBB86018Ac2B8092FdCd39d8444aFFC3F6",
		StakeManager: "0x5e3Ef299fDDf15eAa0432E6e66473ace8c13D908",
		EventsHub:    "0x6dF5CB08d3f0193C768C8A01f42ac4424DC5086b",
	},
	"sepolia": {
		Token:        "0x44499312f493F62f2DFd3C6435Ca3603EbFCeeBa",
		StakeManager: "0x4AE8f648B1Ec892B6cc68C89cc088583964d08bE",
		EventsHub:    "0x700e0f2AfBd92e2b3fF91CAD8C62A564690ddf39",
	},
}

// DefaultSlippageBps is --polygon-slippage-bps's default: rewards accrue at each checkpoint, so
// the exchange rate can move between the read and the block.
const DefaultSlippageBps = 50

// register adds the EVM flags to fs.
func (c *Config) register(fs *flag.FlagSet) {
	fs.Var(&c.RPC, "evm-rpc", "comma-separated network=url Ethereum JSON-RPC endpoints for Polygon staking ("+strings.Join(networks.EVM.Names(), ", ")+"); empty: no EVM operation runs")
	fs.StringVar(&c.Keys, "evm-keys", "", "directory of Ethereum keystore v3 files")
	fs.StringVar(&c.PassphraseFile, "evm-passphrase-file", "", "file holding the keystore files' passphrase")
	fs.Var(&c.HSMKeys, "evm-hsm-keys", "comma-separated labels (or id:<hex>) of secp256k1 keys in the PKCS#11 token (--pkcs11-*) for Polygon and EigenLayer, instead of --evm-keys")
	fs.Var(&c.PolygonToken, "polygon-token", "comma-separated network=0x... POL token contracts (default for mainnet and sepolia: Polygon's)")
	fs.Var(&c.PolygonStakeManager, "polygon-stake-manager", "comma-separated network=0x... StakeManager (proxy) contracts (default for mainnet and sepolia: Polygon's)")
	fs.Var(&c.PolygonEventsHub, "polygon-events-hub", "comma-separated network=0x... EventsHub (proxy) contracts, which emit the unbond events (default for mainnet and sepolia: Polygon's)")
	fs.Var(&c.PolygonValidatorShares, "polygon-validator-shares", "comma-separated 0xShare=validatorID ValidatorShare contracts operations may target")
	fs.Uint64Var(&c.MaxGasLimit, "evm-max-gas-limit", 0, "highest gas limit to sign (0: the signer's default, 500,000)")
	fs.Uint64Var(&c.MaxFeePerGasGwei, "evm-max-fee-per-gas-gwei", 0, "highest maxFeePerGas to sign, gwei (0: the signer's default, 200)")
	fs.StringVar(&c.MaxTransactionFee, "evm-max-fee-wei", "", "most a signed transaction may pay, maxFeePerGas x gas, wei (empty: the signer's default, 0.02 ether)")
	fs.UintVar(&c.SlippageBps, "polygon-slippage-bps", DefaultSlippageBps, "how far, in basis points, share bounds may lie from the shares read from the chain")
	fs.StringVar(&c.ApprovalThresholdWei, "polygon-approval-threshold-wei", "", "Polygon operations of at least this many wei wait for approval (empty: never)")
	fs.StringVar(&c.DualApprovalThresholdWei, "polygon-dual-approval-threshold-wei", "", "Polygon operations of at least this many wei wait for two approvals (empty: never)")
	fs.DurationVar(&c.ReplaceAfter, "evm-replace-after", actevm.DefaultReplaceAfter, "how long a sent Polygon or EigenLayer transaction may stay unmined, its nonce unused, before a replacement with higher fees is built under the same nonce")
	fs.DurationVar(&c.ResendEvery, "evm-resend-every", actevm.DefaultResendEvery, "how often the newest build of a Polygon or EigenLayer transaction is sent again while the node knows none")
	c.registerEigenLayer(fs)
}

// Enabled reports whether any EVM network is configured.
func (c *Config) enabled() bool { return len(c.RPC) > 0 }

// validate checks the EVM settings; the error names every setting that is wrong.
func (c *Config) validate() error {
	if !c.enabled() {
		type setting struct {
			name string
			set  bool
		}
		set := []setting{{"--evm-keys", c.Keys != ""}, {"--evm-passphrase-file", c.PassphraseFile != ""}, {"--evm-hsm-keys", len(c.HSMKeys) > 0}}
		for _, f := range c.contractFlags() {
			set = append(set, setting{f.name, len(f.values) > 0})
		}
		for _, f := range append(set, setting{"--eigenlayer-pod-manager", len(c.EigenPodManager) > 0}) {
			if f.set {
				return fmt.Errorf("%s is set but --evm-rpc names no network", f.name)
			}
		}
		return nil
	}
	var errs []error
	switch {
	case len(c.HSMKeys) > 0:
		if err := hsmkeys.CheckChoice("--evm-keys", c.Keys != "", "--evm-hsm-keys", c.HSMKeys); err != nil {
			errs = append(errs, err)
		}
		if c.PassphraseFile != "" {
			errs = append(errs, errors.New("--evm-passphrase-file is set with --evm-hsm-keys: keys in the HSM have no keystore passphrase"))
		}
	default:
		if c.Keys == "" {
			errs = append(errs, errors.New("--evm-keys is required with --evm-rpc (or --evm-hsm-keys)"))
		}
		if c.PassphraseFile == "" {
			errs = append(errs, errors.New("--evm-passphrase-file is required with --evm-rpc (and --evm-keys)"))
		}
	}
	errs = append(errs, cli.CheckEndpoints("--evm-rpc", c.RPC)...)
	for _, n := range cli.SortedKeys(c.RPC) {
		if !networks.EVM.Has(n) {
			errs = append(errs, fmt.Errorf("--evm-rpc: unknown network %q (want one of %s)", n, strings.Join(networks.EVM.Names(), ", ")))
		}
		for _, f := range c.contractFlags() {
			if _, err := hexAddress(f.value(n)); err != nil {
				errs = append(errs, fmt.Errorf("%s %s: %v", f.name, n, err))
			}
		}
	}
	for _, f := range c.contractFlags() {
		for _, n := range cli.SortedKeys(f.values) {
			if _, ok := c.RPC[n]; !ok {
				errs = append(errs, fmt.Errorf("%s names network %q, which has no --evm-rpc", f.name, n))
			}
		}
	}
	if _, err := c.validatorShares(); err != nil {
		errs = append(errs, err)
	}
	if c.ReplaceAfter < 0 {
		errs = append(errs, fmt.Errorf("--evm-replace-after %s: want a positive duration", c.ReplaceAfter))
	}
	if c.ResendEvery < 0 {
		errs = append(errs, fmt.Errorf("--evm-resend-every %s: want a positive duration", c.ResendEvery))
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

// contractFlag is a per-network contract setting and its default.
type contractFlag struct {
	name   string
	values cli.StringMap
	def    func(PolygonContracts) string
}

// value is the setting for network: the value given, else PolygonDefaults' (empty for a network
// without one).
func (f contractFlag) value(network string) string {
	if v, ok := f.values[network]; ok {
		return v
	}
	return f.def(PolygonDefaults[network])
}

// contractFlags are the per-network contract settings, in the order errors name them.
func (c *Config) contractFlags() []contractFlag {
	return []contractFlag{
		{"--polygon-token", c.PolygonToken, func(p PolygonContracts) string { return p.Token }},
		{"--polygon-stake-manager", c.PolygonStakeManager, func(p PolygonContracts) string { return p.StakeManager }},
		{"--polygon-events-hub", c.PolygonEventsHub, func(p PolygonContracts) string { return p.EventsHub }},
	}
}

// contract is the address of the contract setting name gives network (validated before).
func (c *Config) contract(name, network string) (common.Address, error) {
	for _, f := range c.contractFlags() {
		if f.name == name {
			a, err := hexAddress(f.value(network))
			if err != nil {
				return common.Address{}, fmt.Errorf("%s %s: %v", name, network, err)
			}
			return a, nil
		}
	}
	return common.Address{}, fmt.Errorf("no setting %s", name)
}

// validatorShares reads --polygon-validator-shares.
func (c *Config) validatorShares() ([]signerevm.ValidatorShare, error) {
	var out []signerevm.ValidatorShare
	for _, a := range cli.SortedKeys(c.PolygonValidatorShares) {
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
func (c *Config) SignerPolicy(network string) (signerevm.Policy, error) {
	shares, err := c.validatorShares()
	if err != nil {
		return signerevm.Policy{}, err
	}
	token, err := c.contract("--polygon-token", network)
	if err != nil {
		return signerevm.Policy{}, err
	}
	manager, err := c.contract("--polygon-stake-manager", network)
	if err != nil {
		return signerevm.Policy{}, err
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

// evmChainID is the EIP-155 chain id of an EVM network of the catalogue (0 for a name it lacks,
// which the configuration's check refuses first).
func evmChainID(network string) uint64 {
	id, _ := networks.EVM.ID(network)
	return id
}

// registerEigenLayer adds the EigenLayer checkpoint flags to fs.
func (c *Config) registerEigenLayer(fs *flag.FlagSet) {
	fs.Var(&c.EigenPodManager, "eigenlayer-pod-manager", "comma-separated network=0x... EigenPodManager contracts (EigenLayer checkpoints; empty: none)")
	fs.Uint64Var(&c.EigenMaxGasLimit, "eigenlayer-max-gas-limit", 0, "highest gas limit of a checkpoint transaction to sign (0: the signer's default, 6,000,000)")
	fs.StringVar(&c.EigenMaxTransactionFee, "eigenlayer-max-fee-wei", "", "most a checkpoint transaction may pay, maxFeePerGas x gas, wei (empty: the signer's default, 0.2 ether)")
}

// validateEigenLayer checks the checkpoint settings.
func (c *Config) validateEigenLayer() error {
	var errs []error
	for _, n := range cli.SortedKeys(c.EigenPodManager) {
		if _, ok := c.RPC[n]; !ok {
			errs = append(errs, fmt.Errorf("--eigenlayer-pod-manager names network %q, which has no --evm-rpc", n))
		}
		if _, err := hexAddress(c.EigenPodManager[n]); err != nil {
			errs = append(errs, fmt.Errorf("--eigenlayer-pod-manager %s: %v", n, err))
		}
	}
	if _, err := optionalWei(c.EigenMaxTransactionFee); err != nil {
		errs = append(errs, fmt.Errorf("--eigenlayer-max-fee-wei: %v", err))
	}
	return errors.Join(errs...)
}

// CheckpointPolicy is the checkpoint signer's policy for network, from the settings.
func (c *Config) CheckpointPolicy(network string) (signerevm.CheckpointPolicy, error) {
	p := signerevm.CheckpointPolicy{ChainID: evmChainID(network), MaxGasLimit: c.EigenMaxGasLimit}
	if c.MaxFeePerGasGwei > 0 {
		p.MaxFeePerGas = new(big.Int).Mul(new(big.Int).SetUint64(c.MaxFeePerGasGwei), big.NewInt(1_000_000_000))
	}
	var err error
	if p.MaxTotalFee, err = optionalWei(c.EigenMaxTransactionFee); err != nil {
		return p, fmt.Errorf("--eigenlayer-max-fee-wei: %v", err)
	}
	return p, nil
}

// Module is the EVM chains' module.
type Module struct{ Config }

// New is the EVM module with its settings' defaults.
func New() *Module { return &Module{Config{SlippageBps: DefaultSlippageBps}} }

// Name is wfevm.Module.
func (m *Module) Name() string { return wfevm.Module }

// Workflows registers the module's workflows on r.
func (m *Module) Workflows(r sdkworker.WorkflowRegistry) {
	wfpolygon.Register(r)
	wfeigenlayer.Register(r)
}

// Flags adds the EVM, Polygon and EigenLayer settings to fs.
func (m *Module) Flags(fs *flag.FlagSet) { m.register(fs) }

// Enabled reports whether any EVM network is configured.
func (m *Module) Enabled() bool { return m.enabled() }

// Validate checks the settings; the error names every setting that is wrong.
func (m *Module) Validate() error { return m.validate() }

// Build loads the keys and builds Polygon's and EigenLayer's activities over one proven reader per
// network.
func (m *Module) Build(ctx context.Context, env module.Env) (module.Built, error) {
	acts, el, networks, err := m.activities(ctx, env)
	if err != nil {
		return module.Built{}, err
	}
	built := module.Built{
		Activities: []any{acts, el},
		Keys:       acts.Keys.(interface{ Len() int }).Len,
	}
	if k, ok := acts.Keys.(hsmHolder); ok {
		// The token's login and the keys found in it are part of the module's readiness.
		built.Networks = append(built.Networks, k.Keys)
	}
	for _, n := range networks {
		built.Networks = append(built.Networks, n)
	}
	return built, nil
}

// Activities builds Polygon's activities as the worker does, for a process that runs a worker of
// its own (the benchmark). Each network's RPC is proven on its first read.
func (m *Module) Activities(ctx context.Context, env module.Env) (*actevm.Activities, error) {
	acts, _, _, err := m.activities(ctx, env)
	return acts, err
}

// activities builds Polygon's activities (the keystore keyring, one proven reader and one signer
// per network, the staking service's endpoint 4, the Temporal client and queue that start the
// nonce leases) and, on the same keys and readers, EigenLayer's (endpoint 5; a network without
// an EigenPodManager serves no checkpoint: the operation fails at once, naming it).
func (m *Module) activities(ctx context.Context, env module.Env) (*actevm.Activities, *actel.Activities, []*evmchain.Network, error) {
	c := &m.Config
	keys, holder, err := m.keys(env)
	if err != nil {
		return nil, nil, nil, err
	}
	// One cache of the large transactions (EigenLayer proofs batches) for the activities that
	// build, sign, send and re-send them: workflows name them by digest and hash only.
	raw := actevm.NewRawCache(0)
	acts := &actevm.Activities{Networks: map[string]actevm.Network{}, Service: env.Service, Temporal: env.Temporal,
		TaskQueue: env.TaskQueue, EpochRecheck: env.EpochRecheck, Keys: holder, Raw: raw,
		ReplaceAfter: c.ReplaceAfter, ResendEvery: c.ResendEvery}
	acts.Policy.ApprovalThresholdWei, _ = optionalWei(c.ApprovalThresholdWei)
	acts.Policy.DualApprovalThresholdWei, _ = optionalWei(c.DualApprovalThresholdWei)
	acts.Policy.Approvers = env.Approvers
	el := &actel.Activities{Networks: map[string]actel.Network{}, Service: env.Service, Raw: raw}
	var proven []*evmchain.Network
	for _, network := range cli.SortedKeys(c.RPC) {
		policy, err := c.SignerPolicy(network)
		if err != nil {
			return nil, nil, nil, err
		}
		s, err := signerevm.NewBackend(keys, policy)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("EVM signer for %s: %w", network, err)
		}
		cl, err := evmchain.Dial(ctx, c.RPC[network])
		if err != nil {
			return nil, nil, nil, err
		}
		n := evmchain.NewNetwork(network, evmChainID(network), cl, evmchain.NetworkOptions{OnChange: func(st evmchain.NetworkStatus) {
			logEVMNetwork(env.Logger, st)
			metrics.SetRPCVerified(env.Metrics, wfevm.Module, st.Network, st.Verified)
		}})
		metrics.SetRPCVerified(env.Metrics, wfevm.Module, network, false)
		hub, err := c.contract("--polygon-events-hub", network)
		if err != nil {
			return nil, nil, nil, err
		}
		acts.Networks[network] = actevm.Network{Chain: n, Signer: s, EventsHub: hub}
		proven = append(proven, n)
		if pm, ok := c.EigenPodManager[network]; ok {
			manager, err := hexAddress(pm)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("--eigenlayer-pod-manager %s: %v", network, err)
			}
			policy, err := c.CheckpointPolicy(network)
			if err != nil {
				return nil, nil, nil, err
			}
			cs, err := signerevm.NewCheckpointSignerBackend(keys, policy)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("checkpoint signer for %s: %w", network, err)
			}
			el.Networks[network] = actel.Network{Chain: n, Signer: cs, PodManager: manager}
		}
	}
	return acts, el, proven, nil
}

// hsmHolder is the module's keys in the worker's PKCS#11 token as the activities ask for them (by
// address).
type hsmHolder struct{ *hsmkeys.Keys }

// Has reports whether the token holds the key of addr.
func (h hsmHolder) Has(addr common.Address) bool { return h.Keys.Has(addr.Hex()) }

var _ actevm.KeyHolder = hsmHolder{}

// keys are the module's keys, as the signers sign with them and as the activities ask for them:
// the keystore files of --evm-keys, or the secp256k1 keys in the worker's PKCS#11 token that
// --evm-hsm-keys names.
func (m *Module) keys(env module.Env) (keys.Backend, actevm.KeyHolder, error) {
	c := &m.Config
	if len(c.HSMKeys) > 0 {
		k, err := hsmkeys.KeysOf(env.HSM, "--evm-hsm-keys", hsmkeys.Secp256k1, pkcs11.EVMAddress, c.HSMKeys)
		if err != nil {
			return nil, nil, err
		}
		return k, hsmHolder{k}, nil
	}
	kr, err := signerevm.LoadKeyring(c.Keys, c.PassphraseFile)
	if err != nil {
		// The keyring's error names the file; it never carries the passphrase.
		return nil, nil, fmt.Errorf("loading EVM keys: %w", err)
	}
	if kr.Len() == 0 {
		return nil, nil, fmt.Errorf("no keystore file found in %s", c.Keys)
	}
	return kr, kr, nil
}
