package worker

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/stakeflow/stakeflow/activities/notify"
	"github.com/stakeflow/stakeflow/chain/networks"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/store"
	"github.com/stakeflow/stakeflow/workflows"
)

// Config is the worker's configuration. Every field has a flag, an environment twin
// (STAKEFLOW_<FLAG>) and a key of the same name in the optional JSON file (--config).
type Config struct {
	ConfigFile string
	Temporal   cli.Temporal
	TaskQueue  string

	// ServiceURL is the staking service's base URL (either published form).
	ServiceURL string
	// ServiceTokenFile holds the service's bearer token.
	ServiceTokenFile string
	// ValidatorStatusParam names endpoint 7's query parameter.
	ValidatorStatusParam string
	// SolanaKeys are keypair files or directories of them.
	SolanaKeys cli.StringList
	// SolanaRPC maps network name to JSON-RPC URL.
	SolanaRPC cli.StringMap
	// SolanaGenesis maps network name to the genesis hash its RPC must serve, for a network with
	// no known hash or to override the known one (a local cluster under a public name).
	SolanaGenesis cli.StringMap
	// SolanaSlotDuration is the networks' slot time, used to size waits for an epoch's end.
	SolanaSlotDuration time.Duration
	// EpochRecheck caps each wait for an epoch's end before a stake account is read again.
	EpochRecheck time.Duration

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

	HealthAddr string
	// HealthFD is a listening socket the worker inherited (as this file descriptor) to serve
	// /healthz, /readyz and /metrics on instead of HealthAddr (0: none): a supervisor that binds
	// the socket once keeps one address across the worker's restarts.
	HealthFD int
	// HealthListener, when set, is where the health server serves instead of HealthAddr or
	// HealthFD (an in-process caller that bound it); Run closes it when it stops. No flag.
	HealthListener net.Listener `json:"-"`
	LogFormat      string
	LogLevel       string
	StopTimeout    time.Duration
	Pollers        int
	// StickyCache is how many workflows the worker keeps cached (process-wide); each parked
	// workflow in the cache holds a goroutine.
	StickyCache int

	// NotifyWebhook receives the operations' events (awaiting approval, stalled, failed,
	// cancelled, completed); empty: none are posted.
	NotifyWebhook string
	// NotifyWebhookSecretFile holds the secret every post is signed with (HMAC-SHA256).
	NotifyWebhookSecretFile string
	// NotifyFormat is the body of a post: json (the event) or slack ({"text": ...}).
	NotifyFormat string

	// Store is the data jobs' store, a DSN: "postgres://..." or "sqlite:PATH" (empty: the SQLite
	// file stakeflow.db in DataDir).
	Store string
	// DataDir holds the worker's files (the default store).
	DataDir string

	// EVM configures Polygon staking on Ethereum networks (off without --evm-rpc).
	EVM EVMConfig
	// Celestia configures Celestia staking (off without --celestia-rest).
	Celestia CelestiaConfig
	// Hyperliquid configures Hyperliquid's staking withdrawal (off without --hyperliquid-api).
	Hyperliquid HyperliquidConfig
}

// DefaultMaxCommission is --max-commission's default, in percent.
const DefaultMaxCommission = 10

// Register adds the worker's flags to fs.
func (c *Config) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.ConfigFile, "config", "", "JSON file of settings (keys are flag names)")
	c.Temporal.Register(fs)
	fs.StringVar(&c.TaskQueue, "task-queue", workflows.TaskQueue, "Temporal task queue")
	fs.StringVar(&c.ServiceURL, "service-url", "", "staking service base URL")
	fs.StringVar(&c.ServiceTokenFile, "service-token-file", "", "file holding the staking service bearer token")
	fs.StringVar(&c.ValidatorStatusParam, "validator-status-param", "", "query parameter name of the validator status endpoint (default: the client's)")
	fs.Var(&c.SolanaKeys, "solana-keys", "comma-separated Solana keypair files or directories")
	fs.Var(&c.SolanaRPC, "solana-rpc", "comma-separated network=url Solana JSON-RPC endpoints, e.g. testnet=http://127.0.0.1:8899")
	fs.Var(&c.SolanaGenesis, "solana-genesis", "comma-separated network=hash genesis hashes the RPCs must serve, for networks with no known hash or to override it (a local cluster)")
	fs.DurationVar(&c.SolanaSlotDuration, "solana-slot-duration", 400*time.Millisecond, "slot time of the Solana networks (sizes waits for an epoch's end)")
	fs.DurationVar(&c.EpochRecheck, "epoch-recheck", time.Hour, "longest wait before a deactivating stake account is read again")
	fs.Var(&c.AllowedVoteAccounts, "allowed-vote-accounts", "comma-separated vote accounts stakes may be delegated to (empty: only those asked for)")
	fs.UintVar(&c.MaxCommission, "max-commission", DefaultMaxCommission, "highest validator commission, percent, stakes may be delegated to")
	fs.Uint64Var(&c.MaxComputeUnitPrice, "max-compute-unit-price", 0, "highest compute-unit price to sign, micro-lamports (0: the signer's default)")
	fs.Uint64Var(&c.MaxComputeUnitLimit, "max-compute-unit-limit", 0, "highest compute-unit limit to sign (0: the signer's default)")
	fs.Uint64Var(&c.MaxFeeLamports, "max-fee-lamports", 0, "most a signed transaction may pay in fees, lamports (0: the signer's default)")
	fs.Uint64Var(&c.ApprovalThreshold, "approval-threshold-lamports", 0, "operations of at least this many lamports wait for approval (0: never)")
	fs.Uint64Var(&c.DualApprovalThreshold, "dual-approval-threshold-lamports", 0, "operations of at least this many lamports wait for two approvals (0: never)")
	fs.StringVar(&c.HealthAddr, "health-addr", "127.0.0.1:8081", "address of /healthz, /readyz and /metrics (empty: off; port 0: a free one, logged)")
	fs.IntVar(&c.HealthFD, "health-fd", 0, "serve /healthz, /readyz and /metrics on this inherited listening socket instead of --health-addr (0: none)")
	fs.StringVar(&c.LogFormat, "log-format", "json", "json or console")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&c.StopTimeout, "stop-timeout", 30*time.Second, "how long running activities get to finish on stop")
	fs.IntVar(&c.Pollers, "pollers", 8, "workflow and activity task pollers each")
	fs.IntVar(&c.StickyCache, "sticky-cache", 2000, "workflows kept cached by the worker (bounds memory when many operations wait)")
	fs.StringVar(&c.NotifyWebhook, "notify-webhook", "", "URL the operations' events are posted to (awaiting approval, stalled, failed, cancelled, completed; empty: none)")
	fs.StringVar(&c.NotifyWebhookSecretFile, "notify-webhook-secret-file", "", "file holding the secret each event post is signed with (X-Stakeflow-Signature, HMAC-SHA256)")
	fs.StringVar(&c.NotifyFormat, "notify-format", notify.FormatJSON, "body of an event post: json (the event) or slack ({\"text\": one line})")
	fs.StringVar(&c.Store, "store", "", "the data jobs' store: postgres://... or sqlite:PATH (default: sqlite:<data-dir>/stakeflow.db)")
	fs.StringVar(&c.DataDir, "data-dir", "data", "directory of the worker's files (the default store)")
	c.EVM.Register(fs)
	c.Celestia.Register(fs)
	c.Hyperliquid.Register(fs)
}

// Validate checks the configuration; the error names every setting that is wrong.
func (c *Config) Validate() error {
	var errs []error
	if c.ServiceURL == "" {
		errs = append(errs, errors.New("--service-url is required"))
	} else if u, err := url.Parse(c.ServiceURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("--service-url %q: want an http(s) URL", c.ServiceURL))
	}
	if c.ServiceTokenFile == "" {
		errs = append(errs, errors.New("--service-token-file is required"))
	}
	if len(c.SolanaKeys) == 0 {
		errs = append(errs, errors.New("--solana-keys is required"))
	}
	if len(c.SolanaRPC) == 0 {
		errs = append(errs, errors.New("--solana-rpc is required"))
	}
	configured := sortedKeys(c.SolanaRPC)
	for _, n := range configured {
		if !networks.Solana.Has(n) {
			errs = append(errs, fmt.Errorf("--solana-rpc: unknown network %q (want %v)", n, networks.Solana.Names()))
		}
		if u, err := url.Parse(c.SolanaRPC[n]); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("--solana-rpc %s: %q is not an http(s) URL", n, c.SolanaRPC[n]))
		}
	}
	for _, n := range sortedKeys(c.SolanaGenesis) {
		if _, ok := c.SolanaRPC[n]; !ok {
			errs = append(errs, fmt.Errorf("--solana-genesis names network %q, which has no --solana-rpc", n))
		}
		if h, err := solana.HashFromBase58(c.SolanaGenesis[n]); err != nil || h.IsZero() {
			errs = append(errs, fmt.Errorf("--solana-genesis %s: %q is not a base58 hash of 32 bytes", n, c.SolanaGenesis[n]))
		}
	}
	for _, n := range configured {
		if _, ok := c.ExpectedGenesis(n); !ok {
			errs = append(errs, fmt.Errorf("--solana-rpc %s: no known genesis hash for this network: name the one its RPC must serve with --solana-genesis %s=HASH", n, n))
		}
	}
	if c.MaxCommission > 100 {
		errs = append(errs, fmt.Errorf("--max-commission %d: want a percentage from 0 to 100", c.MaxCommission))
	}
	if c.MaxComputeUnitLimit > math.MaxUint32 {
		errs = append(errs, fmt.Errorf("--max-compute-unit-limit %d: want at most %d", c.MaxComputeUnitLimit, uint64(math.MaxUint32)))
	}
	if c.DualApprovalThreshold > 0 && c.DualApprovalThreshold < c.ApprovalThreshold {
		errs = append(errs, fmt.Errorf("--dual-approval-threshold-lamports %d is below --approval-threshold-lamports %d", c.DualApprovalThreshold, c.ApprovalThreshold))
	}
	if c.StickyCache < 0 {
		errs = append(errs, errors.New("--sticky-cache must not be negative"))
	}
	if c.Pollers < 1 {
		errs = append(errs, errors.New("--pollers must be at least 1"))
	}
	if c.NotifyWebhook != "" {
		if err := notify.CheckURL(c.NotifyWebhook); err != nil {
			errs = append(errs, err)
		}
	}
	if c.NotifyWebhook == "" && c.NotifyWebhookSecretFile != "" {
		errs = append(errs, errors.New("--notify-webhook-secret-file needs --notify-webhook"))
	}
	if c.NotifyFormat != "" && c.NotifyFormat != notify.FormatJSON && c.NotifyFormat != notify.FormatSlack {
		errs = append(errs, fmt.Errorf("--notify-format %q: want %s or %s", c.NotifyFormat, notify.FormatJSON, notify.FormatSlack))
	}
	if err := checkDSN(c.StoreDSN()); err != nil {
		errs = append(errs, err)
	}
	evm := c.EVM
	if c.Hyperliquid.Enabled() && !evm.Enabled() {
		// Hyperliquid signs with the EVM keys without any EVM network.
		evm.Keys, evm.PassphraseFile = "", ""
	}
	if err := evm.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Hyperliquid.Validate(c.EVM); err != nil {
		errs = append(errs, err)
	}
	if err := c.Celestia.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ExpectedGenesis returns the genesis hash the RPC of network must serve: the one --solana-genesis
// names, else the public cluster's. ok is false when neither is known.
func (c *Config) ExpectedGenesis(network string) (hash string, ok bool) {
	if h, ok := c.SolanaGenesis[network]; ok {
		return h, true
	}
	return solchain.KnownGenesisHash(network)
}

func sortedKeys(m cli.StringMap) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkDSN refuses a store DSN of a kind the store cannot open: it takes postgres:// (or
// postgresql://) URLs, sqlite:PATH and plain file paths.
func checkDSN(dsn string) error {
	scheme, _, ok := strings.Cut(dsn, "://")
	switch {
	case dsn == "" || dsn == "sqlite:":
		return errors.New("--store: give a DSN (postgres://... or sqlite:PATH)")
	case ok && scheme != "postgres" && scheme != "postgresql":
		return fmt.Errorf("--store %s: want postgres://... or sqlite:PATH", store.RedactDSN(dsn))
	}
	return nil
}
