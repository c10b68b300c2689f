package worker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/apiclient"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/internal/metrics"
	"github.com/stakeflow/stakeflow/internal/metrics/prom"
	"github.com/stakeflow/stakeflow/signer"
	"github.com/stakeflow/stakeflow/workflows"
)

// Register registers every stakeflow workflow and the activities on r.
func Register(r sdkworker.Registry, acts *activities.Activities) {
	r.RegisterWorkflow(workflows.StakeWorkflow)
	r.RegisterWorkflow(workflows.UnstakeWorkflow)
	r.RegisterWorkflow(workflows.WithdrawWorkflow)
	r.RegisterActivity(acts)
}

// NewActivities builds the activities from the configuration: keys, service client, signer and
// chain readers.
func NewActivities(cfg Config, logger *zap.Logger) (*activities.Activities, error) {
	keys, err := signer.LoadSolanaKeyring(cfg.SolanaKeys...)
	if err != nil {
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
	}
	if cfg.ValidatorStatusParam != "" {
		opts = append(opts, apiclient.WithValidatorStatusParam(cfg.ValidatorStatusParam))
	}
	svc, err := apiclient.New(cfg.ServiceURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("staking service client: %w", err)
	}
	chains := map[string]activities.SolanaReader{}
	for network, u := range cfg.SolanaRPC {
		chains[network] = solchain.New(u)
	}
	return &activities.Activities{
		Service: svc,
		Signer: signer.NewSolana(keys, signer.SolanaPolicy{
			AllowedVoteAccounts: cfg.AllowedVoteAccounts,
			MaxComputeUnitPrice: cfg.MaxComputeUnitPrice,
		}),
		Keys:         keys,
		Chains:       chains,
		Policy:       activities.Policy{ApprovalThreshold: cfg.ApprovalThreshold, AllowedVoteAccounts: cfg.AllowedVoteAccounts},
		SlotDuration: cfg.SolanaSlotDuration,
		EpochRecheck: cfg.EpochRecheck,
	}, nil
}

// Run runs the worker until ctx is done, then stops it gracefully.
func Run(ctx context.Context, cfg Config, logger *zap.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	acts, err := NewActivities(cfg, logger)
	if err != nil {
		return err
	}
	exporter := prom.New(prom.Options{Logger: logger.Named("metrics")})
	defer func() { _ = exporter.Close() }()
	acts.Service = metrics.NewService(acts.Service, exporter.Handler())

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
	w := sdkworker.New(c, cfg.TaskQueue, sdkworker.Options{
		MaxConcurrentWorkflowTaskPollers: cfg.Pollers,
		MaxConcurrentActivityTaskPollers: cfg.Pollers,
		WorkerStopTimeout:                cfg.StopTimeout,
	})
	Register(w, acts)

	var ready = make(chan struct{})
	if cfg.HealthAddr != "" {
		h := newHealthMux(healthChecks{ready: ready, temporal: c, keys: keyCount(acts.Keys)}, exporter.HTTPHandler())
		srv, err := serveHealth(cfg.HealthAddr, h, logger)
		if err != nil {
			return err
		}
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
func keyCount(k activities.KeyHolder) func() int {
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

// healthChecks are what /readyz checks: the worker started (ready closed), Temporal reachable and
// at least one key loaded.
type healthChecks struct {
	ready    <-chan struct{}
	temporal healthChecker
	keys     func() int
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

func serveHealth(addr string, h http.Handler, logger *zap.Logger) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("health listener %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("Health server stopped", zap.Error(err))
		}
	}()
	return srv, nil
}
