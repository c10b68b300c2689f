package worker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.uber.org/zap"

	actcelestia "github.com/stakeflow/stakeflow/activities/celestia"
	actel "github.com/stakeflow/stakeflow/activities/eigenlayer"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	acthl "github.com/stakeflow/stakeflow/activities/hyperliquid"
	actjobs "github.com/stakeflow/stakeflow/activities/jobs"
	"github.com/stakeflow/stakeflow/activities/notify"
	actsolana "github.com/stakeflow/stakeflow/activities/solana"
	actton "github.com/stakeflow/stakeflow/activities/ton"
	"github.com/stakeflow/stakeflow/apiclient"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/internal/metrics"
	"github.com/stakeflow/stakeflow/internal/metrics/prom"
	"github.com/stakeflow/stakeflow/signer"
	"github.com/stakeflow/stakeflow/workflows"
	wfcelestia "github.com/stakeflow/stakeflow/workflows/celestia"
	wfeigenlayer "github.com/stakeflow/stakeflow/workflows/eigenlayer"
	wfhyperliquid "github.com/stakeflow/stakeflow/workflows/hyperliquid"
	wfjobs "github.com/stakeflow/stakeflow/workflows/jobs"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
	wfton "github.com/stakeflow/stakeflow/workflows/ton"
)

// Register registers every stakeflow workflow and activity on r: the operations' event
// notifications, the data jobs, then each chain's (ChainActivities.Chains).
func Register(r sdkworker.Registry, n *notify.Notifier, jobActs *actjobs.Activities, acts ChainActivities) {
	r.RegisterWorkflowWithOptions(workflows.NotifyWorkflow, workflow.RegisterOptions{Name: workflows.NotifyWorkflowType})
	r.RegisterActivity(n)
	wfjobs.Register(r)
	r.RegisterActivity(jobActs)
	for _, c := range acts.Chains() {
		c.Workflows(r)
		r.RegisterActivity(c.Activities)
	}
}

// ChainActivities are each chain's activities, as Run builds them from the configuration.
type ChainActivities struct {
	Solana      *actsolana.Activities
	EVM         *actevm.Activities // Polygon's
	EigenLayer  *actel.Activities
	Celestia    *actcelestia.Activities
	TON         *actton.Activities
	Hyperliquid *acthl.Activities
}

// A Chain is one chain's part of the worker: the function that registers its workflows, and the
// struct whose methods are its activities.
type Chain struct {
	Workflows  func(sdkworker.WorkflowRegistry)
	Activities any
}

// Chains lists the chains the worker serves, one line each.
func (a ChainActivities) Chains() []Chain {
	return []Chain{
		{wfsolana.Register, a.Solana},
		{wfpolygon.Register, a.EVM},
		{wfeigenlayer.Register, a.EigenLayer},
		{wfcelestia.Register, a.Celestia},
		{wfton.Register, a.TON},
		{wfhyperliquid.Register, a.Hyperliquid},
	}
}

// NewActivities builds the activities from the configuration: keys, service client, signer and
// one chain reader per network, a solchain.Network that refuses to read until its RPC is proven
// to serve the network (it checks on its first read; Run also checks at start, periodically and
// after failures).
func NewActivities(cfg Config, logger *zap.Logger) (*actsolana.Activities, error) {
	return newActivities(cfg, logger, nil, solchain.NetworkOptions{})
}

func newActivities(cfg Config, logger *zap.Logger, h client.MetricsHandler, nopts solchain.NetworkOptions) (*actsolana.Activities, error) {
	keys, err := signer.LoadSolanaKeyring(cfg.SolanaKeys...)
	if err != nil {
		// The keyring's error names the file or directory it could not use.
		return nil, fmt.Errorf("loading Solana keys: %w", err)
	}
	if keys.Len() == 0 {
		return nil, fmt.Errorf("no Solana keypair found in %v", []string(cfg.SolanaKeys))
	}
	opts := []apiclient.Option{
		apiclient.WithTokenFile(cfg.ServiceTokenFile),
		apiclient.WithTimeout(30 * time.Second),
		apiclient.WithLogger(logger.Named("apiclient")),
		apiclient.WithUserAgent("stakeflow-worker"),
		// Every call, whichever chain or job makes it, is counted and timed (h nil: logged only).
		apiclient.WithObserver(metrics.ServiceObserver(h)),
	}
	if cfg.ValidatorStatusParam != "" {
		opts = append(opts, apiclient.WithValidatorStatusParam(cfg.ValidatorStatusParam))
	}
	svc, err := apiclient.New(cfg.ServiceURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("staking service client: %w", err)
	}
	chains := map[string]actsolana.SolanaReader{}
	for network, n := range newNetworks(cfg, logger, h, nopts) {
		chains[network] = n
	}
	return &actsolana.Activities{
		Service: svc,
		Signer: signer.NewSolana(keys, signer.SolanaPolicy{
			AllowedVoteAccounts: cfg.AllowedVoteAccounts,
			MaxComputeUnitPrice: cfg.MaxComputeUnitPrice,
			MaxComputeUnitLimit: uint32(cfg.MaxComputeUnitLimit),
			MaxFeeLamports:      cfg.MaxFeeLamports,
		}),
		Keys:   keys,
		Chains: chains,
		Policy: actsolana.Policy{
			ApprovalThreshold: cfg.ApprovalThreshold, DualApprovalThreshold: cfg.DualApprovalThreshold,
			MaxCommission: uint8(cfg.MaxCommission),
		},
		SlotDuration: cfg.SolanaSlotDuration,
		EpochRecheck: cfg.EpochRecheck,
	}, nil
}

// newNetworks returns one proven reader per configured Solana network. Each logs and records
// (stakeflow_rpc_verified) every change of its proof; h may be nil.
func newNetworks(cfg Config, logger *zap.Logger, h client.MetricsHandler, opts solchain.NetworkOptions) map[string]*solchain.Network {
	out := map[string]*solchain.Network{}
	for _, network := range sortedKeys(cfg.SolanaRPC) {
		expected, _ := cfg.ExpectedGenesis(network)
		if known, ok := solchain.KnownGenesisHash(network); ok && known != expected {
			logger.Warn("Solana network expects a configured genesis hash instead of the public cluster's",
				zap.String("network", network), zap.String("expectedGenesis", expected), zap.String("publicGenesis", known))
		}
		o := opts
		o.OnChange = func(st solchain.NetworkStatus) {
			logNetwork(logger, st)
			metrics.SetRPCVerified(h, chainSolana, st.Network, st.Verified)
		}
		metrics.SetRPCVerified(h, chainSolana, network, false)
		out[network] = solchain.NewNetwork(network, expected, solchain.New(cfg.SolanaRPC[network]), o)
	}
	return out
}

// chainSolana is the chain label of the Solana networks' metrics.
const chainSolana = "solana"

// logNetwork logs a change of a network's proof: a mismatch as an error (the RPC serves another
// network: nothing is read from it and the worker stays unready until it is fixed), other losses
// as warnings.
func logNetwork(logger *zap.Logger, st solchain.NetworkStatus) {
	fields := []zap.Field{zap.String("network", st.Network), zap.String("expectedGenesis", st.Expected), zap.String("servedGenesis", st.Served)}
	switch {
	case st.Verified:
		logger.Info("Solana RPC proven to serve its network", fields...)
	case st.Served != "" && st.Served != st.Expected:
		logger.Error("Solana RPC serves another network: refusing every read from it; the worker stays unready until the RPC or --solana-genesis is fixed",
			append(fields, zap.String("reason", st.Reason))...)
	default:
		logger.Warn("Solana RPC not proven to serve its network: refusing reads until it is", append(fields, zap.String("reason", st.Reason))...)
	}
}

// Run runs the worker until ctx is done, then stops it gracefully.
//
// An RPC that serves another network than configured does not stop the worker: it keeps running,
// unready (/readyz names the network, the expected and the served genesis hash), refusing every
// read of that network with a retryable error, and re-checks the RPC every few seconds. Exiting
// instead would turn a misrouted endpoint into a restart loop that also stops the other networks'
// operations and every operation waiting on a timer, and would not heal any sooner: the fix (the
// RPC's routing, or --solana-genesis) is outside the process, and the worker notices it at the
// next check.
func Run(ctx context.Context, cfg Config, logger *zap.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	exporter := prom.New(prom.Options{Logger: logger.Named("metrics")})
	defer func() { _ = exporter.Close() }()
	acts, err := newActivities(cfg, logger, exporter.Handler(), solchain.NetworkOptions{})
	if err != nil {
		return err
	}
	auth := authHealthy(acts.Service)
	// Endpoint 4 (Polygon's broadcast) and the data jobs' endpoints are called on the client itself.
	evmService, _ := acts.Service.(actevm.StakingService)
	celService, _ := acts.Service.(actcelestia.StakingService)
	elService, _ := acts.Service.(actel.Service)
	jobService, _ := acts.Service.(actjobs.Service)
	// Endpoint 9 (TON's transaction status) likewise.
	tonService, _ := acts.Service.(actton.Service)
	// Endpoint 6 (Hyperliquid's withdrawal request) likewise.
	hlService, _ := acts.Service.(acthl.Service)
	hlActs, err := newHyperliquidActivities(cfg, logger, hlService)
	if err != nil {
		return err
	}
	jobActs, closeStore, err := newJobActivities(ctx, cfg, logger, jobService)
	if err != nil {
		return err
	}
	defer closeStore()
	// The nonces Hyperliquid actions are signed with are recorded in the store, so that a nonce
	// stays one operation's across restarts.
	if nb, ok := jobActs.Store.(acthl.NonceBook); ok {
		hlActs.Nonces = nb
	}

	copts, err := cfg.Temporal.Options(logger.Named("temporal"))
	if err != nil {
		return err
	}
	copts.MetricsHandler = exporter.Handler()
	c, err := client.Dial(copts)
	if err != nil {
		return fmt.Errorf("connecting to Temporal at %s (namespace %s): %w", cfg.Temporal.Address, cfg.Temporal.Namespace, err)
	}
	defer c.Close()
	if err := CheckNamespace(ctx, c, cfg.Temporal.Namespace); err != nil {
		return err
	}
	if cfg.StickyCache > 0 {
		// Process-wide, and read when the first worker is created.
		sdkworker.SetStickyWorkflowCacheSize(cfg.StickyCache)
	}
	evmActs, elActs, evmNetworks, err := newEVMAndEigenLayerActivities(ctx, cfg, logger, exporter.Handler(), evmService, elService, c)
	if err != nil {
		return err
	}
	w := sdkworker.New(c, cfg.TaskQueue, sdkworker.Options{
		MaxConcurrentWorkflowTaskPollers: cfg.Pollers,
		MaxConcurrentActivityTaskPollers: cfg.Pollers,
		WorkerStopTimeout:                cfg.StopTimeout,
	})
	notifier, err := newNotifier(cfg)
	if err != nil {
		return err
	}
	celActs, celClients, err := newCelestiaActivities(cfg.Celestia, celService)
	if err != nil {
		return err
	}
	celActs.Temporal, celActs.TaskQueue = c, cfg.TaskQueue
	hlActs.Temporal, hlActs.TaskQueue = c, cfg.TaskQueue
	Register(w, notifier, jobActs, ChainActivities{Solana: acts, EVM: evmActs, EigenLayer: elActs, Celestia: celActs,
		TON: &actton.Activities{Service: tonService}, Hyperliquid: hlActs})

	bg, stopBackground := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stopBackground(); wg.Wait() }()
	networks := runNetworks(bg, &wg, acts.Chains)
	evmUnproven := runEVMNetworks(bg, &wg, evmNetworks)
	celUnproven := runCelestiaNetworks(bg, &wg, celClients, logger)
	wg.Add(1)
	go func() { defer wg.Done(); recordAuth(bg, exporter.Handler(), auth, authRecordInterval) }()

	var ready = make(chan struct{})
	ln, err := healthListener(cfg)
	if err != nil {
		return err
	}
	if ln != nil {
		h := newHealthMux(healthChecks{ready: ready, temporal: c, keys: keyCount(acts.Keys), networks: networks,
			otherNetworks: func() []string { return append(evmUnproven(), celUnproven()...) }, serviceAuth: auth}, exporter.HTTPHandler())
		srv := serveHealth(ln, h, logger)
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}()
	}
	if err := w.Start(); err != nil {
		return fmt.Errorf("starting worker: %w", err)
	}
	close(ready)
	logger.Info("Worker started", zap.String("taskQueue", cfg.TaskQueue), zap.String("namespace", cfg.Temporal.Namespace),
		zap.String("serviceURL", cfg.ServiceURL))
	<-ctx.Done()
	logger.Info("Worker stopping", zap.Duration("stopTimeout", cfg.StopTimeout))
	w.Stop()
	return nil
}

// provenNetwork is a chain reader that proves its network and can keep proving it.
type provenNetwork interface {
	Verified() error
	Run(ctx context.Context)
}

// runNetworks starts the checks of every reader that proves its network, until ctx is done, and
// returns a function listing, one line each, those not proven and why.
func runNetworks(ctx context.Context, wg *sync.WaitGroup, chains map[string]actsolana.SolanaReader) func() []string {
	var proven []provenNetwork
	for _, name := range slices.Sorted(maps.Keys(chains)) {
		if n, ok := chains[name].(provenNetwork); ok {
			proven = append(proven, n)
			wg.Add(1)
			go func() { defer wg.Done(); n.Run(ctx) }()
		}
	}
	return unprovenOf(proven)
}

// unprovenOf lists, one line each, the networks not proven and why (their refusal).
func unprovenOf(networks []provenNetwork) func() []string {
	return func() []string {
		var out []string
		for _, n := range networks {
			if err := n.Verified(); err != nil {
				out = append(out, err.Error())
			}
		}
		return out
	}
}

// authHealthy returns the staking service client's view of whether the service accepts its token,
// when the client can tell; otherwise nil.
func authHealthy(svc actsolana.StakingService) func() bool {
	if a, ok := svc.(interface{ AuthHealthy() bool }); ok {
		return a.AuthHealthy
	}
	return nil
}

// authRecordInterval is how often stakeflow_service_auth_ok is refreshed.
const authRecordInterval = 10 * time.Second

// recordAuth keeps the stakeflow_service_auth_ok gauge current until ctx is done.
func recordAuth(ctx context.Context, h client.MetricsHandler, auth func() bool, every time.Duration) {
	if auth == nil {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		metrics.SetServiceAuthOK(h, auth())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CheckNamespace makes sure the namespace has every search attribute the workflows set: a missing
// one would stall each workflow at its first step.
func CheckNamespace(ctx context.Context, c client.Client, namespace string) error {
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("reading search attributes of namespace %s: %w", namespace, err)
	}
	var missing []string
	for _, kv := range workflows.SearchAttributeTypes() {
		if _, ok := resp.GetCustomAttributes()[kv[0]]; !ok {
			missing = append(missing, kv[0])
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("namespace %s lacks search attributes %v: run `starter setup` first", namespace, missing)
	}
	return nil
}

// keyCount returns how many keys k holds, when it can tell (a keyring); otherwise 1 when k is set.
func keyCount(k actsolana.KeyHolder) func() int {
	if l, ok := k.(interface{ Len() int }); ok {
		return l.Len
	}
	return func() int {
		if k == nil {
			return 0
		}
		return 1
	}
}

// healthChecker is the part of the Temporal client /readyz uses.
type healthChecker interface {
	CheckHealth(ctx context.Context, req *client.CheckHealthRequest) (*client.CheckHealthResponse, error)
}

// healthChecks are what /readyz checks: the worker started (ready closed), at least one key
// loaded, every network's RPC proven, the staking service accepting the worker's token, and
// Temporal reachable. networks and serviceAuth may be nil (nothing to check).
type healthChecks struct {
	ready    <-chan struct{}
	temporal healthChecker
	keys     func() int
	// networks and otherNetworks list the Solana and the other chains' networks not proven, one
	// line each.
	networks, otherNetworks func() []string
	serviceAuth             func() bool
}

// unproven lists, one line each, the networks whose RPC is not proven and why.
func (h healthChecks) unproven() []string {
	var out []string
	if h.networks != nil {
		out = append(out, h.networks()...)
	}
	if h.otherNetworks != nil {
		out = append(out, h.otherNetworks()...)
	}
	return out
}

// newHealthMux serves /healthz (the process answers), /readyz (healthChecks) and /metrics.
func newHealthMux(checks healthChecks, metricsHandler http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-checks.ready:
		default:
			http.Error(w, "worker not started", http.StatusServiceUnavailable)
			return
		}
		if checks.keys == nil || checks.keys() == 0 {
			http.Error(w, "no keys loaded", http.StatusServiceUnavailable)
			return
		}
		if reasons := checks.unproven(); len(reasons) > 0 {
			http.Error(w, strings.Join(reasons, "\n"), http.StatusServiceUnavailable)
			return
		}
		if checks.serviceAuth != nil && !checks.serviceAuth() {
			http.Error(w, "the staking service refuses the worker's token (replace the file of --service-token-file)", http.StatusServiceUnavailable)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		if _, err := checks.temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
			http.Error(w, "temporal unreachable", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	if metricsHandler != nil {
		mux.Handle("/metrics", metricsHandler)
	}
	return mux
}

// healthListener is where the health server serves: Config.HealthListener, else the socket
// inherited as HealthFD, else a new one on HealthAddr; nil when all three are unset.
func healthListener(cfg Config) (net.Listener, error) {
	switch {
	case cfg.HealthListener != nil:
		return cfg.HealthListener, nil
	case cfg.HealthFD > 0:
		f := os.NewFile(uintptr(cfg.HealthFD), "health-fd")
		defer f.Close()
		ln, err := net.FileListener(f)
		if err != nil {
			return nil, fmt.Errorf("--health-fd %d is not a listening socket: %w", cfg.HealthFD, err)
		}
		return ln, nil
	case cfg.HealthAddr != "":
		ln, err := net.Listen("tcp", cfg.HealthAddr)
		if err != nil {
			return nil, fmt.Errorf("health listener %s: %w", cfg.HealthAddr, err)
		}
		return ln, nil
	}
	return nil, nil
}

// serveHealth serves h on ln until the returned server is shut down, and logs the address it
// serves on (the bound port when the address asked for port 0).
func serveHealth(ln net.Listener, h http.Handler, logger *zap.Logger) *http.Server {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	logger.Info("Health server listening", zap.String("healthAddr", ln.Addr().String()))
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("Health server stopped", zap.Error(err))
		}
	}()
	return srv
}
