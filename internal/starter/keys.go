package starter

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/stakeflow/stakeflow/signer"
	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
	"github.com/stakeflow/stakeflow/signer/keys/hsm"
)

// keysCmd runs the keys commands: import (a Celestia mnemonic into a keystore file), generate (a
// key inside a PKCS#11 token) and list (each backend's keys with their addresses).
func (r *Session) keysCmd(fs *flag.FlagSet, verb string, stdin io.Reader) (func(context.Context) error, error) {
	switch verb {
	case "import":
		return r.keysImportCmd(fs, stdin), nil
	case "generate":
		return r.keysGenerateCmd(fs), nil
	case "list":
		return r.keysListCmd(fs), nil
	default:
		return nil, &UsageError{Msg: fmt.Sprintf("keys: unknown command %q (import, generate, list)", verb)}
	}
}

// keysImportCmd imports a key: keys import --chain celestia --dir DIR --passphrase-file FILE reads a
// BIP-39 mnemonic from the terminal (or standard input) and writes the key at m/44'/118'/0'/0/0
// as a keystore v3 file. The mnemonic is never stored, logged or echoed.
func (r *Session) keysImportCmd(fs *flag.FlagSet, stdin io.Reader) func(context.Context) error {
	var chain, dir, passFile string
	fs.StringVar(&chain, "chain", "", "chain of the key: celestia")
	fs.StringVar(&dir, "dir", "", "directory of the keystore files (the worker's --celestia-keys)")
	fs.StringVar(&passFile, "passphrase-file", "", "file holding the keystore passphrase (the worker's --celestia-passphrase-file)")
	return func(context.Context) error {
		fail := func(msg string) error { return &UsageError{Msg: "keys import: " + msg} }
		if chain != "celestia" {
			return fail(fmt.Sprintf("--chain %q: want celestia", chain))
		}
		if dir == "" || passFile == "" {
			return fail("--dir and --passphrase-file are required")
		}
		pass, err := os.ReadFile(passFile)
		if err != nil {
			return fail(fmt.Sprintf("--passphrase-file: %v", err))
		}
		passphrase := strings.TrimRight(string(pass), "\r\n")
		clear(pass)
		mnemonic, err := readMnemonic(r.out, stdin)
		if err != nil {
			return fail(err.Error())
		}
		addr, path, err := signercosmos.ImportMnemonic(mnemonic, passphrase, dir)
		if err != nil {
			return fail(err.Error())
		}
		return r.print(fmt.Sprintf("imported %s (%s) into %s", addr, signercosmos.HDPath, path),
			map[string]string{"chain": chain, "address": addr, "file": path})
	}
}

// pkcs11Flags are the settings of a PKCS#11 token, named as the worker names them.
type pkcs11Flags struct{ module, token, pinFile string }

func (p *pkcs11Flags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.module, "pkcs11-module", "", "path of the HSM vendor's PKCS#11 library (SoftHSM2: /usr/lib/softhsm/libsofthsm2.so)")
	fs.StringVar(&p.token, "pkcs11-token", "", "label of the token holding the keys")
	fs.StringVar(&p.pinFile, "pkcs11-pin-file", "", "file holding the token's user PIN (mode 0600 or stricter)")
}

func (p *pkcs11Flags) set() bool { return p.module != "" || p.token != "" || p.pinFile != "" }

func (p *pkcs11Flags) config() hsm.Config {
	return hsm.Config{Module: p.module, Token: p.token, PINFile: p.pinFile}
}

// chainKey is the key type and address of a chain's keys.
type chainKey struct {
	kt   hsm.KeyType
	addr func([]byte) (string, error)
}

// chainKeys are the chains a key can be generated for. Hyperliquid's keys are EVM keys.
var chainKeys = map[string]chainKey{
	"solana":      {hsm.Ed25519, hsm.SolanaAddress},
	"evm":         {hsm.Secp256k1, hsm.EVMAddress},
	"hyperliquid": {hsm.Secp256k1, hsm.EVMAddress},
	"celestia":    {hsm.Secp256k1, hsm.CosmosAddress(signercosmos.AccountPrefix)},
}

type generated struct {
	Backend string `json:"backend"`
	Token   string `json:"token"`
	Chain   string `json:"chain"`
	Label   string `json:"label"`
	KeyType string `json:"keyType"`
	Address string `json:"address"`
}

// keysGenerateCmd: keys generate --backend pkcs11 --chain C --label L --pkcs11-module M
// --pkcs11-token T --pkcs11-pin-file F creates the chain's key pair inside the token (the private
// key never leaves it) and prints its address.
func (r *Session) keysGenerateCmd(fs *flag.FlagSet) func(context.Context) error {
	var backend, chain, label string
	var p pkcs11Flags
	fs.StringVar(&backend, "backend", "", "key backend: pkcs11")
	fs.StringVar(&chain, "chain", "", "chain of the key: solana, evm (Polygon, EigenLayer), celestia, hyperliquid")
	fs.StringVar(&label, "label", "", "the key's label in the token (the worker names its keys by it)")
	p.register(fs)
	return func(context.Context) error {
		fail := func(msg string) error { return &UsageError{Msg: "keys generate: " + msg} }
		if backend != "pkcs11" {
			return fail(fmt.Sprintf("--backend %q: want pkcs11 (file keys: keys import)", backend))
		}
		ck, ok := chainKeys[chain]
		if !ok {
			return fail(fmt.Sprintf("--chain %q: want solana, evm, celestia or hyperliquid", chain))
		}
		if label == "" {
			return fail("--label is required")
		}
		if p.module == "" || p.token == "" || p.pinFile == "" {
			return fail("--pkcs11-module, --pkcs11-token and --pkcs11-pin-file are required")
		}
		tok, err := hsm.Open(p.config())
		if err != nil {
			return fmt.Errorf("keys generate: %w", err)
		}
		defer func() { _ = tok.Close() }()
		pub, err := tok.Generate(ck.kt, label)
		if err != nil {
			return fmt.Errorf("keys generate: %w", err)
		}
		addr, err := ck.addr(pub)
		if err != nil {
			return fmt.Errorf("keys generate: %w", err)
		}
		return r.print(fmt.Sprintf("generated %s key %q (%s) in token %q: %s", chain, label, ck.kt, p.token, addr),
			generated{Backend: "pkcs11", Token: p.token, Chain: chain, Label: label, KeyType: string(ck.kt), Address: addr})
	}
}

// listedKey is one key keys list shows: public data only.
type listedKey struct {
	Backend string `json:"backend"`
	Label   string `json:"label,omitempty"`
	ID      string `json:"id,omitempty"`
	KeyType string `json:"keyType"`
	Chain   string `json:"chain"`
	Address string `json:"address"`
}

// keysListCmd: keys list shows the keys of each backend given: a PKCS#11 token's key pairs (with
// the address of every chain each can sign for) and the file keyrings the worker would load.
func (r *Session) keysListCmd(fs *flag.FlagSet) func(context.Context) error {
	var p pkcs11Flags
	var solanaKeys, evmKeys, evmPass, celKeys, celPass, hlKeys, hlPass string
	p.register(fs)
	fs.StringVar(&solanaKeys, "solana-keys", "", "comma-separated Solana keypair files or directories")
	fs.StringVar(&evmKeys, "evm-keys", "", "directory of Ethereum keystore v3 files")
	fs.StringVar(&evmPass, "evm-passphrase-file", "", "file holding the EVM keystore files' passphrase")
	fs.StringVar(&celKeys, "celestia-keys", "", "directory of keystore v3 files holding Celestia keys")
	fs.StringVar(&celPass, "celestia-passphrase-file", "", "file holding the Celestia keystore files' passphrase")
	fs.StringVar(&hlKeys, "hyperliquid-keys", "", "directory of keystore v3 files holding Hyperliquid keys")
	fs.StringVar(&hlPass, "hyperliquid-passphrase-file", "", "file holding the Hyperliquid keystore files' passphrase")
	return func(context.Context) error {
		var out []listedKey
		if p.set() {
			if p.module == "" || p.token == "" || p.pinFile == "" {
				return &UsageError{Msg: "keys list: --pkcs11-module, --pkcs11-token and --pkcs11-pin-file go together"}
			}
			ks, err := tokenKeys(p.config())
			if err != nil {
				return fmt.Errorf("keys list: %w", err)
			}
			out = append(out, ks...)
		}
		if solanaKeys != "" {
			kr, err := signer.LoadSolanaKeyring(strings.Split(solanaKeys, ",")...)
			if err != nil {
				return fmt.Errorf("keys list: --solana-keys: %w", err)
			}
			for _, a := range kr.Addresses() {
				out = append(out, listedKey{Backend: "file", KeyType: string(hsm.Ed25519), Chain: "solana", Address: a})
			}
		}
		for _, f := range []struct{ chain, dir, pass string }{{"evm", evmKeys, evmPass}, {"hyperliquid", hlKeys, hlPass}} {
			if f.dir == "" {
				continue
			}
			kr, err := signerevm.LoadKeyring(f.dir, f.pass)
			if err != nil {
				return fmt.Errorf("keys list: --%s-keys: %w", f.chain, err)
			}
			for _, a := range kr.Addresses() {
				out = append(out, listedKey{Backend: "file", KeyType: string(hsm.Secp256k1), Chain: f.chain, Address: a.Hex()})
			}
		}
		if celKeys != "" {
			kr, err := signercosmos.LoadKeyring(celKeys, celPass)
			if err != nil {
				return fmt.Errorf("keys list: --celestia-keys: %w", err)
			}
			for _, a := range kr.Addresses() {
				out = append(out, listedKey{Backend: "file", KeyType: string(hsm.Secp256k1), Chain: "celestia", Address: a})
			}
		}
		if len(out) == 0 && !p.set() && solanaKeys == "" && evmKeys == "" && celKeys == "" && hlKeys == "" {
			return &UsageError{Msg: "keys list: give a backend: --pkcs11-module/--pkcs11-token/--pkcs11-pin-file, or --solana-keys, --evm-keys, --celestia-keys, --hyperliquid-keys"}
		}
		var b strings.Builder
		for _, k := range out {
			where := k.Backend
			if k.Label != "" {
				where = fmt.Sprintf("%s %q %s", k.Backend, k.Label, k.ID)
			}
			fmt.Fprintf(&b, "%-12s %-44s %-9s %s\n", k.Chain, k.Address, k.KeyType, where)
		}
		if len(out) == 0 {
			b.WriteString("no keys\n")
		}
		return r.print(strings.TrimSuffix(b.String(), "\n"), out)
	}
}

// tokenKeys lists a token's key pairs, one line per chain each key can sign for: an ed25519 key
// for Solana, a secp256k1 key for EVM chains, Hyperliquid and Celestia (one key, one address each).
func tokenKeys(cfg hsm.Config) ([]listedKey, error) {
	tok, err := hsm.Open(cfg)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tok.Close() }()
	ks, err := tok.List()
	if err != nil {
		return nil, err
	}
	var out []listedKey
	for _, k := range ks {
		for _, chain := range []string{"solana", "evm", "hyperliquid", "celestia"} {
			ck := chainKeys[chain]
			if ck.kt != k.Type {
				continue
			}
			addr, err := ck.addr(k.PublicKey)
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", k.Label, err)
			}
			out = append(out, listedKey{Backend: "pkcs11", Label: k.Label, ID: "id:" + hex.EncodeToString(k.ID),
				KeyType: string(k.Type), Chain: chain, Address: addr})
		}
	}
	return out, nil
}

// readMnemonic reads one line from the terminal without echo, or from stdin when it is not one.
func readMnemonic(out io.Writer, stdin io.Reader) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(out, "mnemonic (not echoed): ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(out)
		if err != nil {
			return "", fmt.Errorf("reading the mnemonic: %v", err)
		}
		return string(b), nil
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && (!errors.Is(err, io.EOF) || line == "") {
		return "", errors.New("reading the mnemonic from standard input: nothing read")
	}
	return strings.TrimSpace(line), nil
}
