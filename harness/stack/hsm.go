package stack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/params"
	"github.com/gagliardetto/solana-go"

	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/hsmkeys"
	"github.com/stakeflow/stakeflow/internal/hsmkeys/pkcs11"
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/internal/worker"
	celestiamod "github.com/stakeflow/stakeflow/modules/celestia"
	evmmod "github.com/stakeflow/stakeflow/modules/evm"
	hyperliquidmod "github.com/stakeflow/stakeflow/modules/hyperliquid"
	solanamod "github.com/stakeflow/stakeflow/modules/solana"
	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
	"github.com/stakeflow/stakeflow/signer/keys/hsm"
	"github.com/stakeflow/stakeflow/signer/keys/hsm/hsmtest"
)

// HSMOptions put every chain's keys in a SoftHSM2 token the stack creates in its own directory
// (Dir/hsm): it generates each chain's keys inside the token, funds their addresses as it funds
// the key files, and runs the worker with --pkcs11-module, --pkcs11-token, --pkcs11-pin-file and
// each chain's --<chain>-hsm-keys. SoftHSM2 reads its configuration from SOFTHSM2_CONF, once per
// process: the stack sets it for this process (and its worker, which runs in it).
type HSMOptions struct {
	// Label is the token's label (default "stakeflow-local"); PIN its user PIN (default: random).
	Label, PIN string
	// Solana, EVM, Celestia and Hyperliquid are how many keys of each chain to generate (0: one
	// for each chain the stack runs).
	Solana, EVM, Celestia, Hyperliquid int
	// SecondWorker leaves the stack's worker on the key files: the token's keys serve only a worker
	// the caller starts with HSMWorkerConfig (a test that runs both on one stack).
	SecondWorker bool
}

// HSM is the stack's token and the keys generated in it, by chain, in label order.
type HSM struct {
	// Token is the SoftHSM2 token: its config (SOFTHSM2_CONF), module, label and PIN file.
	Token *hsmtest.Token
	// Labels of each chain's keys, and their addresses.
	SolanaLabels, EVMLabels, CelestiaLabels, HyperliquidLabels []string
	Solana                                                     []solana.PublicKey
	EVM                                                        []common.Address
	Celestia                                                   []string
	Hyperliquid                                                []common.Address
}

// Settings are the worker's PKCS#11 settings for the token.
func (h *HSM) Settings() hsmkeys.Settings {
	return hsmkeys.Settings{Module: h.Token.Module, Token: h.Token.Label, PINFile: h.Token.PINFile}
}

// startHSM creates the token, generates the keys and funds them.
func (s *Stack) startHSM(ctx context.Context, o HSMOptions) error {
	label, pin := o.Label, o.PIN
	if label == "" {
		label = "stakeflow-local"
	}
	if pin == "" {
		b := make([]byte, 8)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		pin = hex.EncodeToString(b)
	}
	dir := filepath.Join(s.opts.Dir, "hsm")
	// A token of an earlier run holds keys the chains (which start empty) never funded.
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	tk, err := hsmtest.NewToken(dir, label, pin)
	if err != nil {
		return fmt.Errorf("creating the SoftHSM2 token: %w", err)
	}
	if err := os.Setenv("SOFTHSM2_CONF", tk.Conf); err != nil {
		return err
	}
	h := &HSM{Token: tk}
	tok, err := hsm.Open(tk.Config())
	if err != nil {
		return fmt.Errorf("opening the SoftHSM2 token: %w", err)
	}
	defer func() { _ = tok.Close() }()
	n := func(n int, on bool) int {
		switch {
		case !on:
			return 0
		case n == 0:
			return 1
		}
		return n
	}
	gen := func(kt hsm.KeyType, prefix string, count int, addr hsmkeys.AddressFunc) ([]string, []string, error) {
		var labels, addrs []string
		for i := range count {
			l := fmt.Sprintf("%s-%d", prefix, i)
			pub, err := tok.Generate(kt, l)
			if err != nil {
				return nil, nil, fmt.Errorf("generating %s in the token: %w", l, err)
			}
			a, err := addr(pub)
			if err != nil {
				return nil, nil, err
			}
			labels, addrs = append(labels, l), append(addrs, a)
		}
		return labels, addrs, nil
	}
	var addrs []string
	if h.SolanaLabels, addrs, err = gen(hsm.Ed25519, "solana", n(o.Solana, true), pkcs11.SolanaAddress); err != nil {
		return err
	}
	for _, a := range addrs {
		pk := solana.MustPublicKeyFromBase58(a)
		if s.opts.StakerLamports > 0 {
			if err := s.Sandbox.Runtime().Airdrop(ctx, pk, s.opts.StakerLamports); err != nil {
				return fmt.Errorf("funding HSM staker %s: %w", pk, err)
			}
		}
		h.Solana = append(h.Solana, pk)
	}
	if s.EVM != nil {
		if h.EVMLabels, addrs, err = gen(hsm.Secp256k1, "evm", n(o.EVM, true), pkcs11.EVMAddress); err != nil {
			return err
		}
		for _, a := range addrs {
			addr := common.HexToAddress(a)
			if _, err := s.EVM.Node.Fund(ctx, addr, new(big.Int).Mul(big.NewInt(10), big.NewInt(params.Ether))); err != nil {
				return fmt.Errorf("funding HSM EVM staker %s: %w", a, err)
			}
			if err := s.EVM.Deployment.Mint(ctx, addr, new(big.Int).Mul(big.NewInt(10_000), big.NewInt(params.Ether))); err != nil {
				return fmt.Errorf("minting POL for HSM EVM staker %s: %w", a, err)
			}
			h.EVM = append(h.EVM, addr)
		}
		if h.HyperliquidLabels, addrs, err = gen(hsm.Secp256k1, "hyperliquid", n(o.Hyperliquid, true), pkcs11.EVMAddress); err != nil {
			return err
		}
		for _, a := range addrs {
			h.Hyperliquid = append(h.Hyperliquid, common.HexToAddress(a))
		}
	}
	if s.Celestia != nil {
		if h.CelestiaLabels, h.Celestia, err = gen(hsm.Secp256k1, "celestia", n(o.Celestia, true), pkcs11.CosmosAddress(signercosmos.AccountPrefix)); err != nil {
			return err
		}
		for _, d := range h.Celestia {
			if err := s.Celestia.Ledger.Fund(d, big.NewInt(s.Celestia.funds())); err != nil {
				return err
			}
		}
	}
	s.HSM = h
	return nil
}

// useHSM gives cfg's chains the token's keys instead of the key files, and the token.
func (h *HSM) useHSM(cfg *worker.Config) {
	cfg.PKCS11 = h.Settings()
	if sol, ok := module.Find[*solanamod.Module](cfg.Modules); ok {
		sol.Keys, sol.HSMKeys = nil, cli.StringList(h.SolanaLabels)
	}
	if evm, ok := module.Find[*evmmod.Module](cfg.Modules); ok && evm.Enabled() {
		evm.Keys, evm.PassphraseFile, evm.HSMKeys = "", "", cli.StringList(h.EVMLabels)
	}
	if hl, ok := module.Find[*hyperliquidmod.Module](cfg.Modules); ok && hl.Enabled() {
		hl.Keys, hl.PassphraseFile, hl.HSMKeys = "", "", cli.StringList(h.HyperliquidLabels)
	}
	if cel, ok := module.Find[*celestiamod.Module](cfg.Modules); ok && cel.Enabled() {
		cel.Keys, cel.PassphraseFile, cel.HSMKeys = "", "", cli.StringList(h.CelestiaLabels)
	}
}

// HSMWorkerConfig is the stack's worker configuration with every chain's keys in the token,
// polling the task queues of prefix (HSMOptions.SecondWorker: beside the stack's own worker).
func (s *Stack) HSMWorkerConfig(prefix string) (worker.Config, error) {
	if s.HSM == nil {
		return worker.Config{}, errors.New("stack: no HSM (Options.HSM)")
	}
	cfg := s.baseWorkerConfig()
	s.HSM.useHSM(&cfg)
	cfg.Temporal.TaskQueuePrefix = prefix
	// Its own health socket (the caller's HealthListener) and files.
	cfg.HealthAddr, cfg.DataDir = "", filepath.Join(s.opts.Dir, "data-"+prefix)
	if s.opts.ConfigureWorker != nil {
		s.opts.ConfigureWorker(&cfg)
	}
	return cfg, nil
}
