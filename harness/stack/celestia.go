package stack

import (
	"cmp"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"

	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/sandbox/celestiachain"
	"github.com/stakeflow/stakeflow/internal/cli"
	celestiamod "github.com/stakeflow/stakeflow/modules/celestia"
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
	// BlockTime is how often the ledgers produce a block by themselves (default 500ms), and
	// TimeoutBlocks the worker's --celestia-timeout-blocks (default 20): a transaction not
	// included is proven unable to land about TimeoutBlocks*BlockTime after its build.
	BlockTime     time.Duration
	TimeoutBlocks uint64
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
	c.Ledger = s.Sandbox.CelestiaLedger(CelestiaNetwork)
	c.rest = s.Sandbox.CelestiaREST(CelestiaNetwork)
	funds := c.funds()
	if o.Delegators > 0 {
		var err error
		if c.Delegators, err = WriteCelestiaKeys(c.KeyDir, c.PassphraseFile, o.Delegators); err != nil {
			return err
		}
		for _, d := range c.Delegators {
			if err := c.Ledger.Fund(d, big.NewInt(funds)); err != nil {
				return err
			}
		}
	}
	s.Celestia = c
	return nil
}

// WriteCelestiaKeys writes n fresh secp256k1 keys as keystore v3 files into dir, encrypted with
// the passphrase in passphraseFile (written when missing), and returns their celestia1...
// addresses as the worker's keyring reads them.
func WriteCelestiaKeys(dir, passphraseFile string, n int) ([]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if _, err := os.Stat(passphraseFile); err != nil {
		if err := os.WriteFile(passphraseFile, []byte("stakeflow-local\n"), 0o600); err != nil {
			return nil, err
		}
	}
	pass, err := os.ReadFile(passphraseFile)
	if err != nil {
		return nil, err
	}
	passphrase := strings.TrimRight(string(pass), "\r\n")
	for i := range n {
		k, err := crypto.GenerateKey()
		if err != nil {
			return nil, err
		}
		js, err := keystore.EncryptKey(&keystore.Key{Id: uuid.New(), Address: crypto.PubkeyToAddress(k.PublicKey), PrivateKey: k},
			passphrase, keystore.LightScryptN, keystore.LightScryptP)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("delegator-%d.json", i)), js, 0o600); err != nil {
			return nil, err
		}
	}
	kr, err := signercosmos.LoadKeyring(dir, passphraseFile)
	if err != nil {
		return nil, err
	}
	return kr.Addresses(), nil
}

// funds is what each delegator is funded with, in utia.
func (c *Celestia) funds() int64 { return cmp.Or(c.opts.Funds, 100_000_000) }

// workerConfig is the worker's Celestia configuration for the stack's ledger.
func (c *Celestia) workerConfig() celestiamod.Config {
	replace := c.opts.ReplaceAfter
	if replace == 0 {
		replace = 5 * time.Second
	}
	return celestiamod.Config{
		REST: cli.StringMap{CelestiaNetwork: c.rest}, Keys: c.KeyDir, PassphraseFile: c.PassphraseFile,
		Validators: cli.StringList(sandbox.CelestiaValidators), MaxFee: 20_000, MaxGas: 500_000,
		GasLimit: 200_000, GasPriceMilli: celestiamod.DefaultGasPriceMilli, ReplaceAfter: replace,
		TimeoutBlocks: cmp.Or(c.opts.TimeoutBlocks, 20),
	}
}

// celestiaSandbox is the sandbox's Celestia configuration for o (nil: none).
func celestiaSandbox(o *CelestiaOptions) *sandbox.CelestiaOptions {
	if o == nil {
		return nil
	}
	return &sandbox.CelestiaOptions{UnbondingTime: o.UnbondingTime, BlockTime: cmp.Or(o.BlockTime, 500*time.Millisecond)}
}
