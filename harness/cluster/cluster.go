package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/harness/stack"
)

// Options configure a cluster.
type Options struct {
	// Dir holds the cluster's logs, keys and the workers' files (PostgreSQL's data lives in a
	// temporary directory of its own, removed by Close).
	Dir string
	// Repo is the repository's root, where deploy/ and scripts/ are (default: found above the
	// working directory).
	Repo string
	// ServerDir holds temporal-server, temporal-sql-tool and schema/ (scripts/tools.sh
	// temporal-server); required.
	ServerDir string
	// TemporalCLI is the pinned Temporal CLI, which deploy/temporal/create-namespace.sh runs; required.
	TemporalCLI string
	// DevServer runs the Temporal CLI's dev server (in memory, the local stack's) instead of the
	// real server and PostgreSQL, with the same worker processes: the benchmark's baseline.
	DevServer bool
	// UIServer is the Temporal Web UI server (scripts/tools.sh temporal-ui); empty: no UI.
	UIServer string
	// WorkerBin and StarterBin are the cmd/worker and cmd/starter binaries; required.
	WorkerBin, StarterBin string
	// Workers is how many worker processes to start.
	Workers int
	// HistoryShards is the server's number of history shards (default 4). It is fixed for the
	// life of a database.
	HistoryShards int
	// Runtime configures the Solana runtime; Stakers and StakerLamports the funded staker keys
	// every worker holds.
	Runtime        solanart.Options
	Stakers        int
	StakerLamports uint64
	// EpochRecheck is the workers' --epoch-recheck (0: their default).
	EpochRecheck time.Duration
	// WorkerLogLevel is the workers' --log-level (default info).
	WorkerLogLevel string
	// Logger receives the cluster's own logs (default no-op).
	Logger *zap.Logger
}

// Cluster is a running cluster.
type Cluster struct {
	opts Options
	// Stack holds the sandbox, its runtime, the staker keys, the service token and a client.
	Stack   *stack.Stack
	Server  *Server
	Workers []*Worker
	// UIURL is the Web UI's address ("" without Options.UIServer).
	UIURL string
	// PostgresDSN is the PostgreSQL server's (user postgres, trust authentication on loopback).
	PostgresDSN string

	pgDir string
	ui    *process
	logs  []*os.File
}

// Start starts PostgreSQL, sets up Temporal's schemas, starts the server, the namespace and the
// search attributes, the Web UI, the sandbox and the workers, each ready when Start returns.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	switch {
	case opts.Dir == "":
		return nil, errors.New("cluster: Dir is required")
	case opts.ServerDir == "" && !opts.DevServer:
		return nil, errors.New("cluster: ServerDir is required (scripts/tools.sh temporal-server)")
	case opts.TemporalCLI == "":
		return nil, errors.New("cluster: TemporalCLI is required (scripts/tools.sh temporal)")
	case opts.WorkerBin == "" || opts.StarterBin == "":
		return nil, errors.New("cluster: WorkerBin and StarterBin are required")
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.HistoryShards == 0 {
		opts.HistoryShards = 4
	}
	if opts.WorkerLogLevel == "" {
		opts.WorkerLogLevel = "info"
	}
	if opts.Repo == "" {
		if opts.Repo, err = repoRoot(); err != nil {
			return nil, err
		}
	}
	if opts.Dir, err = filepath.Abs(opts.Dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	c := &Cluster{opts: opts}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	log := opts.Logger
	t0 := time.Now()
	if opts.DevServer {
		if err := c.startStack(ctx, ""); err != nil {
			return nil, err
		}
		if err := c.startWorkers(ctx, t0); err != nil {
			return nil, err
		}
		return c, nil
	}
	if err := c.startPostgres(ctx); err != nil {
		return nil, err
	}
	log.Info("PostgreSQL is up", zap.String("dsn", c.PostgresDSN), zap.Duration("after", time.Since(t0)))
	if err := c.setUpSchemas(ctx); err != nil {
		return nil, err
	}
	log.Info("Temporal's schemas are set up", zap.Duration("after", time.Since(t0)))
	if err := c.startServer(ctx); err != nil {
		return nil, err
	}
	log.Info("The Temporal server is up", zap.String("address", c.Server.Address), zap.Duration("after", time.Since(t0)))
	if err := c.setUpNamespace(ctx); err != nil {
		return nil, err
	}
	log.Info("Namespace and search attributes are set up", zap.Duration("after", time.Since(t0)))
	if opts.UIServer != "" {
		if err := c.startUI(ctx); err != nil {
			return nil, err
		}
	}
	if err := c.startStack(ctx, c.Server.Address); err != nil {
		return nil, err
	}
	log.Info("Sandbox and stakers are ready", zap.String("sandbox", c.Stack.Sandbox.URL()), zap.Duration("after", time.Since(t0)))
	if err := c.startWorkers(ctx, t0); err != nil {
		return nil, err
	}
	return c, nil
}

// startStack starts the sandbox, its runtime and the stakers (harness/stack) on the server at
// address, or on the stack's own dev server when address is "".
func (c *Cluster) startStack(ctx context.Context, address string) (err error) {
	opts := stack.Options{
		TemporalAddress: address,
		Dir:             filepath.Join(c.opts.Dir, "stack"),
		Runtime:         c.opts.Runtime,
		Stakers:         c.opts.Stakers,
		StakerLamports:  c.opts.StakerLamports,
		EpochRecheck:    c.opts.EpochRecheck,
		NoWorker:        true,
		Logger:          c.opts.Logger.Named("stack"),
	}
	if address == "" {
		opts.TemporalCLI = c.opts.TemporalCLI
	}
	c.Stack, err = stack.Start(ctx, opts)
	return err
}

// startWorkers starts Options.Workers workers of Options.WorkerBin.
func (c *Cluster) startWorkers(ctx context.Context, t0 time.Time) error {
	for range c.opts.Workers {
		if _, err := c.AddWorker(ctx, c.opts.WorkerBin); err != nil {
			return err
		}
	}
	c.opts.Logger.Info("Workers are ready", zap.Int("workers", c.opts.Workers), zap.Duration("after", time.Since(t0)))
	return nil
}

// deployPath is a file of the repository's deploy/temporal directory.
func (c *Cluster) deployPath(parts ...string) string {
	return filepath.Join(append([]string{c.opts.Repo, "deploy", "temporal"}, parts...)...)
}

// logFile opens (appending) a log file in Dir/logs.
func (c *Cluster) logFile(name string) (*os.File, error) {
	dir := filepath.Join(c.opts.Dir, "logs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	c.logs = append(c.logs, f)
	return f, nil
}

// LogPath is the path of one of the cluster's logs (temporal.log, worker-1.log, ...).
func (c *Cluster) LogPath(name string) string { return filepath.Join(c.opts.Dir, "logs", name) }

// startPostgres starts the server (scripts/postgres.sh) and creates Temporal's two databases:
// "temporal", as compose's POSTGRES_DB does, and those of deploy/temporal/postgres-init.sql.
func (c *Cluster) startPostgres(ctx context.Context) (err error) {
	// PostgreSQL's data lives outside Dir: its server runs as another user when this process is
	// root, and must reach the directory (a test's temporary directory is private).
	if c.pgDir, err = os.MkdirTemp("", "stakeflow-cluster-pg-"); err != nil {
		return err
	}
	script := filepath.Join(c.opts.Repo, "scripts", "postgres.sh")
	if out, err := exec.CommandContext(ctx, script, "install").CombinedOutput(); err != nil {
		return errExited("installing PostgreSQL", err, out)
	}
	out, err := exec.CommandContext(ctx, script, "start", c.pgDir).Output()
	if err != nil {
		return errExited("starting PostgreSQL", err, stderrOf(err))
	}
	c.PostgresDSN = strings.TrimSpace(string(out))
	db, err := sql.Open("pgx", c.PostgresDSN)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	exists := func(name string) (bool, error) {
		var n int
		err := db.QueryRowContext(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n)
		return n > 0, err
	}
	if ok, err := exists("temporal"); err != nil {
		return fmt.Errorf("cluster: PostgreSQL: %w", err)
	} else if !ok {
		if _, err := db.ExecContext(ctx, "CREATE DATABASE temporal"); err != nil {
			return fmt.Errorf("cluster: creating database temporal: %w", err)
		}
	}
	if ok, err := exists("temporal_visibility"); err != nil {
		return fmt.Errorf("cluster: PostgreSQL: %w", err)
	} else if !ok {
		init, err := os.ReadFile(c.deployPath("postgres-init.sql"))
		if err != nil {
			return err
		}
		if _, err := db.ExecContext(ctx, string(init)); err != nil {
			return fmt.Errorf("cluster: running postgres-init.sql: %w", err)
		}
	}
	return nil
}

// PostgresPID is the PostgreSQL server's main process (postmaster) id, 0 without one; every
// backend serving a connection is its child.
func (c *Cluster) PostgresPID() int {
	if c.pgDir == "" {
		return 0
	}
	raw, err := os.ReadFile(filepath.Join(c.pgDir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(raw), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(first))
	return pid
}

// pgHostPort is the PostgreSQL server's host and port.
func (c *Cluster) pgHostPort() (host, port string, err error) {
	u, err := url.Parse(c.PostgresDSN)
	if err != nil {
		return "", "", errors.New("cluster: the PostgreSQL DSN does not parse")
	}
	return u.Hostname(), u.Port(), nil
}

// setUpSchemas runs deploy/temporal/setup-schema.sh with the server's SQL tool and schemas.
func (c *Cluster) setUpSchemas(ctx context.Context) error {
	host, port, err := c.pgHostPort()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", c.deployPath("setup-schema.sh"))
	cmd.Env = childEnv(
		"PATH="+c.opts.ServerDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"SQL_PLUGIN=postgres12", "SQL_HOST="+host, "SQL_PORT="+port, "SQL_USER=postgres", "SQL_PASSWORD=",
		"TEMPORAL_SCHEMA_DIR="+filepath.Join(c.opts.ServerDir, "schema", "postgresql", "v12"),
	)
	if out, err := cmd.CombinedOutput(); err != nil {
		return errExited("setup-schema.sh", err, out)
	}
	return nil
}

// setUpNamespace runs deploy/temporal/create-namespace.sh with the pinned CLI, then `starter setup`.
func (c *Cluster) setUpNamespace(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, "/bin/sh", c.deployPath("create-namespace.sh"))
	cmd.Env = childEnv(
		"PATH="+filepath.Dir(c.opts.TemporalCLI)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TEMPORAL_ADDRESS="+c.Server.Address, "NAMESPACE=default", "RETENTION=7d",
	)
	if out, err := cmd.CombinedOutput(); err != nil {
		return errExited("create-namespace.sh", err, out)
	}
	cmd = exec.CommandContext(ctx, c.opts.StarterBin, "setup")
	cmd.Env = childEnv("STAKEFLOW_TEMPORAL_ADDRESS="+c.Server.Address, "STAKEFLOW_NAMESPACE=default")
	if out, err := cmd.CombinedOutput(); err != nil {
		return errExited("starter setup", err, out)
	}
	return nil
}

// startUI starts the Web UI server with deploy/temporal/ui/docker.yaml.
func (c *Cluster) startUI(ctx context.Context) error {
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	logf, err := c.logFile("ui.log")
	if err != nil {
		return err
	}
	c.ui = &process{
		name: "Temporal Web UI", bin: c.opts.UIServer, logf: logf,
		args: []string{"--root", c.deployPath(), "--config", "ui", "--env", "docker", "start"},
		env:  childEnv("TEMPORAL_ADDRESS="+c.Server.Address, "TEMPORAL_UI_PORT="+strconv.Itoa(ports[0])),
	}
	if err := c.ui.start(); err != nil {
		return err
	}
	c.UIURL = fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	_, exited := c.ui.running()
	return waitFor(ctx, time.Minute, "the Web UI", exited, func(ctx context.Context) error {
		return getOK(ctx, c.UIURL+"/api/v1/settings")
	})
}

// Close stops everything the cluster started and PostgreSQL (removing its data); Dir stays.
func (c *Cluster) Close() {
	for _, w := range c.Workers {
		w.Stop(10 * time.Second)
	}
	if c.Stack != nil {
		c.Stack.Close()
	}
	if c.ui != nil {
		c.ui.stop(5 * time.Second)
	}
	if c.Server != nil {
		c.Server.Stop()
	}
	if c.pgDir != "" {
		script := filepath.Join(c.opts.Repo, "scripts", "postgres.sh")
		if out, err := exec.Command(script, "stop", c.pgDir).CombinedOutput(); err != nil {
			c.opts.Logger.Warn("Stopping PostgreSQL failed", zap.Error(err), zap.ByteString("output", out))
		}
	}
	_ = os.RemoveAll(c.pgDir)
	for _, f := range c.logs {
		_ = f.Close()
	}
}

// repoRoot is the directory holding go.mod above the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "deploy", "temporal", "config", "docker.yaml")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cluster: the repository (deploy/temporal) is not above the working directory")
		}
		dir = parent
	}
}

func stderrOf(err error) []byte {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.Stderr
	}
	return nil
}
