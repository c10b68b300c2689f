// Package celestia is the worker's Celestia module: its settings (--celestia-*), its keys
// (keystore v3 files of secp256k1 keys), one chain-id-proving REST client per network, and
// Celestia's workflows and activities on the Celestia task queue.
//
// Celestia's code lives in workflows/celestia, activities/celestia, signer/cosmos (the
// verifier, the transaction encoding and keys) and chain/cosmos (the REST reader).
package celestia

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"strings"
	"sync/atomic"
	"time"

	sdkworker "go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	actcelestia "github.com/stakeflow/stakeflow/activities/celestia"
	cosmoschain "github.com/stakeflow/stakeflow/chain/cosmos"
	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/hsmkeys"
	"github.com/stakeflow/stakeflow/internal/hsmkeys/pkcs11"
	"github.com/stakeflow/stakeflow/internal/module"
	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
	"github.com/stakeflow/stakeflow/signer/cosmos/tx"
	"github.com/stakeflow/stakeflow/signer/keys"
	wfcelestia "github.com/stakeflow/stakeflow/workflows/celestia"
)

// Config is the worker's configuration of Celestia staking. It is off (Celestia
// operations fail naming the missing --celestia-rest) unless --celestia-rest names a network.
type Config struct {
	// REST maps network name (celestia-mainnet-beta, celestia-mocha-testnet) to its Cosmos REST
	// endpoint; its chain id is proven before anything is read through it.
	REST cli.StringMap
	// Keys is a directory of keystore v3 files (the format of --evm-keys); PassphraseFile holds
	// their passphrase.
	Keys           string
	PassphraseFile string
	// HSMKeys are the labels (or id:<hex>) of secp256k1 keys in the worker's PKCS#11 token,
	// instead of Keys.
	HSMKeys cli.StringList
	// Validators allow-lists celestiavaloper1... validators.
	Validators cli.StringList
	// MaxFee (utia) and MaxGas cap what the signer signs; GasLimit and GasPriceMilli (thousandths
	// of a utia) are what transactions are built with.
	MaxFee        uint64
	MaxGas        uint64
	GasLimit      uint64
	GasPriceMilli uint64
	// Memo is the memo of every transaction (empty: none).
	Memo string
	// ApprovalThreshold and DualApprovalThreshold, in utia (0: never).
	ApprovalThreshold     uint64
	DualApprovalThreshold uint64
	// ReplaceAfter is how long a sent transaction may stay unseen, its sequence unused, before
	// it is built (identically, under the same sequence) and sent again.
	ReplaceAfter time.Duration
	// TimeoutBlocks is how many blocks ahead of the chain's height every transaction's timeout
	// height is set: past it, a transaction not included can never be, which ends a step whose
	// transaction did not land (and a cancel after a broadcast). 0: the default, 50.
	TimeoutBlocks uint64
}

// register adds the Celestia flags to fs.
func (c *Config) register(fs *flag.FlagSet) {
	fs.Var(&c.REST, "celestia-rest", "comma-separated network=url Cosmos REST endpoints for Celestia staking ("+strings.Join(networks.Celestia.Names(), ", ")+"); empty: no Celestia operation runs")
	fs.StringVar(&c.Keys, "celestia-keys", "", "directory of keystore v3 files holding Celestia keys (starter keys import --chain celestia)")
	fs.StringVar(&c.PassphraseFile, "celestia-passphrase-file", "", "file holding the Celestia keystore files' passphrase")
	fs.Var(&c.HSMKeys, "celestia-hsm-keys", "comma-separated labels (or id:<hex>) of secp256k1 keys in the PKCS#11 token (--pkcs11-*), instead of --celestia-keys")
	fs.Var(&c.Validators, "celestia-validators", "comma-separated celestiavaloper1... validators operations may target")
	fs.Uint64Var(&c.MaxFee, "celestia-max-fee-utia", 20_000, "most a signed Celestia transaction may pay, utia")
	fs.Uint64Var(&c.MaxGas, "celestia-max-gas", 500_000, "highest gas limit to sign")
	fs.Uint64Var(&c.GasLimit, "celestia-gas-limit", 200_000, "gas limit of every Celestia transaction")
	fs.Uint64Var(&c.GasPriceMilli, "celestia-gas-price-milli", DefaultGasPriceMilli, "gas price in thousandths of a utia (at least 2; a node whose minimum gas price is higher keeps the network unready)")
	fs.StringVar(&c.Memo, "celestia-memo", "", "memo of every Celestia transaction (empty: none)")
	fs.Uint64Var(&c.ApprovalThreshold, "celestia-approval-threshold-utia", 0, "Celestia operations of at least this many utia wait for approval (0: never)")
	fs.Uint64Var(&c.DualApprovalThreshold, "celestia-dual-approval-threshold-utia", 0, "Celestia operations of at least this many utia wait for two approvals (0: never)")
	fs.DurationVar(&c.ReplaceAfter, "celestia-replace-after", time.Minute, "how long a sent Celestia transaction may stay unseen before it is sent again under the same sequence")
	fs.Uint64Var(&c.TimeoutBlocks, "celestia-timeout-blocks", actcelestia.DefaultTimeoutBlocks, "how many blocks ahead of the chain's height every Celestia transaction's timeout height is set (past it, one not included can never be)")
}

// enabled reports whether any Celestia network is configured.
func (c *Config) enabled() bool { return len(c.REST) > 0 }

// validate checks the Celestia settings.
func (c *Config) validate() error {
	if !c.enabled() {
		if c.Keys != "" || c.PassphraseFile != "" || len(c.HSMKeys) > 0 {
			return errors.New("--celestia-keys, --celestia-passphrase-file or --celestia-hsm-keys is set but --celestia-rest names no network")
		}
		return nil
	}
	var errs []error
	switch {
	case len(c.HSMKeys) > 0:
		if err := hsmkeys.CheckChoice("--celestia-keys", c.Keys != "", "--celestia-hsm-keys", c.HSMKeys); err != nil {
			errs = append(errs, err)
		}
		if c.PassphraseFile != "" {
			errs = append(errs, errors.New("--celestia-passphrase-file is set with --celestia-hsm-keys: keys in the HSM have no keystore passphrase"))
		}
	case c.Keys == "" || c.PassphraseFile == "":
		errs = append(errs, errors.New("--celestia-keys and --celestia-passphrase-file are required with --celestia-rest (or --celestia-hsm-keys)"))
	}
	errs = append(errs, cli.CheckEndpoints("--celestia-rest", c.REST)...)
	for _, n := range cli.SortedKeys(c.REST) {
		if _, err := signercosmos.ChainID(n); err != nil {
			errs = append(errs, fmt.Errorf("--celestia-rest: %v", err))
		}
	}
	for _, v := range c.Validators {
		if _, err := tx.DecodeAddress(signercosmos.ValoperPrefix, v); err != nil {
			errs = append(errs, fmt.Errorf("--celestia-validators: %v", err))
		}
	}
	if c.GasPriceMilli < signercosmos.MinGasPriceMilli {
		errs = append(errs, fmt.Errorf("--celestia-gas-price-milli %d is under the chain's minimum %d", c.GasPriceMilli, signercosmos.MinGasPriceMilli))
	}
	return errors.Join(errs...)
}

// Module is the Celestia module.
type Module struct{ Config }

// New is the Celestia module with its settings' defaults.
func New() *Module {
	return &Module{Config{MaxFee: 20_000, MaxGas: 500_000, GasLimit: 200_000, GasPriceMilli: DefaultGasPriceMilli,
		ReplaceAfter: time.Minute, TimeoutBlocks: actcelestia.DefaultTimeoutBlocks}}
}

// Name is wfcelestia.Module.
func (m *Module) Name() string { return wfcelestia.Module }

// Workflows registers the module's workflows on r.
func (m *Module) Workflows(r sdkworker.WorkflowRegistry) {
	wfcelestia.Register(r)
}

// Flags adds the Celestia settings to fs.
func (m *Module) Flags(fs *flag.FlagSet) { m.register(fs) }

// Enabled reports whether any Celestia network is configured.
func (m *Module) Enabled() bool { return m.enabled() }

// Validate checks the settings; the error names every setting that is wrong.
func (m *Module) Validate() error { return m.validate() }

// Build loads the keys and builds the activities over one REST client per network, each proving
// its chain id before anything is read through it.
func (m *Module) Build(_ context.Context, env module.Env) (module.Built, error) {
	c := &m.Config
	var (
		backend keys.Backend
		count   func() int
		hsm     *hsmkeys.Keys
	)
	if len(c.HSMKeys) > 0 {
		k, err := hsmkeys.KeysOf(env.HSM, "--celestia-hsm-keys", hsmkeys.Secp256k1, pkcs11.CosmosAddress(signercosmos.AccountPrefix), c.HSMKeys)
		if err != nil {
			return module.Built{}, err
		}
		backend, count, hsm = k, k.Len, k
	} else {
		kr, err := signercosmos.LoadKeyring(c.Keys, c.PassphraseFile)
		if err != nil {
			return module.Built{}, err
		}
		backend, count = kr, func() int { return len(kr.Addresses()) }
	}
	acts := &actcelestia.Activities{Chains: map[string]actcelestia.Chain{}, Service: env.Service,
		Signer:   signercosmos.NewSignerBackend(backend, signercosmos.Policy{Validators: c.Validators, MaxFee: c.MaxFee, MaxGas: c.MaxGas, Memo: c.Memo}),
		Policy:   actcelestia.Policy{ApprovalThreshold: c.ApprovalThreshold, DualApprovalThreshold: c.DualApprovalThreshold, Approvers: env.Approvers},
		GasLimit: c.GasLimit, GasPriceMilli: c.GasPriceMilli, ReplaceAfter: c.ReplaceAfter, TimeoutBlocks: c.TimeoutBlocks,
		Temporal: env.Temporal, TaskQueue: env.TaskQueue}
	built := module.Built{
		Activities: []any{acts},
		Keys:       count,
	}
	if hsm != nil {
		// The token's login and the keys found in it are part of the module's readiness.
		built.Networks = append(built.Networks, hsm)
	}
	for _, n := range cli.SortedKeys(c.REST) {
		id, _ := signercosmos.ChainID(n)
		rest := cosmoschain.New(c.REST[n], id, nil).WithExpect(c.expect())
		acts.Chains[n] = rest
		built.Networks = append(built.Networks, &network{rest: rest, name: n, priceMilli: c.GasPriceMilli, logger: env.Logger})
	}
	return built, nil
}

// DefaultGasPriceMilli is the gas price transactions pay by default, in thousandths of a utia:
// 0.004 utia, celestia-app's DefaultMinGasPrice (pkg/appconsts/initial_consts.go, commit
// 74614c2e4df0b409deb7e31320ce9ce3790efb78), the minimum a node enforces in CheckTx when its
// app.toml sets none (app/ante/fee.go ValidateTxFee); celestia-appd's config update clears the
// former default 0.002utia (LegacyDefaultMinGasPrice) to none, so an up-to-date node with
// default settings refuses 0.002.
const DefaultGasPriceMilli = 4

// expect is what every network's chain must answer (besides its chain id): Celestia's bond denom
// and account prefix, and a node minimum gas price not above the configured one (with none set,
// celestia-app's default, DefaultGasPriceMilli).
func (c *Config) expect() cosmoschain.Expect {
	return cosmoschain.Expect{BondDenom: signercosmos.Denom, AccountPrefix: signercosmos.AccountPrefix,
		GasPrice: big.NewRat(int64(c.GasPriceMilli), 1000), DefaultMinGasPrice: big.NewRat(DefaultGasPriceMilli, 1000)}
}

// network proves a REST endpoint's chain id and parameters, and again after a failure.
type network struct {
	rest       *cosmoschain.Client
	name       string
	priceMilli uint64
	logger     *zap.Logger
	last       atomic.Pointer[error]
	noted      atomic.Bool
}

// Verified is nil once the endpoint served the network's chain id and Celestia's parameters;
// otherwise why not, naming the setting, the configured value and the chain's.
func (n *network) Verified() error {
	if n.rest.Verified() {
		return nil
	}
	if p := n.last.Load(); p != nil {
		if why := n.describe(*p); why != "" {
			return fmt.Errorf("celestia %s: the REST endpoint is not proven to serve chain %s: %s", n.name, n.rest.ChainID(), why)
		}
	}
	return fmt.Errorf("celestia %s: the REST endpoint is not proven to serve chain %s", n.name, n.rest.ChainID())
}

// describe names the setting behind each parameter the chain answers differently ("" when err
// holds none: the endpoint's address, which may carry credentials, stays out of the readiness
// error).
func (n *network) describe(err error) string {
	var parts []string
	for _, pm := range mismatches(err) {
		switch pm.Param {
		case cosmoschain.ParamMinGasPrice:
			parts = append(parts, fmt.Sprintf("--celestia-gas-price-milli %d (%s) is under the node's minimum gas price %s (%s)", n.priceMilli, pm.Configured, pm.Chain, pm.Route))
		default:
			parts = append(parts, fmt.Sprintf("the %s is %q on the chain (%s), %q in Celestia's catalogue", pm.Param, pm.Chain, pm.Route, pm.Configured))
		}
	}
	return strings.Join(parts, "; ")
}

// mismatches collects the ParamMismatch errors inside err (wrapped or joined).
func mismatches(err error) []*cosmoschain.ParamMismatch {
	if pm, ok := err.(*cosmoschain.ParamMismatch); ok {
		return []*cosmoschain.ParamMismatch{pm}
	}
	var out []*cosmoschain.ParamMismatch
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, mismatches(e)...)
		}
	case interface{ Unwrap() error }:
		out = mismatches(u.Unwrap())
	}
	return out
}

// Run checks the chain id and parameters until ctx is done: every 2 seconds until proven, then
// every 30. The first proof logs the chain's unbonding time and the routes the node does not
// serve (whose catalogued values are kept).
func (n *network) Run(ctx context.Context) {
	for {
		n.check(ctx)
		wait := 30 * time.Second
		if !n.rest.Verified() {
			wait = 2 * time.Second
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// check proves the endpoint once and logs the outcome.
func (n *network) check(ctx context.Context) {
	err := n.rest.Verify(ctx)
	if err != nil {
		n.last.Store(&err)
		n.logger.Warn("Celestia REST endpoint not proven", zap.String("network", n.name), zap.String("chainId", n.rest.ChainID()), zap.String("mismatch", n.describe(err)), zap.Error(err))
		return
	}
	n.last.Store(nil)
	if p := n.rest.Params(); p != nil && !n.noted.Swap(true) {
		n.logger.Info("Celestia chain parameters proven", zap.String("network", n.name), zap.String("bondDenom", p.BondDenom),
			zap.Duration("unbondingTime", p.UnbondingTime), zap.String("accountPrefix", p.AccountPrefix), zap.String("minGasPrices", p.MinGasPrices))
		for _, r := range p.Unanswered {
			n.logger.Warn("Celestia REST endpoint does not serve a parameter route; keeping the catalogued value", zap.String("network", n.name), zap.String("route", r))
		}
	}
}
