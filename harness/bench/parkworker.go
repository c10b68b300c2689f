package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stakeflow/stakeflow/harness/childproc"
	"github.com/stakeflow/stakeflow/harness/cluster"
	"github.com/stakeflow/stakeflow/internal/worker"
	"github.com/stakeflow/stakeflow/workflows"
)

// parkQueuePrefix is the task-queue prefix of the worker process the unstakes are parked on:
// its queues are its own, so no other worker of the benchmark takes their tasks.
const parkQueuePrefix = "stakeflow-park"

// parkWorkerIdentity names the park worker to Temporal: the histories of the parked workflows
// show it beside each workflow task.
const parkWorkerIdentity = "stakeflow-park-worker"

// parkWorker is the shipped worker binary, run as a deployment runs it, serving the Solana module
// on queues of its own: parked workflows are measured in a process that holds nothing else.
type parkWorker struct {
	cmd    *exec.Cmd
	done   chan struct{}
	health string // base URL of /readyz and /metrics
}

// startParkWorker starts cfg.ParkWorkerBin against the stack, with --sticky-cache
// cfg.ParkStickyCache when set (else the worker's default), and waits until it is ready.
func (e *env) startParkWorker(ctx context.Context) (*parkWorker, error) {
	bin := e.cfg.ParkWorkerBin
	dir := filepath.Join(e.cfg.Dir, "park-worker-"+e.mode)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	health, addr, err := childproc.ListenInheritable()
	if err != nil {
		return nil, err
	}
	defer health.Close()
	logf, err := os.Create(filepath.Join(dir, "worker.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	args := cluster.WorkerArgs(e.st.WorkerConfig(), e.st.KeyDir, filepath.Join(dir, "data"), "warn")
	args = append(args, "--task-queue-prefix", parkQueuePrefix, "--identity", parkWorkerIdentity)
	if e.cfg.ParkStickyCache > 0 {
		args = append(args, "--sticky-cache", strconv.Itoa(e.cfg.ParkStickyCache))
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{health} // descriptor 3: --health-fd 3
	childproc.DieWithParent(cmd, false)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the park worker %s: %w", bin, err)
	}
	w := &parkWorker{cmd: cmd, done: make(chan struct{}), health: "http://" + addr}
	go func() { _ = cmd.Wait(); close(w.done) }()
	err = childproc.WaitReady(ctx, 2*time.Minute, 5*time.Second, "the park worker (log: "+logf.Name()+")", w.done, func(ctx context.Context) error {
		return w.get(ctx, "/readyz", nil)
	})
	if err != nil {
		w.stop()
		return nil, err
	}
	return w, nil
}

// queue is the park worker's task queue for module.
func (w *parkWorker) queue(module string) string {
	return workflows.TaskQueueOf(parkQueuePrefix, module)
}

// sample reads the worker process's RSS from /proc, and its Go heap in use and goroutines from
// its /metrics (the Go collector's go_memstats_heap_inuse_bytes and go_goroutines).
func (w *parkWorker) sample(ctx context.Context) (rss, heap uint64, goroutines int, err error) {
	if rss, err = VmRSS(w.cmd.Process.Pid); err != nil {
		return 0, 0, 0, err
	}
	var heapF, gorF float64
	err = w.get(ctx, "/metrics", func(line string) {
		if v, ok := metricValue(line, "go_memstats_heap_inuse_bytes"); ok {
			heapF = v
		}
		if v, ok := metricValue(line, "go_goroutines"); ok {
			gorF = v
		}
	})
	return rss, uint64(heapF), int(gorF), err
}

// metricValue parses line as the unlabelled sample of the Prometheus metric name.
func metricValue(line, name string) (float64, bool) {
	rest, ok := strings.CutPrefix(line, name+" ")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
	return v, err == nil
}

// get asks the worker's health endpoint for path and hands each line of a 200 answer to line.
func (w *parkWorker) get(ctx context.Context, path string, line func(string)) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.health+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", path, resp.Status)
	}
	if line != nil {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line(sc.Text())
		}
		return sc.Err()
	}
	return nil
}

// stop stops the worker (SIGTERM, SIGKILL after 10 s) and waits for it.
func (w *parkWorker) stop() {
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
}

// stickyCacheOf is the sticky cache size a park worker runs with.
func stickyCacheOf(cfg Config) int {
	if cfg.ParkStickyCache > 0 {
		return cfg.ParkStickyCache
	}
	return worker.DefaultStickyCache
}
