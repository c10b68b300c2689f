// Package hyperliquid is the worker's Hyperliquid module: its settings (--hyperliquid-*), its keys
// (keystore v3 files: a Hyperliquid delegator is an EVM address), one API client per network,
// and Hyperliquid's workflows and activities on the Hyperliquid task queue.
//
// Hyperliquid's code lives in workflows/hyperliquid, activities/hyperliquid, signer/hyperliquid
// (the verifier of the signed action) and chain/hyperliquid (the API client).
package hyperliquid

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	sdkworker "go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	acthl "github.com/stakeflow/stakeflow/activities/hyperliquid"
	hlchain "github.com/stakeflow/stakeflow/chain/hyperliquid"
	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/hsmkeys"
	"github.com/stakeflow/stakeflow/internal/hsmkeys/pkcs11"
	"github.com/stakeflow/stakeflow/internal/module"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
	hlsigner "github.com/stakeflow/stakeflow/signer/hyperliquid"
	"github.com/stakeflow/stakeflow/signer/keys"
	wfhyperliquid "github.com/stakeflow/stakeflow/workflows/hyperliquid"
)

// Config is the Hyperliquid module's settings. The module is off unless --hyperliquid-api names
// a network.
type Config struct {
	// API maps network (mainnet, testnet) to the base URL of its Hyperliquid API (…/exchange, …/info).
	API cli.StringMap
	// Keys is a directory of keystore v3 files; PassphraseFile holds their passphrase.
	Keys           string
	PassphraseFile string
	// HSMKeys are the labels (or id:<hex>) of secp256k1 keys in the worker's PKCS#11 token,
	// instead of Keys.
	HSMKeys cli.StringList
	// SignatureChainIDs lists the signatureChainId values the signer accepts (empty: 0x66eee).
	SignatureChainIDs cli.StringList
	// Recheck bounds each wait for a withdrawal before the account is read again (0: the
	// operation's maxEpochWait, an hour by default).
	Recheck time.Duration
}

// Module is the Hyperliquid module.
type Module struct{ Config }

// New is the Hyperliquid module with its settings' defaults.
func New() *Module { return &Module{} }

// Name is wfhyperliquid.Module.
func (m *Module) Name() string { return wfhyperliquid.Module }

// Workflows registers the module's workflows on r.
func (m *Module) Workflows(r sdkworker.WorkflowRegistry) {
	wfhyperliquid.Register(r)
}

// Flags adds the Hyperliquid settings to fs.
func (m *Module) Flags(fs *flag.FlagSet) {
	c := &m.Config
	fs.Var(&c.API, "hyperliquid-api", "comma-separated network=url Hyperliquid API base URLs (mainnet, testnet); empty: no Hyperliquid operation runs on this worker")
	fs.StringVar(&c.Keys, "hyperliquid-keys", "", "directory of keystore v3 files holding the Hyperliquid delegators' keys (EVM keys: the files of --evm-keys do)")
	fs.StringVar(&c.PassphraseFile, "hyperliquid-passphrase-file", "", "file holding the Hyperliquid keystore files' passphrase")
	fs.Var(&c.HSMKeys, "hyperliquid-hsm-keys", "comma-separated labels (or id:<hex>) of secp256k1 keys in the PKCS#11 token (--pkcs11-*), instead of --hyperliquid-keys")
	fs.Var(&c.SignatureChainIDs, "hyperliquid-signature-chain-ids", "comma-separated signatureChainId values to sign under (default: "+hlsigner.DefaultSignatureChainID+")")
	fs.DurationVar(&c.Recheck, "hyperliquid-recheck", 0, "longest wait before a pending withdrawal is read again (0: the operation's maxEpochWait)")
}

// Enabled reports whether any Hyperliquid network is configured.
func (m *Module) Enabled() bool { return len(m.API) > 0 }

// Validate checks the Hyperliquid settings; the error names every setting that is wrong.
func (m *Module) Validate() error {
	c := &m.Config
	if !m.Enabled() {
		if len(c.SignatureChainIDs) > 0 || c.Keys != "" || c.PassphraseFile != "" || len(c.HSMKeys) > 0 {
			return errors.New("--hyperliquid-keys, --hyperliquid-passphrase-file, --hyperliquid-hsm-keys or --hyperliquid-signature-chain-ids is set but --hyperliquid-api names no network")
		}
		return nil
	}
	var errs []error
	switch {
	case len(c.HSMKeys) > 0:
		if err := hsmkeys.CheckChoice("--hyperliquid-keys", c.Keys != "", "--hyperliquid-hsm-keys", c.HSMKeys); err != nil {
			errs = append(errs, err)
		}
		if c.PassphraseFile != "" {
			errs = append(errs, errors.New("--hyperliquid-passphrase-file is set with --hyperliquid-hsm-keys: keys in the HSM have no keystore passphrase"))
		}
	case c.Keys == "" || c.PassphraseFile == "":
		errs = append(errs, errors.New("--hyperliquid-keys and --hyperliquid-passphrase-file are required with --hyperliquid-api (or --hyperliquid-hsm-keys)"))
	}
	errs = append(errs, cli.CheckEndpoints("--hyperliquid-api", c.API)...)
	for _, n := range cli.SortedKeys(c.API) {
		if !networks.Hyperliquid.Has(n) {
			errs = append(errs, fmt.Errorf("--hyperliquid-api: unknown network %q (want %s)", n, strings.Join(networks.Hyperliquid.Names(), " or ")))
		}
	}
	for _, id := range c.SignatureChainIDs {
		if !strings.HasPrefix(id, "0x") || len(id) < 3 {
			errs = append(errs, fmt.Errorf("--hyperliquid-signature-chain-ids: %q is not a 0x hex chain id", id))
		}
	}
	if c.Recheck < 0 {
		errs = append(errs, errors.New("--hyperliquid-recheck is negative"))
	}
	return errors.Join(errs...)
}

// Build loads the keys and builds the activities: the signer, one API client per network, the
// store's nonce book (a nonce stays one operation's across restarts) and the leases' queue.
func (m *Module) Build(_ context.Context, env module.Env) (module.Built, error) {
	c := &m.Config
	var (
		backend keys.Backend
		count   func() int
		hsm     *hsmkeys.Keys
	)
	if len(c.HSMKeys) > 0 {
		k, err := hsmkeys.KeysOf(env.HSM, "--hyperliquid-hsm-keys", hsmkeys.Secp256k1, pkcs11.EVMAddress, c.HSMKeys)
		if err != nil {
			return module.Built{}, err
		}
		backend, count, hsm = k, k.Len, k
	} else {
		kr, err := signerevm.LoadKeyring(c.Keys, c.PassphraseFile)
		if err != nil {
			return module.Built{}, fmt.Errorf("loading Hyperliquid keys: %w", err)
		}
		backend, count = kr, kr.Len
	}
	acts := &acthl.Activities{Service: env.Service, APIs: map[string]acthl.API{}, RecheckAfter: c.Recheck,
		Signer:   hlsigner.NewBackend(backend, hlsigner.Policy{SignatureChainIDs: c.SignatureChainIDs}),
		Temporal: env.Temporal, TaskQueue: env.TaskQueue}
	if nb, ok := env.Store.(acthl.NonceBook); ok {
		acts.Nonces = nb
	}
	for _, n := range cli.SortedKeys(c.API) {
		acts.APIs[n] = hlchain.New(c.API[n])
		env.Logger.Info("Hyperliquid API configured", zap.String("network", n), zap.String("url", c.API[n]))
	}
	built := module.Built{
		Activities: []any{acts},
		Keys:       count,
	}
	if hsm != nil {
		// The token's login and the keys found in it are part of the module's readiness.
		built.Networks = append(built.Networks, hsm)
	}
	return built, nil
}
