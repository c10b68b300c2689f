package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stakeflow/stakeflow/harness/childproc"
)

// process is a child process the cluster can start, stop and kill, again and again.
type process struct {
	name  string
	bin   string
	args  []string
	env   []string
	dir   string
	logf  *os.File
	extra []*os.File

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// start starts the process unless it runs.
func (p *process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		select {
		case <-p.done:
		default:
			return fmt.Errorf("cluster: %s already runs", p.name)
		}
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env, cmd.Dir = p.env, p.dir
	cmd.Stdout, cmd.Stderr = p.logf, p.logf
	cmd.ExtraFiles = p.extra
	// The kernel kills the child when the thread that started it exits: a test or command that
	// dies leaves no server or worker behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cluster: starting %s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	p.cmd, p.done = cmd, done
	return nil
}

// running reports whether the process runs, and its done channel.
func (p *process) running() (bool, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false, nil
	}
	select {
	case <-p.done:
		return false, p.done
	default:
		return true, p.done
	}
}

// pid is the process's id, 0 when it does not run.
func (p *process) pid() int {
	if ok, _ := p.running(); !ok {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}

// kill ends the process with SIGKILL and waits for it.
func (p *process) kill() {
	p.signal(syscall.SIGKILL, 0)
}

// stop ends the process with SIGTERM, SIGKILL after grace, and waits for it.
func (p *process) stop(grace time.Duration) {
	p.signal(syscall.SIGTERM, grace)
}

func (p *process) signal(sig syscall.Signal, grace time.Duration) {
	ok, done := p.running()
	if !ok {
		return
	}
	p.mu.Lock()
	proc := p.cmd.Process
	p.mu.Unlock()
	_ = proc.Signal(sig)
	if sig == syscall.SIGKILL {
		<-done
		return
	}
	select {
	case <-done:
	case <-time.After(grace):
		_ = proc.Kill()
		<-done
	}
}

// waitFor is childproc.WaitReady with this package's name on its error.
func waitFor(ctx context.Context, limit time.Duration, what string, exited <-chan struct{}, probe func(context.Context) error) error {
	if err := childproc.WaitReady(ctx, limit, 5*time.Second, what, exited, probe); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	return nil
}

// getOK is nil when url answers 200.
func getOK(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d", url, resp.StatusCode)
	}
	return nil
}

// freePorts returns n loopback ports free now (all bound at once, so distinct), for programs that
// take their ports from their configuration; another process may take one before they bind it,
// and the program then fails to start (its log says so).
func freePorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// freeLowPorts is freePorts below 32768: Temporal keeps its services' membership ports in a
// PostgreSQL smallint column, and the kernel hands out ports above that for port 0.
func freeLowPorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			_ = l.Close()
		}
	}()
	start := 20000 + rand.IntN(10000)
	for p := start; len(ports) < n && p < 32768; p++ {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		lns = append(lns, l)
		ports = append(ports, p)
	}
	if len(ports) < n {
		return nil, errors.New("cluster: no free ports below 32768")
	}
	return ports, nil
}

// childEnv is this process's environment without the STAKEFLOW_ variables (the worker's flags'
// environment twins), plus extra.
func childEnv(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STAKEFLOW_") {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// errExited reports a one-shot command's failure with the tail of its output.
func errExited(what string, err error, out []byte) error {
	if len(out) > 2000 {
		out = out[len(out)-2000:]
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("cluster: %s: %v\n%s", what, err, out)
	}
	return fmt.Errorf("cluster: %s: %w", what, err)
}
