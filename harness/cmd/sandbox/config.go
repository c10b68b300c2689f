package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
)

// envPrefix starts the environment twin of every flag.
const envPrefix = "SANDBOX_"

// secretEnv holds the token secret itself.
const secretEnv = "SANDBOX_TOKEN_SECRET"

// Config is the parsed command line of the serve command.
type Config struct {
	Addr            string        // API listen address
	TokenSecretFile string        // file holding the HS256 secret
	DataDir         string        // Solana runtime install directory
	SolanaAddr      string        // Solana JSON-RPC listen address
	SlotDuration    time.Duration // wall time of one slot
	SlotsPerEpoch   uint64        // epoch length in slots
	BlockhashValid  uint64        // blocks a blockhash stays usable
	FinalizeDepth   uint64        // slots until finalized
	VoteAccounts    int           // healthy vote accounts
	DelinquentVotes int           // delinquent vote accounts
	GenesisSeed     string        // picks the runtime's network (genesis hash)
	RateLimit       string        // RateLimit-Policy per token
	Faults          string        // initial faults, JSON
	FaultsFile      string        // file holding the initial faults
	Hostile         string        // initial hostile mode
	VoteAccount     string        // vote account stakes go to
	EVMRPC          string        // EVM JSON-RPC endpoint 4 forwards to
	CelestiaUnbond  time.Duration // unbonding time of the Celestia ledgers
	CelestiaBlock   time.Duration // block time of the Celestia ledgers
	LogLevel        string        // debug, info, warn, error
	LogFormat       string        // console or json
}

// TokenConfig is the parsed command line of the token command.
type TokenConfig struct {
	TokenSecretFile string        // file holding the HS256 secret
	Subject         string        // token subject
	TTL             time.Duration // lifetime; 0 for no expiry
}

// envName is the environment twin of a flag.
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parse parses args into fs, then fills every flag not given on the command
// line from its environment twin.
func parse(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] {
			return
		}
		if v := getenv(envName(f.Name)); v != "" {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", envName(f.Name), v, err))
			}
		}
	})
	return errors.Join(errs...)
}

func newServeFlags(cfg *Config, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:8088", "listen address of the service API")
	fs.StringVar(&cfg.TokenSecretFile, "token-secret-file", "", "file holding the HS256 token secret (else $"+secretEnv+")")
	fs.StringVar(&cfg.DataDir, "data-dir", "", "directory for the Solana runtime's installed files (default: user cache dir)")
	fs.StringVar(&cfg.SolanaAddr, "solana-addr", "127.0.0.1:8899", "listen address of the Solana JSON-RPC runtime")
	fs.DurationVar(&cfg.SlotDuration, "slot-duration", solanart.DefaultSlotDuration, "wall time of one slot")
	fs.Uint64Var(&cfg.SlotsPerEpoch, "slots-per-epoch", 432, "epoch length in slots")
	fs.Uint64Var(&cfg.BlockhashValid, "blockhash-validity", solanart.DefaultBlockhashValidity, "blocks a blockhash stays usable")
	fs.Uint64Var(&cfg.FinalizeDepth, "finalization-depth", solanart.DefaultFinalizationDepth, "slots until a transaction is finalized")
	fs.IntVar(&cfg.VoteAccounts, "vote-accounts", solanart.DefaultVoteAccounts, "healthy vote accounts")
	fs.IntVar(&cfg.DelinquentVotes, "delinquent-vote-accounts", solanart.DefaultDelinquentVoteAccounts, "delinquent vote accounts")
	fs.StringVar(&cfg.GenesisSeed, "genesis-seed", "", "another seed runs another network: another genesis hash and other blockhashes (empty: "+solanart.DefaultGenesisHash+")")
	fs.StringVar(&cfg.RateLimit, "rate-limit", "", `rate-limit policy per token, e.g. "100;w=1,1000;w=60" (empty: none)`)
	fs.StringVar(&cfg.Faults, "faults", "", "initial faults as JSON (the body of POST /sandbox/faults)")
	fs.StringVar(&cfg.FaultsFile, "faults-file", "", "file holding the initial faults as JSON")
	fs.StringVar(&cfg.Hostile, "hostile", "", "initial hostile mode (empty: honest)")
	fs.StringVar(&cfg.VoteAccount, "vote-account", "", "vote account stakes go to (default: first healthy one)")
	fs.StringVar(&cfg.EVMRPC, "evm-rpc", "", "JSON-RPC URL of an EVM chain that POST /api/v1/polygon/transaction/send forwards to (empty: shape check only)")
	fs.DurationVar(&cfg.CelestiaBlock, "celestia-block-time", 6*time.Second, "the Celestia ledgers produce a block this often, with or without transactions, so timeout heights pass (0: only with transactions)")
	fs.DurationVar(&cfg.CelestiaUnbond, "celestia-unbonding-time", sandbox.CelestiaUnbondingTime, "unbonding time of the Celestia ledgers endpoint 3 broadcasts into (POST /chains/{network}/sandbox/warp moves their clock)")
	fs.StringVar(&cfg.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&cfg.LogFormat, "log-format", "console", "log format: console or json")
	return fs
}

func newTokenFlags(cfg *TokenConfig, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("sandbox token", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&cfg.TokenSecretFile, "token-secret-file", "", "file holding the HS256 token secret (else $"+secretEnv+")")
	fs.StringVar(&cfg.Subject, "subject", "", "token subject (required)")
	fs.DurationVar(&cfg.TTL, "ttl", 24*time.Hour, "token lifetime; 0 for no expiry")
	return fs
}

// loadSecret reads the token secret from file, else from $SANDBOX_TOKEN_SECRET.
func loadSecret(file string, getenv func(string) string) ([]byte, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("read token secret file: %w", err)
		}
		s := strings.TrimSpace(string(b))
		if s == "" {
			return nil, fmt.Errorf("token secret file %s is empty", file)
		}
		return []byte(s), nil
	}
	if s := strings.TrimSpace(getenv(secretEnv)); s != "" {
		return []byte(s), nil
	}
	return nil, fmt.Errorf("no token secret: set --token-secret-file, %s or %s", envName("token-secret-file"), secretEnv)
}

// sandboxConfig turns the command line into a sandbox.Config.
func (c Config) sandboxConfig(secret []byte) (sandbox.Config, error) {
	var faults sandbox.FaultConfig
	raw := c.Faults
	if c.FaultsFile != "" {
		if raw != "" {
			return sandbox.Config{}, errors.New("--faults and --faults-file are exclusive")
		}
		b, err := os.ReadFile(c.FaultsFile)
		if err != nil {
			return sandbox.Config{}, fmt.Errorf("read faults file: %w", err)
		}
		raw = string(b)
	}
	if strings.TrimSpace(raw) != "" {
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&faults); err != nil {
			return sandbox.Config{}, fmt.Errorf("faults: %w", err)
		}
	}
	if _, err := sandbox.ParseRatePolicy(c.RateLimit); err != nil {
		return sandbox.Config{}, err
	}
	return sandbox.Config{
		Addr:        c.Addr,
		TokenSecret: secret,
		Runtime: solanart.Options{
			Addr: c.SolanaAddr, SlotDuration: c.SlotDuration, SlotsPerEpoch: c.SlotsPerEpoch,
			BlockhashValidity: c.BlockhashValid, FinalizationDepth: c.FinalizeDepth,
			VoteAccounts: c.VoteAccounts, DelinquentVoteAccounts: c.DelinquentVotes, CacheDir: c.DataDir,
			GenesisSeed: c.GenesisSeed,
		},
		RateLimit:          c.RateLimit,
		Faults:             faults,
		Hostile:            sandbox.HostileMode(c.Hostile),
		DefaultVoteAccount: c.VoteAccount,
		EVMRPC:             c.EVMRPC,
		Celestia:           &sandbox.CelestiaOptions{UnbondingTime: c.CelestiaUnbond, BlockTime: c.CelestiaBlock},
	}, nil
}
