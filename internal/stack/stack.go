// Package stack runs stakeflow's local stack in one process: a Temporal dev server (with its Web
// UI and the project's search attributes), the staking-service sandbox on a real Solana runtime,
// funded staker keys, and the worker. The integration tests and the local demo both use it, so
// what the tests prove is what a developer runs.
package stack

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/worker"
	"github.com/stakeflow/stakeflow/sandbox"
	"github.com/stakeflow/stakeflow/sandbox/solanart"
	"github.com/stakeflow/stakeflow/workflows"
)

// Options configure the stack.
type Options struct {
	// TemporalCLI is the path of the Temporal CLI binary (see scripts/tools.sh); required.
	TemporalCLI string
	// Dir holds the stack's files: keys, token, and the Temporal database when Persist is set.
	Dir string
	// Persist keeps Temporal's state in Dir/temporal.db across restarts.
	Persist bool
	// UIPort serves the Temporal Web UI on this port (0: no UI).
	UIPort int
	// TemporalPort is the frontend port (0: a free one).
	TemporalPort int
	// ServerMetrics has the dev server serve its Prometheus metrics on a free port (MetricsURL).
	ServerMetrics bool
	// ServerDynamicConfig adds `key=value` dynamic-config settings to the dev server's own
	// (BaseServerDynamicConfig).
	ServerDynamicConfig []string
	// SandboxAddr is the sandbox's listen address (default 127.0.0.1:0).
	SandboxAddr string
	// Runtime configures the Solana runtime.
	Runtime solanart.Options
	// Stakers is how many staker keys to create and fund with StakerLamports each.
	Stakers        int
	StakerLamports uint64
	// ApprovalThreshold is the worker's approval threshold in lamports (0: off).
	ApprovalThreshold uint64
	// EpochRecheck is the worker's --epoch-recheck (0: its default, an hour).
	EpochRecheck time.Duration
	// NoWorker leaves the worker out: the caller runs its own (StartWorker starts the stack's).
	NoWorker bool
	// GRPCCompression is the compression of the stack's connections to Temporal (its client's
	// and its worker's): none (the default; the server is on loopback) or gzip.
	GRPCCompression string
	// Logger receives the stack's own logs; WorkerLogger the worker's (both default no-op).
	Logger       *zap.Logger
	WorkerLogger *zap.Logger
}

// Stack is a running local stack.
type Stack struct {
	opts      Options
	dev       *testsuite.DevServer
	Client    client.Client
	Sandbox   *sandbox.Sandbox
	Stakers   []solana.PublicKey
	TokenFile string
	KeyDir    string
	UIURL     string
	// MetricsURL is the dev server's Prometheus endpoint when Options.ServerMetrics is set.
	MetricsURL string

	healthAddr string

	mu           sync.Mutex
	workerCancel context.CancelFunc
	workerDone   chan error
}

// Start starts Temporal, the sandbox, funds the stakers and starts the worker.
func Start(ctx context.Context, opts Options) (s *Stack, err error) {
	if opts.TemporalCLI == "" {
		return nil, errors.New("stack: TemporalCLI is required (scripts/tools.sh temporal)")
	}
	if opts.Dir == "" {
		return nil, errors.New("stack: Dir is required")
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.WorkerLogger == nil {
		opts.WorkerLogger = zap.NewNop()
	}
	s = &Stack{opts: opts, KeyDir: filepath.Join(opts.Dir, "keys"), TokenFile: filepath.Join(opts.Dir, "service-token")}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if err := os.MkdirAll(s.KeyDir, 0o700); err != nil {
		return nil, err
	}

	if err := s.startTemporal(ctx); err != nil {
		return nil, err
	}
	healthPort, err := freePort()
	if err != nil {
		return nil, err
	}
	s.healthAddr = "127.0.0.1:" + strconv.Itoa(healthPort)
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	s.Sandbox, err = sandbox.Start(ctx, sandbox.Config{
		Addr: opts.SandboxAddr, TokenSecret: secret, Runtime: opts.Runtime, Logger: opts.Logger.Named("sandbox"),
	})
	if err != nil {
		return nil, fmt.Errorf("starting sandbox: %w", err)
	}
	token, err := sandbox.MintToken(secret, "stakeflow-local", 30*24*time.Hour)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(s.TokenFile, []byte(token), 0o600); err != nil {
		return nil, err
	}
	for i := 0; i < opts.Stakers; i++ {
		pk, err := s.newStaker(ctx, opts.StakerLamports)
		if err != nil {
			return nil, err
		}
		s.Stakers = append(s.Stakers, pk)
	}
	if !opts.NoWorker {
		if err := s.StartWorker(ctx); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// BaseServerDynamicConfig is the dynamic configuration every stack's dev server runs with: the
// first cuts the server's hop between a workflow's tasks from hundreds of milliseconds to a few;
// the second lets the server hand an activity scheduled by a workflow task straight back to the
// worker that completed it (eager activity execution), saving a round trip and server CPU. The
// third turns the search-attribute cache back on, as every other server has it: the dev server
// turns it off unless told, so that attributes added while it runs show at once, and then reads
// its cluster metadata and namespace from the database each time a workflow starts with, upserts
// or records search attributes (66 database requests per stake instead of 34, by the server's
// counters: `go run ./cmd/bench -server-metrics`). The stack registers its attributes before the
// server takes its first request, so it never needs the refresh.
var BaseServerDynamicConfig = []string{
	"history.transferProcessorMaxPollRPS=1000",
	"system.enableActivityEagerExecution=true",
	"system.forceSearchAttributesCacheRefreshOnRead=false",
}

func (s *Stack) startTemporal(ctx context.Context) error {
	port := s.opts.TemporalPort
	if port == 0 {
		p, err := freePort()
		if err != nil {
			return err
		}
		port = p
	}
	var args []string
	for _, kv := range append(append([]string{}, BaseServerDynamicConfig...), s.opts.ServerDynamicConfig...) {
		args = append(args, "--dynamic-config-value", kv)
	}
	for _, kv := range workflows.SearchAttributeTypes() {
		args = append(args, "--search-attribute", kv[0]+"="+kv[1])
	}
	if s.opts.ServerMetrics {
		p, err := freePort()
		if err != nil {
			return err
		}
		args = append(args, "--metrics-port", strconv.Itoa(p))
		s.MetricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", p)
	}
	dbFile := ""
	if s.opts.Persist {
		dbFile = filepath.Join(s.opts.Dir, "temporal.db")
		for _, p := range SQLitePragmas {
			args = append(args, "--sqlite-pragma", p)
		}
	}
	compression, err := cli.GRPCCompression(s.compression())
	if err != nil {
		return err
	}
	devOpts := testsuite.DevServerOptions{
		ExistingPath: s.opts.TemporalCLI,
		ClientOptions: &client.Options{
			HostPort: "127.0.0.1:" + strconv.Itoa(port), Logger: cli.TemporalLogger(s.opts.Logger.Named("temporal")),
			ConnectionOptions: client.ConnectionOptions{GrpcCompression: compression},
		},
		DBFilename: dbFile,
		LogLevel:   "error",
		ExtraArgs:  args,
		Stdout:     &discard{}, Stderr: &discard{},
	}
	if s.opts.UIPort != 0 {
		devOpts.EnableUI = true
		devOpts.UIPort = strconv.Itoa(s.opts.UIPort)
		s.UIURL = fmt.Sprintf("http://127.0.0.1:%d", s.opts.UIPort)
	}
	dev, err := testsuite.StartDevServer(ctx, devOpts)
	if err != nil {
		return fmt.Errorf("starting Temporal dev server: %w", err)
	}
	s.dev = dev
	s.Client = dev.Client()
	return nil
}

// SQLitePragmas are the dev server's SQLite settings when it keeps its database in a file: a
// write-ahead log synced at checkpoints, and, since SQLite's default page cache (2 MB) is far
// smaller than the database of a busy stack, the file mapped and a 32 MB cache (together about a
// fifth less server CPU per operation).
var SQLitePragmas = []string{"journal_mode=wal", "synchronous=normal", "mmap_size=268435456", "cache_size=-32768", "temp_store=memory"}

// compression is the gRPC compression of the stack's connections to Temporal.
func (s *Stack) compression() string {
	if s.opts.GRPCCompression == "" {
		return cli.CompressionNone
	}
	return s.opts.GRPCCompression
}

// TemporalAddress is the frontend's host:port.
func (s *Stack) TemporalAddress() string { return s.dev.FrontendHostPort() }

// HealthURL is the base URL of the worker's /healthz, /readyz and /metrics.
func (s *Stack) HealthURL() string { return "http://" + s.healthAddr }

// WorkerConfig is the configuration the stack's worker runs with.
func (s *Stack) WorkerConfig() worker.Config {
	rpcURL := s.Sandbox.Runtime().URL()
	// The local runtime serves both networks under their public names: the worker must expect its
	// genesis hash, as the runtime reported it at start, not the public clusters'.
	genesis := s.Sandbox.Runtime().GenesisHash().String()
	// The sandbox's own validators are the ones the worker may stake to when the operator names
	// none (the service then chooses among them).
	var allowed cli.StringList
	for _, v := range s.Sandbox.Runtime().VoteAccounts() {
		allowed = append(allowed, v.String())
	}
	slot := s.opts.Runtime.SlotDuration
	if slot == 0 {
		slot = solanart.DefaultSlotDuration
	}
	cfg := worker.Config{
		Temporal:            cli.Temporal{Address: s.TemporalAddress(), Namespace: "default", Compression: s.compression()},
		TaskQueue:           workflows.TaskQueue,
		ServiceURL:          s.Sandbox.URL(),
		ServiceTokenFile:    s.TokenFile,
		SolanaKeys:          cli.StringList{s.KeyDir},
		SolanaRPC:           cli.StringMap{"testnet": rpcURL, "mainnet-beta": rpcURL},
		SolanaGenesis:       cli.StringMap{"testnet": genesis, "mainnet-beta": genesis},
		MaxCommission:       worker.DefaultMaxCommission,
		AllowedVoteAccounts: allowed,
		SolanaSlotDuration:  slot,
		HealthAddr:          s.healthAddr,
		ApprovalThreshold:   s.opts.ApprovalThreshold,
		EpochRecheck:        s.opts.EpochRecheck,
		LogFormat:           "console",
		LogLevel:            "info",
		StopTimeout:         5 * time.Second,
		Pollers:             8,
	}
	return cfg
}

// StartWorker starts the worker in this process; it runs until StopWorker or Close.
func (s *Stack) StartWorker(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.workerCancel != nil {
		return errors.New("stack: worker already running")
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	cfg := s.WorkerConfig()
	go func() { done <- worker.Run(wctx, cfg, s.opts.WorkerLogger) }()
	s.workerCancel, s.workerDone = cancel, done
	return nil
}

// StopWorker stops the worker and waits for it.
func (s *Stack) StopWorker() error {
	s.mu.Lock()
	cancel, done := s.workerCancel, s.workerDone
	s.workerCancel, s.workerDone = nil, nil
	s.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	return <-done
}

// WorkerErr returns the worker's error if it stopped on its own.
func (s *Stack) WorkerErr() error {
	s.mu.Lock()
	done := s.workerDone
	s.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case err := <-done:
		// Put the outcome back so a later StopWorker (or WorkerErr) still receives it.
		done <- err
		if err == nil {
			err = errors.New("worker stopped")
		}
		return err
	default:
		return nil
	}
}

// newStaker writes a new Solana keypair into the key directory and funds it.
func (s *Stack) newStaker(ctx context.Context, lamports uint64) (solana.PublicKey, error) {
	key, err := solana.NewRandomPrivateKey()
	if err != nil {
		return solana.PublicKey{}, err
	}
	ints := make([]int, len(key))
	for i, b := range key {
		ints[i] = int(b)
	}
	raw, err := json.Marshal(ints)
	if err != nil {
		return solana.PublicKey{}, err
	}
	pk := key.PublicKey()
	if err := os.WriteFile(filepath.Join(s.KeyDir, pk.String()+".json"), raw, 0o600); err != nil {
		return solana.PublicKey{}, err
	}
	if lamports > 0 {
		if err := s.Sandbox.Runtime().Airdrop(ctx, pk, lamports); err != nil {
			return solana.PublicKey{}, fmt.Errorf("funding staker %s: %w", pk, err)
		}
	}
	return pk, nil
}

// Close stops everything the stack started.
func (s *Stack) Close() {
	_ = s.StopWorker()
	if s.Sandbox != nil {
		_ = s.Sandbox.Close()
	}
	if s.dev != nil {
		_ = s.dev.Stop()
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

type discard struct{}

func (*discard) Write(p []byte) (int, error) { return len(p), nil }
