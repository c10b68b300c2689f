package worker

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	actcelestia "github.com/stakeflow/stakeflow/activities/celestia"
	cosmoschain "github.com/stakeflow/stakeflow/chain/cosmos"
	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/internal/cli"
	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
	"github.com/stakeflow/stakeflow/signer/cosmos/tx"
)

// CelestiaConfig is the worker's configuration of Celestia staking. It is off (Celestia
// operations fail naming the missing --celestia-rest) unless --celestia-rest names a network.
type CelestiaConfig struct {
	// REST maps network name (celestia-mainnet-beta, celestia-mocha-testnet) to its Cosmos REST
	// endpoint; its chain id is proven before anything is read through it.
	REST cli.StringMap
	// Keys is a directory of keystore v3 files (the format of --evm-keys); PassphraseFile holds
	// their passphrase.
	Keys           string
	PassphraseFile string
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

// Register adds the Celestia flags to fs.
func (c *CelestiaConfig) Register(fs *flag.FlagSet) {
	fs.Var(&c.REST, "celestia-rest", "comma-separated network=url Cosmos REST endpoints for Celestia staking ("+strings.Join(networks.Celestia.Names(), ", ")+"); empty: no Celestia operation runs")
	fs.StringVar(&c.Keys, "celestia-keys", "", "directory of keystore v3 files holding Celestia keys (starter keys import --chain celestia)")
	fs.StringVar(&c.PassphraseFile, "celestia-passphrase-file", "", "file holding the Celestia keystore files' passphrase")
	fs.Var(&c.Validators, "celestia-validators", "comma-separated celestiavaloper1... validators operations may target")
	fs.Uint64Var(&c.MaxFee, "celestia-max-fee-utia", 20_000, "most a signed Celestia transaction may pay, utia")
	fs.Uint64Var(&c.MaxGas, "celestia-max-gas", 500_000, "highest gas limit to sign")
	fs.Uint64Var(&c.GasLimit, "celestia-gas-limit", 200_000, "gas limit of every Celestia transaction")
	fs.Uint64Var(&c.GasPriceMilli, "celestia-gas-price-milli", signercosmos.MinGasPriceMilli, "gas price in thousandths of a utia (at least the chain's minimum, 2)")
	fs.StringVar(&c.Memo, "celestia-memo", "", "memo of every Celestia transaction (empty: none)")
	fs.Uint64Var(&c.ApprovalThreshold, "celestia-approval-threshold-utia", 0, "Celestia operations of at least this many utia wait for approval (0: never)")
	fs.Uint64Var(&c.DualApprovalThreshold, "celestia-dual-approval-threshold-utia", 0, "Celestia operations of at least this many utia wait for two approvals (0: never)")
	fs.DurationVar(&c.ReplaceAfter, "celestia-replace-after", time.Minute, "how long a sent Celestia transaction may stay unseen before it is sent again under the same sequence")
	fs.Uint64Var(&c.TimeoutBlocks, "celestia-timeout-blocks", actcelestia.DefaultTimeoutBlocks, "how many blocks ahead of the chain's height every Celestia transaction's timeout height is set (past it, one not included can never be)")
}

// Enabled reports whether any Celestia network is configured.
func (c *CelestiaConfig) Enabled() bool { return len(c.REST) > 0 }

// Validate checks the Celestia settings.
func (c *CelestiaConfig) Validate() error {
	if !c.Enabled() {
		if c.Keys != "" || c.PassphraseFile != "" {
			return errors.New("--celestia-keys or --celestia-passphrase-file is set but --celestia-rest names no network")
		}
		return nil
	}
	var errs []error
	if c.Keys == "" || c.PassphraseFile == "" {
		errs = append(errs, errors.New("--celestia-keys and --celestia-passphrase-file are required with --celestia-rest"))
	}
	for _, n := range sortedKeys(c.REST) {
		if _, err := signercosmos.ChainID(n); err != nil {
			errs = append(errs, fmt.Errorf("--celestia-rest: %v", err))
		}
		if u, err := url.Parse(c.REST[n]); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("--celestia-rest %s: %q is not an http(s) URL", n, c.REST[n]))
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

// newCelestiaActivities builds the Celestia activities and the REST clients whose chain ids are
// still to prove. With Celestia off they serve no network.
func newCelestiaActivities(cfg CelestiaConfig, svc actcelestia.StakingService) (*actcelestia.Activities, []*cosmoschain.Client, error) {
	acts := &actcelestia.Activities{Chains: map[string]actcelestia.Chain{}, Service: svc,
		Policy:   actcelestia.Policy{ApprovalThreshold: cfg.ApprovalThreshold, DualApprovalThreshold: cfg.DualApprovalThreshold},
		GasLimit: cfg.GasLimit, GasPriceMilli: cfg.GasPriceMilli, ReplaceAfter: cfg.ReplaceAfter, TimeoutBlocks: cfg.TimeoutBlocks}
	if !cfg.Enabled() {
		acts.Signer = signercosmos.NewSigner(nil, signercosmos.Policy{})
		return acts, nil, nil
	}
	keys, err := signercosmos.LoadKeyring(cfg.Keys, cfg.PassphraseFile)
	if err != nil {
		return nil, nil, err
	}
	acts.Signer = signercosmos.NewSigner(keys, signercosmos.Policy{Validators: cfg.Validators, MaxFee: cfg.MaxFee, MaxGas: cfg.MaxGas, Memo: cfg.Memo})
	var clients []*cosmoschain.Client
	for _, n := range sortedKeys(cfg.REST) {
		id, _ := signercosmos.ChainID(n)
		c := cosmoschain.New(cfg.REST[n], id, nil)
		acts.Chains[n] = c
		clients = append(clients, c)
	}
	return acts, clients, nil
}

// runCelestiaNetworks proves each REST endpoint's chain id, again after a failure, until ctx is
// done, and returns a function listing the endpoints not proven yet.
func runCelestiaNetworks(ctx context.Context, wg *sync.WaitGroup, clients []*cosmoschain.Client, logger *zap.Logger) func() []string {
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if err := c.Verify(ctx); err != nil {
					logger.Warn("Celestia REST endpoint not proven", zap.String("chainId", c.ChainID()), zap.Error(err))
				}
				wait := 30 * time.Second
				if !c.Verified() {
					wait = 2 * time.Second
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
		}()
	}
	return func() []string {
		var out []string
		for _, c := range clients {
			if !c.Verified() {
				out = append(out, "celestia "+c.ChainID())
			}
		}
		return out
	}
}
