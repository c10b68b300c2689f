package stack

import (
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"

	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/worker"
	"github.com/stakeflow/stakeflow/sandbox"
	"github.com/stakeflow/stakeflow/sandbox/celestiachain"
	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
)

// CelestiaOptions add Celestia staking to the stack: the sandbox's ledgers, funded delegator
// keys in keystore files, and the worker's Celestia configuration on celestia-mocha-testnet.
type CelestiaOptions struct {
	// UnbondingTime is the ledgers' unbonding time (default Celestia's 21 days; the ledger's
	// warp control matures it sooner).
	UnbondingTime time.Duration
	// Delegators is how many delegator keys to create, each funded with Funds utia.
	Delegators int
	Funds      int64
	// ReplaceAfter is the worker's --celestia-replace-after (default 5s).
	ReplaceAfter time.Duration
}

// CelestiaNetwork is the network the stack's worker serves for Celestia.
const CelestiaNetwork = signercosmos.NetworkMocha

// Celestia is the stack's Celestia side.
type Celestia struct {
	opts           CelestiaOptions
	KeyDir         string
	PassphraseFile string
	// Delegators are the funded celestia1... addresses whose keys the worker holds.
	Delegators []string
	// Ledger is the mocha-4 ledger endpoint 3 broadcasts into.
	Ledger *celestiachain.Ledger
	rest   string
}

func (s *Stack) startCelestia(o CelestiaOptions) error {
	c := &Celestia{opts: o, KeyDir: filepath.Join(s.opts.Dir, "celestia-keys"), PassphraseFile: filepath.Join(s.opts.Dir, "celestia-passphrase")}
	if err := os.MkdirAll(c.KeyDir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(c.PassphraseFile, []byte("stakeflow-local\n"), 0o600); err != nil {
		return err
	}
	c.Ledger = s.Sandbox.CelestiaLedger(CelestiaNetwork)
	c.rest = s.Sandbox.CelestiaREST(CelestiaNetwork)
	funds := o.Funds
	if funds == 0 {
		funds = 100_000_000
	}
	for i := range o.Delegators {
		k, err := crypto.GenerateKey()
		if err != nil {
			return err
		}
		js, err := keystore.EncryptKey(&keystore.Key{Id: uuid.New(), Address: crypto.PubkeyToAddress(k.PublicKey), PrivateKey: k},
			"stakeflow-local", keystore.LightScryptN, keystore.LightScryptP)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(c.KeyDir, fmt.Sprintf("delegator-%d.json", i)), js, 0o600); err != nil {
			return err
		}
	}
	if o.Delegators > 0 {
		kr, err := signercosmos.LoadKeyring(c.KeyDir, c.PassphraseFile)
		if err != nil {
			return err
		}
		c.Delegators = kr.Addresses()
		for _, d := range c.Delegators {
			if err := c.Ledger.Fund(d, big.NewInt(funds)); err != nil {
				return err
			}
		}
	}
	s.Celestia = c
	return nil
}

// workerConfig is the worker's Celestia configuration for the stack's ledger.
func (c *Celestia) workerConfig() worker.CelestiaConfig {
	replace := c.opts.ReplaceAfter
	if replace == 0 {
		replace = 5 * time.Second
	}
	return worker.CelestiaConfig{
		REST: cli.StringMap{CelestiaNetwork: c.rest}, Keys: c.KeyDir, PassphraseFile: c.PassphraseFile,
		Validators: cli.StringList(sandbox.CelestiaValidators), MaxFee: 20_000, MaxGas: 500_000,
		GasLimit: 200_000, GasPriceMilli: signercosmos.MinGasPriceMilli, ReplaceAfter: replace,
	}
}

// celestiaSandbox is the sandbox's Celestia configuration for o (nil: none).
func celestiaSandbox(o *CelestiaOptions) *sandbox.CelestiaOptions {
	if o == nil {
		return nil
	}
	return &sandbox.CelestiaOptions{UnbondingTime: o.UnbondingTime}
}
