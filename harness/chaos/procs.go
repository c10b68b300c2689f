package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/harness/childproc"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/workflows"
)

// temporalServer is a Temporal dev server run as a child process on a fixed port with a database
// file, so that it can be stopped and started again with its state.
type temporalServer struct {
	cli    string
	port   int
	dbFile string
	logf   *os.File

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	// refusal watches the running server's output for its refusal of the port.
	refusal *stack.PortRefusalWatch
}

func newTemporalServer(cliPath string, port int, dbFile string, logf *os.File) *temporalServer {
	return &temporalServer{cli: cliPath, port: port, dbFile: dbFile, logf: logf}
}

// address is the frontend's host:port.
func (t *temporalServer) address() string { return "127.0.0.1:" + strconv.Itoa(t.port) }

func (t *temporalServer) args() []string {
	args := []string{"server", "start-dev",
		"--ip", "127.0.0.1", "--port", strconv.Itoa(t.port), "--headless",
		"--db-filename", t.dbFile,
		"--log-level", "error",
	}
	// The local stack's server settings.
	for _, kv := range stack.BaseServerDynamicConfig {
		args = append(args, "--dynamic-config-value", kv)
	}
	for _, p := range stack.SQLitePragmas {
		args = append(args, "--sqlite-pragma", p)
	}
	for _, kv := range workflows.SearchAttributeTypes() {
		args = append(args, "--search-attribute", kv[0]+"="+kv[1])
	}
	return args
}

// start launches the server and waits until its frontend answers a health check.
func (t *temporalServer) start(ctx context.Context) error {
	t.mu.Lock()
	if t.cmd != nil {
		t.mu.Unlock()
		return errors.New("chaos: Temporal dev server already running")
	}
	cmd := exec.Command(t.cli, t.args()...)
	refusal := &stack.PortRefusalWatch{}
	out := io.MultiWriter(t.logf, refusal)
	cmd.Stdout, cmd.Stderr = out, out
	setChildAttrs(cmd)
	if err := cmd.Start(); err != nil {
		t.mu.Unlock()
		return fmt.Errorf("chaos: starting Temporal dev server %s: %w", t.cli, err)
	}
	done := make(chan struct{})
	t.cmd, t.done, t.refusal = cmd, done, refusal
	t.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	err := waitFor(ctx, 60*time.Second, "the Temporal frontend at "+t.address(), done, func(ctx context.Context) error {
		c, err := client.Dial(client.Options{HostPort: t.address(), Logger: cli.TemporalLogger(zap.NewNop())})
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
		return err
	})
	<-refusalSettled(done, err)
	if line := refusal.Refused(); line != "" {
		return fmt.Errorf("chaos: Temporal dev server: %w: %s", stack.ErrPortInUse, line)
	}
	return err
}

// refusalSettled is closed once the server's output can be trusted to hold a port refusal: at
// once when the server answered, once it exited when it did not (the refusal is its last line).
func refusalSettled(exited <-chan struct{}, waitErr error) <-chan struct{} {
	if waitErr == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	return exited
}

// stop ends the server with SIGTERM (SIGKILL after grace) and waits for it to exit.
func (t *temporalServer) stop(grace time.Duration) {
	t.mu.Lock()
	cmd, done := t.cmd, t.done
	t.cmd, t.done = nil, nil
	t.mu.Unlock()
	if cmd == nil {
		return
	}
	terminate(cmd, done, grace)
}

// terminate sends SIGTERM to a child, SIGKILL if it is still running after grace, and waits for
// done (closed when the child was reaped).
func terminate(cmd *exec.Cmd, done <-chan struct{}, grace time.Duration) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
	}
}

// workerProcess runs the stakeflow worker binary as a child process and supervises it: a worker
// that exits on its own (for instance because Temporal was unreachable at start) is started
// again; kill ends it with SIGKILL and starts it again after a pause.
type workerProcess struct {
	bin        string
	args       []string
	env        []string
	logf       *os.File
	healthAddr string
	// health is the listening socket of healthAddr, bound once by the supervisor and inherited
	// by every worker it starts (as --health-fd 3), so the address holds across restarts.
	health     *os.File
	restartGap time.Duration

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
	stopping bool
	killed   bool
	// killPause is how long the worker stays down after the last kill.
	killPause time.Duration
	// exits counts exits the supervisor did not cause; starts counts every start.
	exits, starts, kills int
	loopDone             chan struct{}
}

// run starts the supervision loop; it returns once the first process has started.
func (w *workerProcess) run() error {
	if err := w.spawn(); err != nil {
		return err
	}
	w.loopDone = make(chan struct{})
	go w.loop()
	return nil
}

func (w *workerProcess) spawn() error {
	cmd := exec.Command(w.bin, w.args...)
	cmd.Env = w.env
	cmd.Stdout, cmd.Stderr = w.logf, w.logf
	if w.health != nil {
		cmd.ExtraFiles = []*os.File{w.health} // descriptor 3 in the child
	}
	setChildAttrs(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("chaos: starting worker %s: %w", w.bin, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	w.mu.Lock()
	w.cmd, w.done, w.killed = cmd, done, false
	w.starts++
	w.mu.Unlock()
	return nil
}

func (w *workerProcess) loop() {
	defer close(w.loopDone)
	for {
		w.mu.Lock()
		done := w.done
		w.mu.Unlock()
		<-done
		w.mu.Lock()
		stopping, killed := w.stopping, w.killed
		gap := w.restartGap
		if killed {
			gap = w.killPause
		} else if !stopping {
			w.exits++
		}
		w.mu.Unlock()
		if stopping {
			return
		}
		// A killed worker comes back after the pause its kill asked for; one that exited by
		// itself after restartGap.
		time.Sleep(gap)
		w.mu.Lock()
		stopping = w.stopping
		w.mu.Unlock()
		if stopping {
			return
		}
		for w.spawn() != nil {
			time.Sleep(w.restartGap)
		}
	}
}

// kill sends SIGKILL to the running worker; the loop starts a new one after pause.
func (w *workerProcess) kill(pause time.Duration) {
	w.mu.Lock()
	cmd := w.cmd
	w.killed = true
	w.killPause = pause
	w.kills++
	w.mu.Unlock()
	_ = cmd.Process.Kill()
}

// awaitRestart waits until a worker started after the first `after` starts is ready.
func (w *workerProcess) awaitRestart(ctx context.Context, after int, limit time.Duration) error {
	err := waitFor(ctx, limit, "a new worker process", nil, func(context.Context) error {
		if starts, _, _ := w.counts(); starts <= after {
			return errors.New("not started yet")
		}
		return nil
	})
	if err != nil {
		return err
	}
	return w.ready(ctx, limit)
}

// ready waits until the worker's /readyz answers 200.
func (w *workerProcess) ready(ctx context.Context, limit time.Duration) error {
	return waitFor(ctx, limit, "the worker's /readyz at "+w.healthAddr, nil, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+w.healthAddr+"/readyz", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
}

// stop ends the supervision loop and the worker (SIGTERM, SIGKILL after grace).
func (w *workerProcess) stop(grace time.Duration) {
	w.mu.Lock()
	w.stopping = true
	cmd, done := w.cmd, w.done
	w.mu.Unlock()
	if cmd == nil {
		return
	}
	terminate(cmd, done, grace)
	if w.loopDone != nil {
		<-w.loopDone
	}
}

// counts returns how often the worker was started, killed, and exited on its own.
func (w *workerProcess) counts() (starts, kills, exits int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.starts, w.kills, w.exits
}

// waitFor is childproc.WaitReady with this package's name on its error.
func waitFor(ctx context.Context, limit time.Duration, what string, exited <-chan struct{}, probe func(context.Context) error) error {
	if err := childproc.WaitReady(ctx, limit, 2*time.Second, what, exited, probe); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	return nil
}

// pickPort returns a loopback port free now, for the Temporal CLI, which cannot bind port 0 and
// report the port it got: the caller starts the server again on a new port if another process
// took this one first (stack.ErrPortInUse).
func pickPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// childEnv is this process's environment without the STAKEFLOW_ variables, so that the settings of
// the chaos command never leak into the worker through its flags' environment twins.
func childEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STAKEFLOW_") {
			out = append(out, kv)
		}
	}
	return out
}
