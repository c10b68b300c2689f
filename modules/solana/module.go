// Package solana is the Solana module of the worker: its settings (--solana-*, the stake
// policy's caps and approval thresholds), its keys (keypair files), one proven reader per
// network, and Solana's workflows and activities on the Solana task queue.
//
// Solana's code lives in workflows/solana (the operations), activities/solana (the steps that
// touch the service and the chain), signer (the verifier and keys) and chain/solana (the
// network-proving RPC reader).
package solana

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"time"

	"github.com/gagliardetto/solana-go"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	"github.com/stakeflow/stakeflow/chain/networks"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/hsmkeys"
	"github.com/stakeflow/stakeflow/internal/hsmkeys/pkcs11"
	"github.com/stakeflow/stakeflow/internal/metrics"
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/signer"
	"github.com/stakeflow/stakeflow/signer/keys"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// Config is the Solana module's settings.
type Config struct {
	// Keys are keypair files or directories of them.
	Keys cli.StringList
	// HSMKeys are the labels (or id:<hex>) of ed25519 keys in the worker's PKCS#11 token, instead
	// of Keys.
	HSMKeys cli.StringList
	// RPC maps network name to JSON-RPC URL.
	RPC cli.StringMap
	// Genesis maps network name to the genesis hash its RPC must serve, for a network with no
	// known hash or to override the known one (a local cluster under a public name).
	Genesis cli.StringMap
	// SlotDuration is the networks' slot time, used to size waits for an epoch's end.
	SlotDuration time.Duration

	AllowedVoteAccounts cli.StringList
	// MaxCommission is the highest validator commission, in percent, stakes may go to.
	MaxCommission       uint
	MaxComputeUnitPrice uint64
	// MaxComputeUnitLimit caps the compute-unit limit a transaction may request (0: the signer's
	// default).
	MaxComputeUnitLimit uint64
	// MaxFeeLamports caps the most a transaction may pay if it lands (0: the signer's default).
	MaxFeeLamports    uint64
	ApprovalThreshold uint64
	// DualApprovalThreshold: operations of at least this many lamports need two approvals (0: off).
	DualApprovalThreshold uint64

	// NetworkOptions tune the readers' proof (tests); no flag.
	NetworkOptions solchain.NetworkOptions `json:"-"`
}

// DefaultMaxCommission is --max-commission's default, in percent.
const DefaultMaxCommission = 10

// Module is the Solana module.
type Module struct{ Config }

// New is the Solana module with its settings' defaults.
func New() *Module {
	return &Module{Config{SlotDuration: 400 * time.Millisecond, MaxCommission: DefaultMaxCommission}}
}

// Name is wfsolana.Module.
func (m *Module) Name() string { return wfsolana.Module }

// Workflows registers the module's workflows on r.
func (m *Module) Workflows(r sdkworker.WorkflowRegistry) {
	wfsolana.Register(r)
}

// Flags adds the Solana settings to fs.
func (m *Module) Flags(fs *flag.FlagSet) {
	c := &m.Config
	fs.Var(&c.Keys, "solana-keys", "comma-separated Solana keypair files or directories")
	fs.Var(&c.HSMKeys, "solana-hsm-keys", "comma-separated labels (or id:<hex>) of ed25519 keys in the PKCS#11 token (--pkcs11-*), instead of --solana-keys")
	fs.Var(&c.RPC, "solana-rpc", "comma-separated network=url Solana JSON-RPC endpoints, e.g. testnet=http://127.0.0.1:8899; empty: no Solana operation runs on this worker")
	fs.Var(&c.Genesis, "solana-genesis", "comma-separated network=hash genesis hashes the RPCs must serve, for networks with no known hash or to override it (a local cluster)")
	fs.DurationVar(&c.SlotDuration, "solana-slot-duration", c.SlotDuration, "slot time of the Solana networks (sizes waits for an epoch's end)")
	fs.Var(&c.AllowedVoteAccounts, "allowed-vote-accounts", "comma-separated vote accounts stakes may be delegated to (empty: only those asked for)")
	fs.UintVar(&c.MaxCommission, "max-commission", c.MaxCommission, "highest validator commission, percent, stakes may be delegated to")
	fs.Uint64Var(&c.MaxComputeUnitPrice, "max-compute-unit-price", 0, "highest compute-unit price to sign, micro-lamports (0: the signer's default)")
	fs.Uint64Var(&c.MaxComputeUnitLimit, "max-compute-unit-limit", 0, "highest compute-unit limit to sign (0: the signer's default)")
	fs.Uint64Var(&c.MaxFeeLamports, "max-fee-lamports", 0, "most a signed transaction may pay in fees, lamports (0: the signer's default)")
	fs.Uint64Var(&c.ApprovalThreshold, "approval-threshold-lamports", 0, "operations of at least this many lamports wait for approval (0: never)")
	fs.Uint64Var(&c.DualApprovalThreshold, "dual-approval-threshold-lamports", 0, "operations of at least this many lamports wait for two approvals (0: never)")
}

// Enabled reports whether any Solana network is configured.
func (m *Module) Enabled() bool { return len(m.RPC) > 0 }

// Validate checks the Solana settings; the error names every setting that is wrong.
func (m *Module) Validate() error {
	c := &m.Config
	var errs []error
	if c.MaxCommission > 100 {
		errs = append(errs, fmt.Errorf("--max-commission %d: want a percentage from 0 to 100", c.MaxCommission))
	}
	if c.MaxComputeUnitLimit > math.MaxUint32 {
		errs = append(errs, fmt.Errorf("--max-compute-unit-limit %d: want at most %d", c.MaxComputeUnitLimit, uint64(math.MaxUint32)))
	}
	if c.DualApprovalThreshold > 0 && c.DualApprovalThreshold < c.ApprovalThreshold {
		errs = append(errs, fmt.Errorf("--dual-approval-threshold-lamports %d is below --approval-threshold-lamports %d", c.DualApprovalThreshold, c.ApprovalThreshold))
	}
	if !m.Enabled() {
		if len(c.Keys) > 0 || len(c.HSMKeys) > 0 || len(c.Genesis) > 0 {
			errs = append(errs, errors.New("--solana-keys, --solana-hsm-keys or --solana-genesis is set but --solana-rpc names no network"))
		}
		return errors.Join(errs...)
	}
	if len(c.Keys) == 0 && len(c.HSMKeys) == 0 {
		errs = append(errs, errors.New("--solana-keys or --solana-hsm-keys is required with --solana-rpc"))
	}
	if err := hsmkeys.CheckChoice("--solana-keys", len(c.Keys) > 0, "--solana-hsm-keys", c.HSMKeys); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, cli.CheckEndpoints("--solana-rpc", c.RPC)...)
	for _, n := range cli.SortedKeys(c.RPC) {
		if !networks.Solana.Has(n) {
			errs = append(errs, fmt.Errorf("--solana-rpc: unknown network %q (want %v)", n, networks.Solana.Names()))
		}
	}
	for _, n := range cli.SortedKeys(c.Genesis) {
		if _, ok := c.RPC[n]; !ok {
			errs = append(errs, fmt.Errorf("--solana-genesis names network %q, which has no --solana-rpc", n))
		}
		if h, err := solana.HashFromBase58(c.Genesis[n]); err != nil || h.IsZero() {
			errs = append(errs, fmt.Errorf("--solana-genesis %s: %q is not a base58 hash of 32 bytes", n, c.Genesis[n]))
		}
	}
	for _, n := range cli.SortedKeys(c.RPC) {
		if _, ok := c.ExpectedGenesis(n); !ok {
			errs = append(errs, fmt.Errorf("--solana-rpc %s: no known genesis hash for this network: name the one its RPC must serve with --solana-genesis %s=HASH", n, n))
		}
	}
	return errors.Join(errs...)
}

// ExpectedGenesis returns the genesis hash the RPC of network must serve: the one --solana-genesis
// names, else the public cluster's. ok is false when neither is known.
func (c *Config) ExpectedGenesis(network string) (hash string, ok bool) {
	if h, ok := c.Genesis[network]; ok {
		return h, true
	}
	return solchain.KnownGenesisHash(network)
}

// Build loads the keys and builds the activities, with one proven reader per network.
func (m *Module) Build(_ context.Context, env module.Env) (module.Built, error) {
	acts, networks, err := m.Activities(env)
	if err != nil {
		return module.Built{}, err
	}
	built := module.Built{
		Activities: []any{acts},
		Keys:       acts.Keys.(keyHolder).Len,
	}
	if k, ok := acts.Keys.(*hsmkeys.Keys); ok {
		// The token's login and the keys found in it are part of the module's readiness.
		built.Networks = append(built.Networks, k)
	}
	for _, n := range networks {
		built.Networks = append(built.Networks, n)
	}
	return built, nil
}

// Activities builds the Solana activities of env: keys, service client, signer and one chain
// reader per network, a solchain.Network that refuses to read until its RPC is proven to serve
// the network (it checks on its first read; the worker also checks at start, periodically and
// after failures). The readers are returned in the order of their names.
func (m *Module) Activities(env module.Env) (*actsolana.Activities, []*solchain.Network, error) {
	c := &m.Config
	keys, err := m.keys(env)
	if err != nil {
		return nil, nil, err
	}
	chains := map[string]actsolana.SolanaReader{}
	networks := m.Networks(env.Logger, env.Metrics)
	for _, n := range networks {
		chains[n.Name()] = n
	}
	return &actsolana.Activities{
		Service: env.Service,
		Signer: signer.NewSolanaBackend(keys, signer.SolanaPolicy{
			AllowedVoteAccounts: c.AllowedVoteAccounts,
			MaxComputeUnitPrice: c.MaxComputeUnitPrice,
			MaxComputeUnitLimit: uint32(c.MaxComputeUnitLimit),
			MaxFeeLamports:      c.MaxFeeLamports,
		}),
		Keys:   keys,
		Chains: chains,
		Policy: actsolana.Policy{
			ApprovalThreshold: c.ApprovalThreshold, DualApprovalThreshold: c.DualApprovalThreshold,
			MaxCommission: uint8(c.MaxCommission), Approvers: env.Approvers,
		},
		SlotDuration: c.SlotDuration,
		EpochRecheck: env.EpochRecheck,
	}, networks, nil
}

// keyHolder is what the module's keys are: a backend the signer signs with, that the activities
// ask whether it holds a staker's key and readiness counts.
type keyHolder interface {
	keys.Backend
	actsolana.KeyHolder
	Len() int
}

var (
	_ keyHolder = (*signer.SolanaKeyring)(nil)
	_ keyHolder = (*hsmkeys.Keys)(nil)
)

// keys are the module's keys: the keypair files of --solana-keys, or the ed25519 keys in the
// worker's PKCS#11 token that --solana-hsm-keys names.
func (m *Module) keys(env module.Env) (keyHolder, error) {
	c := &m.Config
	if len(c.HSMKeys) > 0 {
		k, err := hsmkeys.KeysOf(env.HSM, "--solana-hsm-keys", hsmkeys.Ed25519, pkcs11.SolanaAddress, c.HSMKeys)
		if err != nil {
			return nil, err
		}
		return k, nil
	}
	kr, err := signer.LoadSolanaKeyring(c.Keys...)
	if err != nil {
		// The keyring's error names the file or directory it could not use.
		return nil, fmt.Errorf("loading Solana keys: %w", err)
	}
	if kr.Len() == 0 {
		return nil, fmt.Errorf("no Solana keypair found in %v", []string(c.Keys))
	}
	return kr, nil
}

// Networks returns one proven reader per configured network, in the order of their names. Each
// logs and records (stakeflow_rpc_verified) every change of its proof; h may be nil.
func (m *Module) Networks(logger *zap.Logger, h client.MetricsHandler) []*solchain.Network {
	var out []*solchain.Network
	for _, network := range cli.SortedKeys(m.RPC) {
		expected, _ := m.ExpectedGenesis(network)
		if known, ok := solchain.KnownGenesisHash(network); ok && known != expected {
			logger.Warn("Solana network expects a configured genesis hash instead of the public cluster's",
				zap.String("network", network), zap.String("expectedGenesis", expected), zap.String("publicGenesis", known))
		}
		o := m.NetworkOptions
		o.OnChange = func(st solchain.NetworkStatus) {
			logNetwork(logger, st)
			metrics.SetRPCVerified(h, wfsolana.Module, st.Network, st.Verified)
		}
		metrics.SetRPCVerified(h, wfsolana.Module, network, false)
		out = append(out, solchain.NewNetwork(network, expected, solchain.New(m.RPC[network]), o))
	}
	return out
}

// logNetwork logs a change of a network's proof: a mismatch as an error (the RPC serves another
// network: nothing is read from it and the worker stays unready until it is fixed), other losses
// as warnings.
func logNetwork(logger *zap.Logger, st solchain.NetworkStatus) {
	fields := []zap.Field{zap.String("network", st.Network), zap.String("expectedGenesis", st.Expected), zap.String("servedGenesis", st.Served)}
	switch {
	case st.Verified:
		logger.Info("Solana RPC proven to serve its network", fields...)
	case st.Served != "" && st.Served != st.Expected:
		logger.Error("Solana RPC serves another network: refusing every read from it; the worker stays unready until the RPC or --solana-genesis is fixed",
			append(fields, zap.String("reason", st.Reason))...)
	default:
		logger.Warn("Solana RPC not proven to serve its network: refusing reads until it is", append(fields, zap.String("reason", st.Reason))...)
	}
}
