package worker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/activities/notify"
	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/internal/hsmkeys"
	"github.com/stakeflow/stakeflow/internal/metrics"
	"github.com/stakeflow/stakeflow/internal/metrics/prom"
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/workflows"
)

// newService is the staking service's client of the configuration: every call, whichever module
// makes it, is counted and timed (h nil: logged only).
func newService(cfg Config, logger *zap.Logger, h client.MetricsHandler) (*apiclient.Client, error) {
	opts := []apiclient.Option{
		apiclient.WithTokenFile(cfg.ServiceTokenFile),
		apiclient.WithTimeout(30 * time.Second),
		apiclient.WithLogger(logger.Named("apiclient")),
		apiclient.WithUserAgent("stakeflow-worker"),
		apiclient.WithObserver(metrics.ServiceObserver(h)),
	}
	if cfg.ValidatorStatusParam != "" {
		opts = append(opts, apiclient.WithValidatorStatusParam(cfg.ValidatorStatusParam))
	}
	svc, err := apiclient.New(cfg.ServiceURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("staking service client: %w", err)
	}
	return svc, nil
}

// RegisterCommon registers what every module's queue serves besides the module's own: the
// operations' event notifications, which an operation starts as a child on its own queue.
func RegisterCommon(r sdkworker.Registry, n *notify.Notifier) {
	r.RegisterWorkflowWithOptions(workflows.NotifyWorkflow, workflow.RegisterOptions{Name: workflows.NotifyWorkflowType})
	r.RegisterActivity(n)
}

// served is one module as this worker serves it: its queue's worker and what /readyz checks.
type served struct {
	name, queue string
	w           sdkworker.Worker
	keys        func() int
	networks    []module.Network
}

// readiness lists, one line each, why the module is not ready (empty: ready).
func (s served) readiness() []string {
	var out []string
	if s.keys != nil && s.keys() == 0 {
		out = append(out, s.name+": no keys loaded")
	}
	for _, n := range s.networks {
		if err := n.Verified(); err != nil {
			out = append(out, s.name+": "+err.Error())
		}
	}
	return out
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
	svc, err := newService(cfg, logger, exporter.Handler())
	if err != nil {
		return err
	}
	st, closeStore, err := openStore(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer closeStore()

	copts, err := cfg.Temporal.Options(logger.Named("temporal"))
	if err != nil {
		return err
	}
	copts.MetricsHandler = exporter.Handler()
	if cfg.Identity != "" {
		copts.Identity = cfg.Identity
	}
	// Lazy: nothing connects before every module is built (its keys loaded and checked).
	c, err := client.NewLazyClient(copts)
	if err != nil {
		return fmt.Errorf("connecting to Temporal at %s (namespace %s): %w", cfg.Temporal.Address, cfg.Temporal.Namespace, err)
	}
	defer c.Close()
	if cfg.StickyCache > 0 {
		// Process-wide, and read when the first worker is created.
		sdkworker.SetStickyWorkflowCacheSize(cfg.StickyCache)
	}
	notifier, err := newNotifier(cfg)
	if err != nil {
		return err
	}
	hsm, err := openHSM(cfg, logger)
	if err != nil {
		return err
	}
	if hsm != nil && cfg.HSM == nil {
		defer func() { _ = hsm.Close() }()
	}
	approvers, err := cfg.Approvers()
	if err != nil {
		return fmt.Errorf("--approvers: %w", err)
	}
	logPayloadProtection(cfg, logger)
	if len(approvers) == 0 {
		logger.Warn("No approvers configured (--approvers): approvals name their approver in free text, which is not separation of duties")
	} else {
		for _, a := range approvers {
			logger.Info("Approver", zap.String("name", a.Name), zap.String("fingerprint", a.Fingerprint))
		}
	}
	var mods []served
	for _, m := range cfg.Modules {
		if !m.Enabled() {
			continue
		}
		queue := cfg.Temporal.TaskQueue(m.Name())
		built, err := m.Build(ctx, module.Env{TaskQueue: queue, Logger: logger.Named(m.Name()), Metrics: exporter.Handler(),
			Service: svc, Temporal: c, Store: st, EpochRecheck: cfg.EpochRecheck, HSM: hsm, Approvers: approvers})
		if err != nil {
			return fmt.Errorf("module %s: %w", m.Name(), err)
		}
		w := sdkworker.New(c, queue, sdkworker.Options{
			MaxConcurrentWorkflowTaskPollers: cfg.Pollers,
			MaxConcurrentActivityTaskPollers: cfg.Pollers,
			WorkerStopTimeout:                cfg.StopTimeout,
		})
		RegisterCommon(w, notifier)
		m.Workflows(w)
		for _, a := range built.Activities {
			w.RegisterActivity(a)
		}
		mods = append(mods, served{name: m.Name(), queue: queue, w: w, keys: built.Keys, networks: built.Networks})
	}

	if err := CheckNamespace(ctx, c, cfg.Temporal.Namespace); err != nil {
		return err
	}

	bg, stopBackground := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stopBackground(); wg.Wait() }()
	for _, m := range mods {
		for _, n := range m.networks {
			wg.Add(1)
			go func() { defer wg.Done(); n.Run(bg) }()
		}
	}
	if hsm != nil {
		// A token that refused the PIN is logged in again on a backoff; the modules whose keys
		// are in it stay unready until then (their readiness names the token).
		wg.Add(1)
		go func() { defer wg.Done(); hsm.Run(bg) }()
	}
	auth := svc.AuthHealthy
	wg.Add(1)
	go func() { defer wg.Done(); recordAuth(bg, exporter.Handler(), auth, authRecordInterval) }()

	var ready = make(chan struct{})
	ln, err := healthListener(cfg)
	if err != nil {
		return err
	}
	if ln != nil {
		h := newHealthMux(healthChecks{ready: ready, temporal: c, modules: mods, serviceAuth: auth}, exporter.HTTPHandler())
		srv := serveHealth(ln, h, logger)
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}()
	}
	for i, m := range mods {
		if err := m.w.Start(); err != nil {
			for _, started := range mods[:i] {
				started.w.Stop()
			}
			return fmt.Errorf("starting the worker of module %s (task queue %s): %w", m.name, m.queue, err)
		}
	}
	close(ready)
	for _, m := range mods {
		logger.Info("Module started", zap.String("module", m.name), zap.String("taskQueue", m.queue))
	}
	logger.Info("Worker started", zap.String("namespace", cfg.Temporal.Namespace), zap.String("serviceURL", cfg.ServiceURL))
	<-ctx.Done()
	logger.Info("Worker stopping", zap.Duration("stopTimeout", cfg.StopTimeout))
	var stopping sync.WaitGroup
	for _, m := range mods {
		stopping.Add(1)
		go func() { defer stopping.Done(); m.w.Stop() }()
	}
	stopping.Wait()
	return nil
}

// openHSM is the worker's PKCS#11 token: Config.HSM when given, else the one --pkcs11-* name
// (nil when none). A PIN file the group or others may read, or a token that cannot be opened, is
// an error; a token that refuses the PIN is not (see hsmkeys.Open).
func openHSM(cfg Config, logger *zap.Logger) (*hsmkeys.Token, error) {
	if cfg.HSM != nil {
		return cfg.HSM, nil
	}
	if !cfg.PKCS11.Enabled() {
		return nil, nil
	}
	return hsmkeys.Open(cfg.PKCS11, logger.Named("pkcs11"))
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

// healthChecker is the part of the Temporal client /readyz uses.
type healthChecker interface {
	CheckHealth(ctx context.Context, req *client.CheckHealthRequest) (*client.CheckHealthResponse, error)
}

// healthChecks are what /readyz checks: the worker started (ready closed), each module ready (its
// keys loaded, each of its networks proven), the staking service accepting the worker's token,
// and Temporal reachable. serviceAuth may be nil (nothing to check).
type healthChecks struct {
	ready       <-chan struct{}
	temporal    healthChecker
	modules     []served
	serviceAuth func() bool
}

// newHealthMux serves /healthz (the process answers), /readyz (healthChecks: the body lists each
// module with its task queue, and why it is not ready) and /metrics.
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
		var reasons, lines []string
		for _, m := range checks.modules {
			why := m.readiness()
			reasons = append(reasons, why...)
			state := "ready"
			if len(why) > 0 {
				state = "not ready"
			}
			lines = append(lines, fmt.Sprintf("module %s (task queue %s): %s", m.name, m.queue, state))
		}
		if len(checks.modules) == 0 {
			reasons = append(reasons, "no module served")
		}
		if checks.serviceAuth != nil && !checks.serviceAuth() {
			reasons = append(reasons, "the staking service refuses the worker's token (replace the file of --service-token-file)")
		}
		if len(reasons) == 0 {
			ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
			defer cancel()
			if _, err := checks.temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
				reasons = append(reasons, "temporal unreachable")
			}
		}
		if len(reasons) > 0 {
			http.Error(w, strings.Join(append(reasons, lines...), "\n"), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ready\n" + strings.Join(lines, "\n") + "\n"))
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

// logPayloadProtection tells, as the worker starts, how its payloads and search attributes are
// protected: a warning for what is written clear, and the search key's fingerprint, which the
// starter's `keyset show` prints for a keyset that tags alike.
func logPayloadProtection(cfg Config, logger *zap.Logger) {
	switch {
	case cfg.Temporal.PayloadKeyset == "":
		logger.Warn("No payload keyset (--payload-keyset): inputs, results and failures reach Temporal's database in clear")
	case cfg.Temporal.AcceptClearPayloads:
		logger.Warn("Payloads written in clear are read too (--accept-clear-payloads): turn it off once the operations started before encryption have finished")
	}
	if tg, err := cfg.Temporal.Tagger(); err == nil && tg != nil {
		if fp, ok := tg.Fingerprint(); ok {
			logger.Info("Search key", zap.String("fingerprint", fp))
		} else {
			logger.Warn("The payload keyset has no searchKey: operations write no staker, account or transaction search attributes, and nonce leases are named by their address (docs/encryption.md)")
		}
	}
}
