package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stakeflow/stakeflow/harness/childproc"
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/internal/worker"
	solanamod "github.com/stakeflow/stakeflow/modules/solana"
)

// Worker is one worker process: the cmd/worker binary with its own copy of the keys, its own data
// directory and its own health port, kept across Kill and Start.
type Worker struct {
	// Index counts the cluster's workers from 1.
	Index int
	// HealthURL is the base URL of its /healthz, /readyz and /metrics.
	HealthURL string
	p         *process
	health    *os.File
}

// AddWorker starts one more worker process running bin (a worker binary: this build's, or
// another's serving the same task queue) and waits until it is ready.
func (c *Cluster) AddWorker(ctx context.Context, bin string) (*Worker, error) {
	i := len(c.Workers) + 1
	dir := filepath.Join(c.opts.Dir, "workers", fmt.Sprint(i))
	keys := filepath.Join(dir, "keys")
	if err := copyKeys(c.Stack.KeyDir, keys); err != nil {
		return nil, err
	}
	health, addr, err := childproc.ListenInheritable()
	if err != nil {
		return nil, err
	}
	logf, err := c.logFile(fmt.Sprintf("worker-%d.log", i))
	if err != nil {
		_ = health.Close()
		return nil, err
	}
	w := &Worker{
		Index: i, HealthURL: "http://" + addr, health: health,
		p: &process{
			name: fmt.Sprintf("worker %d", i), bin: bin, logf: logf, env: childEnv(),
			args:  WorkerArgs(c.Stack.WorkerConfig(), keys, filepath.Join(dir, "data"), c.opts.WorkerLogLevel),
			extra: []*os.File{health}, // descriptor 3 in the child: --health-fd 3
		},
	}
	c.Workers = append(c.Workers, w)
	if err := w.Start(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// WorkerArgs are the flags a deployment passes to a cmd/worker process serving the Solana
// module, from a stack's worker configuration: its keys in keys, its data in dataDir, its health
// endpoints on the listening socket it inherits as descriptor 3, logs as JSON at logLevel.
func WorkerArgs(cfg worker.Config, keys, dataDir, logLevel string) []string {
	sol, _ := module.Find[*solanamod.Module](cfg.Modules)
	args := []string{
		"--temporal-address", cfg.Temporal.Address, "--namespace", cfg.Temporal.Namespace,
		"--grpc-compression", "none",
		"--service-url", cfg.ServiceURL, "--service-token-file", cfg.ServiceTokenFile,
		"--solana-keys", keys, "--solana-rpc", sol.RPC.String(), "--solana-genesis", sol.Genesis.String(),
		"--solana-slot-duration", sol.SlotDuration.String(),
		"--allowed-vote-accounts", sol.AllowedVoteAccounts.String(),
		"--health-fd", "3", "--data-dir", dataDir,
		"--log-format", "json", "--log-level", logLevel, "--stop-timeout", "5s", "--pollers", "8",
	}
	if cfg.EpochRecheck > 0 {
		args = append(args, "--epoch-recheck", cfg.EpochRecheck.String())
	}
	return args
}

// Start starts the worker process and waits until its /readyz answers 200.
func (w *Worker) Start(ctx context.Context) error {
	if err := w.p.start(); err != nil {
		return err
	}
	_, exited := w.p.running()
	return waitFor(ctx, 2*time.Minute, fmt.Sprintf("worker %d's /readyz", w.Index), exited, func(ctx context.Context) error {
		return getOK(ctx, w.HealthURL+"/readyz")
	})
}

// Ready reports whether the worker's /readyz answers 200 now.
func (w *Worker) Ready(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return getOK(ctx, w.HealthURL+"/readyz") == nil
}

// Running reports whether the process runs.
func (w *Worker) Running() bool {
	ok, _ := w.p.running()
	return ok
}

// Kill ends the worker with SIGKILL, as a crash or an OOM kill would.
func (w *Worker) Kill() { w.p.kill() }

// Stop stops the worker (SIGTERM: it stops polling and lets running activities finish; SIGKILL
// after grace).
func (w *Worker) Stop(grace time.Duration) { w.p.stop(grace) }

// PID is the worker's process id (0: not running).
func (w *Worker) PID() int { return w.p.pid() }

// copyKeys copies every *.json key of src into dst as files of mode 0600, as deploy/'s copy-keys
// does for each pod.
func copyKeys(src, dst string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), raw, 0o600); err != nil {
			return err
		}
	}
	return nil
}
