package worker

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/stakeflow/stakeflow/activities/notify"
	"github.com/stakeflow/stakeflow/approval"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/hsmkeys"
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/store"
)

// DefaultStickyCache is --sticky-cache's default: how many workflows the worker keeps cached.
// Each cached workflow held about 57 KB of the worker's RSS (its goroutine, its state, its
// history's decoded events): with 500, 10,000 unstakes parked at the deactivation wait held
// 105 MB (make bench-full, docs/performance.md), against about 185 MB with 2,000. A workflow out
// of the cache is replayed from its history when it next has work, which for a parked
// operation is once a recheck; 500 is ten times the concurrency the benchmark drives.
const DefaultStickyCache = 500

// Config is the worker's configuration. Every field has a flag, an environment twin
// (STAKEFLOW_<FLAG>) and a key of the same name in the optional JSON file (--config).
type Config struct {
	ConfigFile string
	// Temporal is the connection, and the prefix of the modules' task queues.
	Temporal cli.Temporal
	// Identity names this worker to Temporal: the Web UI shows it beside each task it took and
	// each queue's pollers (empty: the SDK's, process ID @ host name).
	Identity string

	// ServiceURL is the staking service's base URL (either published form).
	ServiceURL string
	// ServiceTokenFile holds the service's bearer token.
	ServiceTokenFile string
	// ValidatorStatusParam names endpoint 7's query parameter.
	ValidatorStatusParam string
	// EpochRecheck caps each wait for a chain's epoch or queue before the chain is read again.
	EpochRecheck time.Duration

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

	// PKCS11 is the HSM token (PKCS#11 library, token label, PIN file) of the chains that sign
	// with keys in it (--solana-hsm-keys, --evm-hsm-keys, --celestia-hsm-keys,
	// --hyperliquid-hsm-keys).
	PKCS11 hsmkeys.Settings
	// HSM, when set, is a token already open that the modules use instead of opening PKCS11's
	// (an in-process caller that counts its signatures); Run does not close it. No flag.
	HSM *hsmkeys.Token `json:"-"`
	// ApproversFile names the approvers (package approval: `NAME ssh-ed25519 AAAA...` or `NAME
	// ed25519:BASE64`, one a line): with it every approve or reject must be signed by one of their
	// keys; without it decisions name their approver in free text (not separation of duties).
	ApproversFile string

	// Modules are the chains (and the data jobs) this worker may serve, each with its own
	// settings; it serves those enabled, each on its own task queue. No flag of its own: each
	// module adds its flags.
	Modules []module.Module `json:"-"`
}

// Register adds the worker's flags to fs, and each module's.
func (c *Config) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.ConfigFile, "config", "", "JSON file of settings (keys are flag names)")
	c.Temporal.Register(fs)
	fs.StringVar(&c.Identity, "identity", "", "name of this worker in Temporal (the Web UI shows it on each task taken and each queue's pollers; empty: pid@host)")
	fs.StringVar(&c.ServiceURL, "service-url", "", "staking service base URL")
	fs.StringVar(&c.ServiceTokenFile, "service-token-file", "", "file holding the staking service bearer token")
	fs.StringVar(&c.ValidatorStatusParam, "validator-status-param", "", "query parameter name of the validator status endpoint (default: the client's)")
	fs.DurationVar(&c.EpochRecheck, "epoch-recheck", time.Hour, "longest wait for a chain's epoch or queue before the chain is read again")
	fs.StringVar(&c.HealthAddr, "health-addr", "127.0.0.1:8081", "address of /healthz, /readyz and /metrics (empty: off; port 0: a free one, logged)")
	fs.IntVar(&c.HealthFD, "health-fd", 0, "serve /healthz, /readyz and /metrics on this inherited listening socket instead of --health-addr (0: none)")
	fs.StringVar(&c.LogFormat, "log-format", "json", "json or console")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&c.StopTimeout, "stop-timeout", 30*time.Second, "how long running activities get to finish on stop")
	fs.IntVar(&c.Pollers, "pollers", 8, "workflow and activity task pollers each")
	fs.IntVar(&c.StickyCache, "sticky-cache", DefaultStickyCache, "workflows kept cached by the worker (bounds memory when many operations wait)")
	fs.StringVar(&c.NotifyWebhook, "notify-webhook", "", "URL the operations' events are posted to (awaiting approval, stalled, failed, cancelled, completed; empty: none)")
	fs.StringVar(&c.NotifyWebhookSecretFile, "notify-webhook-secret-file", "", "file holding the secret each event post is signed with (X-Stakeflow-Signature, HMAC-SHA256)")
	fs.StringVar(&c.NotifyFormat, "notify-format", notify.FormatJSON, "body of an event post: json (the event) or slack ({\"text\": one line})")
	fs.StringVar(&c.Store, "store", "", "the data jobs' store: postgres://... or sqlite:PATH (default: sqlite:<data-dir>/stakeflow.db)")
	fs.StringVar(&c.DataDir, "data-dir", "data", "directory of the worker's files (the default store)")
	c.PKCS11.Register(fs)
	fs.StringVar(&c.ApproversFile, "approvers", "", "file of approvers, one a line: NAME ssh-ed25519 AAAA... or NAME ed25519:BASE64 (every decision then signed by one of their keys; empty: free-text names, not separation of duties)")
	for _, m := range c.Modules {
		m.Flags(fs)
	}
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
	if err := c.PKCS11.Validate(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.Approvers(); err != nil {
		errs = append(errs, fmt.Errorf("--approvers: %w", err))
	}
	enabled := 0
	for _, m := range c.Modules {
		if err := m.Validate(); err != nil {
			errs = append(errs, err)
		}
		if m.Enabled() {
			enabled++
		}
	}
	if enabled == 0 {
		errs = append(errs, fmt.Errorf("no module to serve: configure at least one of %s", c.moduleNames()))
	}
	return errors.Join(errs...)
}

// Approvers reads the approvers file (none without --approvers).
func (c *Config) Approvers() ([]approval.Approver, error) {
	if c.ApproversFile == "" {
		return nil, nil
	}
	return approval.ParseFile(c.ApproversFile)
}

// moduleNames lists the modules' names, comma-separated.
func (c *Config) moduleNames() string {
	names := make([]string, 0, len(c.Modules))
	for _, m := range c.Modules {
		names = append(names, m.Name())
	}
	return strings.Join(names, ", ")
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
