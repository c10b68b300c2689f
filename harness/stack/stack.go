// Package stack runs stakeflow's local stack in one process: a Temporal dev server (with its Web
// UI and the project's search attributes), the staking-service sandbox on a real Solana runtime,
// funded staker keys, and the worker. The integration tests and the local demo both use it, so
// what the tests prove is what a developer runs.
package stack

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/harness/sandbox"
	"github.com/stakeflow/stakeflow/harness/sandbox/evmchain"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/internal/worker"
	celestiamod "github.com/stakeflow/stakeflow/modules/celestia"
	evmmod "github.com/stakeflow/stakeflow/modules/evm"
	hyperliquidmod "github.com/stakeflow/stakeflow/modules/hyperliquid"
	jobsmod "github.com/stakeflow/stakeflow/modules/jobs"
	solanamod "github.com/stakeflow/stakeflow/modules/solana"
	tonmod "github.com/stakeflow/stakeflow/modules/ton"
	"github.com/stakeflow/stakeflow/workflows"
)

// Options configure the stack.
type Options struct {
	// TemporalCLI is the path of the Temporal CLI binary (see scripts/tools.sh); required unless
	// TemporalAddress is set.
	TemporalCLI string
	// TemporalAddress, when set, is the frontend of a Temporal server already running (with the
	// namespace "default" and stakeflow's search attributes): the stack starts no dev server and
	// connects there (the dev-server options are then ignored).
	TemporalAddress string
	// Dir holds the stack's files: keys, token, and the Temporal database when Persist is set.
	Dir string
	// Persist keeps Temporal's state in Dir/temporal.db across restarts.
	Persist bool
	// UIPort serves the Temporal Web UI on this port (0: no UI; AnyPort: a free one, see UIURL).
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
	// EVM, when set, adds a real EVM chain for Polygon staking (see EVMOptions).
	EVM *EVMOptions
	// Celestia, when set, adds Celestia staking (see CelestiaOptions).
	Celestia *CelestiaOptions
	// HSM, when set, puts every chain's keys in a SoftHSM2 token (see HSMOptions).
	HSM *HSMOptions
	// NoWorker leaves the worker out: the caller runs its own (StartWorker starts the stack's).
	NoWorker bool
	// GRPCCompression is the compression of the stack's connections to Temporal (its client's
	// and its worker's): none (the default; the server is on loopback) or gzip.
	GRPCCompression string
	// PayloadKeyset, when set, is the keyset file (codec.LoadKeyset) of the payload codec: the
	// stack's client and worker encrypt every payload and failure they write to Temporal.
	PayloadKeyset string
	// CodecServer runs a codec server (internal/codecserver) over PayloadKeyset on a free loopback
	// port beside the dev server, with a fresh random token, and points the dev server's Web UI at
	// it (--ui-codec-endpoint), so the UI shows payloads decoded: see Stack.CodecURL. It requires
	// PayloadKeyset. The UI takes an endpoint but no header, so the token is in the endpoint's path,
	// and with it on the dev server's command line and in the UI's settings: fit for a stack on
	// loopback, not for a shared deployment. With TemporalAddress there is no dev server: the codec
	// server then serves clients without an origin (the Temporal CLI) only.
	CodecServer bool
	// ConfigureWorker, when set, adjusts the worker's configuration (WorkerConfig) last: a test's
	// webhook, say.
	ConfigureWorker func(*worker.Config)
	// Logger receives the stack's own logs; WorkerLogger the worker's (both default no-op).
	Logger       *zap.Logger
	WorkerLogger *zap.Logger
}

// AnyPort as Options.UIPort serves the Web UI on a free port the stack picks.
const AnyPort = -1

// ErrPortInUse is wrapped by Start's error when the Temporal dev server refused a port it was
// given because something else holds it (a port the caller fixed; ports the stack picks itself
// are picked again).
var ErrPortInUse = errors.New("a port given to the Temporal dev server is in use")

// Stack is a running local stack.
type Stack struct {
	opts    Options
	dev     *testsuite.DevServer
	Client  client.Client
	Sandbox *sandbox.Sandbox
	Stakers []solana.PublicKey
	// EVM is the EVM chain when Options.EVM is set.
	EVM *EVM
	// Celestia is the Celestia side when Options.Celestia is set.
	Celestia *Celestia
	// HSM is the token and the keys in it when Options.HSM is set.
	HSM       *HSM
	TokenFile string
	KeyDir    string
	UIURL     string
	// MetricsURL is the dev server's Prometheus endpoint when Options.ServerMetrics is set.
	MetricsURL string
	// CodecURL is the codec server's base URL when Options.CodecServer is set: POST
	// CodecURL/decode (and /encode) with the header "Authorization: Bearer <token>", the token
	// being CodecToken, also in CodecTokenFile (0600). The Web UI calls CodecURL/<token>/decode.
	CodecURL       string
	CodecTokenFile string
	codecToken     string
	codecLn        net.Listener
	codecSrv       *http.Server

	// healthLn is the worker's health socket, bound once for the stack's life: each worker the
	// stack starts serves on a duplicate of it, so HealthURL stays the same across restarts.
	healthLn net.Listener

	// pick picks the ports the stack passes to the dev server (pickPort; tests replace it).
	pick func() (int, error)

	mu           sync.Mutex
	workerCancel context.CancelFunc
	workerDone   chan error
}

// Start starts Temporal, the sandbox, funds the stakers and starts the worker.
func Start(ctx context.Context, opts Options) (s *Stack, err error) {
	if opts.TemporalCLI == "" && opts.TemporalAddress == "" {
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
	s = &Stack{opts: opts, pick: pickPort, KeyDir: filepath.Join(opts.Dir, "keys"), TokenFile: filepath.Join(opts.Dir, "service-token")}
	// What started is stopped on an error (the stack itself: each error return sets s to nil).
	defer func(started *Stack) {
		if err != nil {
			started.Close()
		}
	}(s)
	if err := os.MkdirAll(s.KeyDir, 0o700); err != nil {
		return nil, err
	}
	if opts.CodecServer {
		if err := s.bindCodecServer(); err != nil {
			return nil, err
		}
	}

	if err := s.startTemporal(ctx); err != nil {
		return nil, err
	}
	if opts.CodecServer {
		if err := s.serveCodec(); err != nil {
			return nil, err
		}
	}
	if s.healthLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("binding the worker's health socket: %w", err)
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	evmRPC := ""
	var eigen *evmchain.EigenLayer
	if opts.EVM != nil {
		if err := s.startEVM(ctx, *opts.EVM); err != nil {
			return nil, err
		}
		evmRPC, eigen = s.EVM.Node.RPCURL(), s.EVM.EigenLayer
	}
	s.Sandbox, err = sandbox.Start(ctx, sandbox.Config{
		Addr: opts.SandboxAddr, TokenSecret: secret, Runtime: opts.Runtime, Logger: opts.Logger.Named("sandbox"),
		EVMRPC: evmRPC, EigenLayer: eigen, Celestia: celestiaSandbox(opts.Celestia),
	})
	if err != nil {
		return nil, fmt.Errorf("starting sandbox: %w", err)
	}
	if opts.Celestia != nil {
		if err := s.startCelestia(*opts.Celestia); err != nil {
			return nil, err
		}
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
	if opts.HSM != nil {
		if err := s.startHSM(ctx, *opts.HSM); err != nil {
			return nil, err
		}
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
// counters: `go run ./harness/cmd/bench -server-metrics`). The stack registers its attributes before the
// server takes its first request, so it never needs the refresh.
var BaseServerDynamicConfig = []string{
	"history.transferProcessorMaxPollRPS=1000",
	"system.enableActivityEagerExecution=true",
	"system.forceSearchAttributesCacheRefreshOnRead=false",
}

// startAttempts bounds how often the stack starts the dev server again on fresh ports when a port
// it picked was taken before the server bound it.
const startAttempts = 5

// startTemporal starts the dev server. The Temporal CLI cannot bind port 0 and report the port
// it got, so the stack picks free ports and passes them (pick, close, pass): another process may
// take one in between. The CLI then refuses to start ("address already in use"), and the stack
// starts it again on freshly picked ports; a port the caller fixed is not picked again (the error
// wraps ErrPortInUse).
func (s *Stack) startTemporal(ctx context.Context) error {
	if s.opts.TemporalAddress != "" {
		return s.dialTemporal()
	}
	for attempt := 1; ; attempt++ {
		err := s.startTemporalOnce(ctx)
		if err == nil {
			return nil
		}
		picked := s.opts.TemporalPort == 0 || s.opts.UIPort == AnyPort || s.opts.ServerMetrics
		if !errors.Is(err, ErrPortInUse) || !picked || attempt == startAttempts {
			return err
		}
		s.opts.Logger.Info("A port picked for the Temporal dev server was taken before it bound it; picking again",
			zap.Int("attempt", attempt), zap.Error(err))
	}
}

func (s *Stack) startTemporalOnce(ctx context.Context) error {
	port := s.opts.TemporalPort
	if port == 0 {
		p, err := s.pick()
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
	metricsURL := ""
	if s.opts.ServerMetrics {
		p, err := s.pick()
		if err != nil {
			return err
		}
		args = append(args, "--metrics-port", strconv.Itoa(p))
		metricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", p)
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
	// A refused port ends the wait for the server at once: the CLI exits, and what answers on the
	// port (if anything does) is not this server.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watch := &PortRefusalWatch{OnRefused: cancel}
	copts := &client.Options{
		HostPort: "127.0.0.1:" + strconv.Itoa(port), Logger: cli.TemporalLogger(s.opts.Logger.Named("temporal")),
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: compression},
	}
	if err := (&cli.Temporal{PayloadKeyset: s.opts.PayloadKeyset}).Encrypt(copts); err != nil {
		return err
	}
	devOpts := testsuite.DevServerOptions{
		ExistingPath:  s.opts.TemporalCLI,
		ClientOptions: copts,
		DBFilename:    dbFile,
		LogLevel:      "error",
		ExtraArgs:     args,
		Stdout:        watch, Stderr: watch,
	}
	uiURL := ""
	if s.opts.UIPort != 0 {
		ui := s.opts.UIPort
		if ui == AnyPort {
			if ui, err = s.pick(); err != nil {
				return err
			}
		}
		devOpts.EnableUI = true
		devOpts.UIPort = strconv.Itoa(ui)
		uiURL = fmt.Sprintf("http://127.0.0.1:%d", ui)
		if s.codecLn != nil {
			devOpts.ExtraArgs = append(devOpts.ExtraArgs, "--ui-codec-endpoint", s.uiCodecEndpoint())
		}
	}
	dev, err := testsuite.StartDevServer(sctx, devOpts)
	if refused := watch.Refused(); refused != "" {
		if err == nil {
			dev.Client().Close()
			_ = dev.Stop()
		}
		return fmt.Errorf("starting Temporal dev server: %w: %s", ErrPortInUse, refused)
	}
	if err != nil {
		return fmt.Errorf("starting Temporal dev server: %w", err)
	}
	s.dev, s.Client, s.UIURL, s.MetricsURL = dev, dev.Client(), uiURL, metricsURL
	return nil
}

// dialTemporal connects the stack's client to the server at Options.TemporalAddress.
func (s *Stack) dialTemporal() error {
	t := cli.Temporal{Address: s.opts.TemporalAddress, Namespace: "default", Compression: s.compression(), PayloadKeyset: s.opts.PayloadKeyset}
	c, err := t.Dial(s.opts.Logger.Named("temporal"))
	if err != nil {
		return fmt.Errorf("connecting to Temporal at %s: %w", s.opts.TemporalAddress, err)
	}
	s.Client = c
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
func (s *Stack) TemporalAddress() string {
	if s.opts.TemporalAddress != "" {
		return s.opts.TemporalAddress
	}
	return s.dev.FrontendHostPort()
}

// HealthURL is the base URL of the worker's /healthz, /readyz and /metrics.
func (s *Stack) HealthURL() string { return "http://" + s.healthLn.Addr().String() }

// WorkerConfig is the configuration the stack's worker runs with: with Options.HSM (and not
// SecondWorker), every chain's keys in the token.
func (s *Stack) WorkerConfig() worker.Config {
	cfg := s.baseWorkerConfig()
	if s.HSM != nil && !s.opts.HSM.SecondWorker {
		s.HSM.useHSM(&cfg)
	}
	if s.opts.ConfigureWorker != nil {
		s.opts.ConfigureWorker(&cfg)
	}
	return cfg
}

// baseWorkerConfig is the worker's configuration over the key files.
func (s *Stack) baseWorkerConfig() worker.Config {
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
	sol := solanamod.New()
	sol.Config = solanamod.Config{
		Keys:                cli.StringList{s.KeyDir},
		RPC:                 cli.StringMap{"testnet": rpcURL, "mainnet-beta": rpcURL},
		Genesis:             cli.StringMap{"testnet": genesis, "mainnet-beta": genesis},
		MaxCommission:       solanamod.DefaultMaxCommission,
		AllowedVoteAccounts: allowed,
		SlotDuration:        slot,
		ApprovalThreshold:   s.opts.ApprovalThreshold,
	}
	evm, cel, hl := evmmod.New(), celestiamod.New(), hyperliquidmod.New()
	if s.EVM != nil {
		evm.Config = s.EVM.workerConfig()
		// Hyperliquid's delegators are the EVM chain's keys, against the sandbox's emulated
		// exchange; a pending withdrawal is read again as often as a deactivating stake.
		hl.Config = hyperliquidmod.Config{
			API:  cli.StringMap{"mainnet": s.Sandbox.HyperliquidURL("mainnet"), "testnet": s.Sandbox.HyperliquidURL("testnet")},
			Keys: s.EVM.KeyDir, PassphraseFile: s.EVM.PassphraseFile, Recheck: s.opts.EpochRecheck,
		}
	}
	if s.Celestia != nil {
		cel.Config = s.Celestia.workerConfig()
	}
	cfg := worker.Config{
		Temporal:         cli.Temporal{Address: s.TemporalAddress(), Namespace: "default", Compression: s.compression(), PayloadKeyset: s.opts.PayloadKeyset},
		ServiceURL:       s.Sandbox.URL(),
		ServiceTokenFile: s.TokenFile,
		HealthAddr:       s.healthLn.Addr().String(),
		EpochRecheck:     s.opts.EpochRecheck,
		// The data jobs' default store: a SQLite file among the stack's files.
		DataDir:     filepath.Join(s.opts.Dir, "data"),
		LogFormat:   "console",
		LogLevel:    "info",
		StopTimeout: 5 * time.Second,
		Pollers:     8,
		Modules:     []module.Module{sol, evm, cel, hl, tonmod.New(), jobsmod.New()},
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
	cfg := s.WorkerConfig()
	// The worker closes the listener it is given when it stops; a duplicate of the stack's socket
	// leaves the socket itself bound for the next worker.
	ln, err := dupListener(s.healthLn)
	if err != nil {
		return fmt.Errorf("handing the health socket to the worker: %w", err)
	}
	cfg.HealthListener = ln
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
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
	if s.codecSrv != nil {
		_ = s.codecSrv.Close()
	} else if s.codecLn != nil {
		_ = s.codecLn.Close()
	}
	if s.Sandbox != nil {
		_ = s.Sandbox.Close()
	}
	if s.dev != nil {
		_ = s.dev.Stop()
	} else if s.Client != nil {
		s.Client.Close()
	}
	if s.EVM != nil {
		s.EVM.close()
	}
	if s.healthLn != nil {
		_ = s.healthLn.Close()
	}
}

// dupListener is a second listener on ln's socket: closing it leaves ln open.
func dupListener(ln net.Listener) (net.Listener, error) {
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return net.FileListener(f)
}

// pickPort returns a port that is free now, for a program that cannot bind port 0 and report
// the port it got (the Temporal CLI); the caller must expect it taken by the time the program
// binds it (PortRefusalWatch).
func pickPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// PortRefusalWatch reads a Temporal CLI's output (discarding it) for its refusal of a port it was
// given ("can't set frontend port 7233: listen tcp ...: bind: address already in use"), and calls
// OnRefused, if set, the first time it sees one.
type PortRefusalWatch struct {
	OnRefused func()

	mu      sync.Mutex
	tail    []byte
	refused string
}

// addrInUse is the end of the error the CLI reports when a port it was given is taken.
const addrInUse = "address already in use"

func (w *PortRefusalWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.refused != "" {
		w.mu.Unlock()
		return len(p), nil
	}
	w.tail = append(w.tail, p...)
	found := ""
	for {
		i := bytes.IndexByte(w.tail, '\n')
		if i < 0 {
			break
		}
		line := string(w.tail[:i])
		w.tail = w.tail[i+1:]
		if strings.Contains(line, addrInUse) {
			found = strings.TrimSpace(line)
			break
		}
	}
	if found == "" && bytes.Contains(w.tail, []byte(addrInUse)) {
		found = strings.TrimSpace(string(w.tail))
	}
	if len(w.tail) > 4096 {
		w.tail = w.tail[len(w.tail)-4096:]
	}
	w.refused = found
	w.mu.Unlock()
	if found != "" && w.OnRefused != nil {
		w.OnRefused()
	}
	return len(p), nil
}

// Refused is the CLI's line refusing a port, or "" when it refused none.
func (w *PortRefusalWatch) Refused() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refused
}
