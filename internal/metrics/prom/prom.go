package prom

import (
	"io"
	"math"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
	"go.uber.org/zap"
)

// DefaultFlushInterval is how often recorded values reach the registry by default.
const DefaultFlushInterval = time.Second

// DefaultBuckets are the histogram buckets of timers, in seconds: 5 ms to 5 minutes.
var DefaultBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// Options configure an Exporter. The zero value is ready to use.
type Options struct {
	// FlushInterval is how often recorded values reach the registry (0: DefaultFlushInterval).
	FlushInterval time.Duration
	// Buckets are the histogram buckets of timers, in seconds (nil: DefaultBuckets).
	Buckets []float64
	// Logger receives registration errors (a metric name recorded with two label sets); nil: none.
	Logger *zap.Logger
}

// Exporter is a Temporal metrics handler exported in the Prometheus text format.
type Exporter struct {
	registry *prometheus.Registry
	scope    tally.Scope
	closer   io.Closer
	handler  client.MetricsHandler
}

// New returns an Exporter with a registry of its own. Close it to stop its flush loop.
func New(opts Options) *Exporter {
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = DefaultFlushInterval
	}
	if opts.Buckets == nil {
		opts.Buckets = DefaultBuckets
	}
	logger := opts.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reporter := tallyprom.NewReporter(tallyprom.Options{
		Registerer:              reg,
		Gatherer:                reg,
		DefaultTimerType:        tallyprom.HistogramTimerType,
		DefaultHistogramBuckets: opts.Buckets,
		OnRegisterError: func(err error) {
			logger.Error("Metric not registered", zap.Error(err))
		},
	})
	sanitize := sdktally.PrometheusSanitizeOptions
	// Label values may hold any printable character; names and keys keep Prometheus' rules.
	sanitize.ValueCharacters = tally.ValidCharacters{Ranges: []tally.SanitizeRange{{0x20, 0x7e}, {0xa0, math.MaxInt32}}}
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:         reporter,
		Separator:              tallyprom.DefaultSeparator,
		SanitizeOptions:        &sanitize,
		OmitCardinalityMetrics: true,
	}, opts.FlushInterval)
	scope = sdktally.NewPrometheusNamingScope(scope)
	return &Exporter{registry: reg, scope: scope, closer: closer, handler: sdktally.NewMetricsHandler(scope)}
}

// Handler is the metrics handler to give client.Options.MetricsHandler, the test suites'
// SetMetricsHandler and package metrics.
func (e *Exporter) Handler() client.MetricsHandler { return e.handler }

// HTTPHandler serves the registry in the Prometheus text format.
func (e *Exporter) HTTPHandler() http.Handler {
	return promhttp.HandlerFor(e.registry, promhttp.HandlerOpts{})
}

// Close flushes what was recorded and stops the flush loop.
func (e *Exporter) Close() error { return e.closer.Close() }
