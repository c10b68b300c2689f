package worker

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	acthl "github.com/stakeflow/stakeflow/activities/hyperliquid"
	hlchain "github.com/stakeflow/stakeflow/chain/hyperliquid"
	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/internal/cli"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
	hlsigner "github.com/stakeflow/stakeflow/signer/hyperliquid"
)

// HyperliquidConfig is the worker's configuration of Hyperliquid's staking withdrawal. It is off
// (every Hyperliquid operation fails naming the missing --hyperliquid-api) unless --hyperliquid-api
// names a network. Its keys are the EVM keyring's (--evm-keys, --evm-passphrase-file).
type HyperliquidConfig struct {
	// API maps network (mainnet, testnet) to the base URL of its Hyperliquid API (…/exchange, …/info).
	API cli.StringMap
	// SignatureChainIDs lists the signatureChainId values the signer accepts (empty: 0x66eee).
	SignatureChainIDs cli.StringList
	// Recheck bounds each wait for a withdrawal before the account is read again (0: the
	// operation's maxEpochWait, an hour by default).
	Recheck time.Duration
}

// Register adds the Hyperliquid flags to fs.
func (c *HyperliquidConfig) Register(fs *flag.FlagSet) {
	fs.Var(&c.API, "hyperliquid-api", "comma-separated network=url Hyperliquid API base URLs (mainnet, testnet); empty: no Hyperliquid operation runs")
	fs.Var(&c.SignatureChainIDs, "hyperliquid-signature-chain-ids", "comma-separated signatureChainId values to sign under (default: "+hlsigner.DefaultSignatureChainID+")")
	fs.DurationVar(&c.Recheck, "hyperliquid-recheck", 0, "longest wait before a pending withdrawal is read again (0: the operation's maxEpochWait)")
}

// Enabled reports whether any Hyperliquid network is configured.
func (c *HyperliquidConfig) Enabled() bool { return len(c.API) > 0 }

// Validate checks the Hyperliquid settings against the EVM keys they sign with.
func (c *HyperliquidConfig) Validate(evm EVMConfig) error {
	if !c.Enabled() {
		if len(c.SignatureChainIDs) > 0 {
			return errors.New("--hyperliquid-signature-chain-ids is set but --hyperliquid-api names no network")
		}
		return nil
	}
	var errs []error
	if evm.Keys == "" || evm.PassphraseFile == "" {
		errs = append(errs, errors.New("--hyperliquid-api signs with the EVM keys: --evm-keys and --evm-passphrase-file are required"))
	}
	for _, n := range sortedKeys(c.API) {
		if !networks.Hyperliquid.Has(n) {
			errs = append(errs, fmt.Errorf("--hyperliquid-api: unknown network %q (want %s)", n, strings.Join(networks.Hyperliquid.Names(), " or ")))
		}
		if u, err := url.Parse(c.API[n]); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("--hyperliquid-api %s: %q is not an http(s) URL", n, c.API[n]))
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

// newHyperliquidActivities builds the Hyperliquid activities: the EVM keyring, the signer and
// one API client per network. Off, it returns activities that refuse every network.
func newHyperliquidActivities(cfg Config, logger *zap.Logger, svc acthl.Service) (*acthl.Activities, error) {
	acts := &acthl.Activities{Service: svc, APIs: map[string]acthl.API{}, RecheckAfter: cfg.Hyperliquid.Recheck}
	if !cfg.Hyperliquid.Enabled() {
		return acts, nil
	}
	keys, err := signerevm.LoadKeyring(cfg.EVM.Keys, cfg.EVM.PassphraseFile)
	if err != nil {
		return nil, fmt.Errorf("loading EVM keys for Hyperliquid: %w", err)
	}
	acts.Signer = hlsigner.New(keys, hlsigner.Policy{SignatureChainIDs: cfg.Hyperliquid.SignatureChainIDs})
	for _, n := range sortedKeys(cfg.Hyperliquid.API) {
		acts.APIs[n] = hlchain.New(cfg.Hyperliquid.API[n])
		logger.Info("Hyperliquid API configured", zap.String("network", n), zap.String("url", cfg.Hyperliquid.API[n]))
	}
	return acts, nil
}
