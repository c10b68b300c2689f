package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// Server is the Temporal server process (frontend, history, matching and worker services in one
// process, as the image runs them), on the cluster's PostgreSQL. Its ports stay the same across
// Stop and Start.
type Server struct {
	p *process
	// Address is the frontend's host:port; MetricsURL its Prometheus endpoint.
	Address    string
	MetricsURL string
}

// serverPorts are the environment variables of deploy/temporal/config/docker.yaml that take a
// port (all below 32768: see freeLowPorts).
var serverPorts = []string{
	"FRONTEND_GRPC_PORT", "FRONTEND_HTTP_PORT", "FRONTEND_MEMBERSHIP_PORT",
	"MATCHING_GRPC_PORT", "MATCHING_MEMBERSHIP_PORT",
	"HISTORY_GRPC_PORT", "HISTORY_MEMBERSHIP_PORT",
	"WORKER_GRPC_PORT", "WORKER_MEMBERSHIP_PORT",
}

// startServer starts the server with deploy/temporal/config/docker.yaml and
// deploy/temporal/dynamicconfig.yaml.
func (c *Cluster) startServer(ctx context.Context) error {
	host, port, err := c.pgHostPort()
	if err != nil {
		return err
	}
	ports, err := freeLowPorts(len(serverPorts) + 1)
	if err != nil {
		return err
	}
	env := []string{
		"DB=postgres12", "POSTGRES_SEEDS=" + host, "DB_PORT=" + port, "POSTGRES_USER=postgres", "POSTGRES_PWD=",
		"BIND_ON_IP=127.0.0.1", "TEMPORAL_BROADCAST_ADDRESS=127.0.0.1", "LOG_LEVEL=warn",
		"NUM_HISTORY_SHARDS=" + strconv.Itoa(c.opts.HistoryShards),
		"DYNAMIC_CONFIG_FILE_PATH=" + c.deployPath("dynamicconfig.yaml"),
		fmt.Sprintf("PROMETHEUS_ENDPOINT=127.0.0.1:%d", ports[len(serverPorts)]),
	}
	for i, name := range serverPorts {
		env = append(env, name+"="+strconv.Itoa(ports[i]))
	}
	logf, err := c.logFile("temporal.log")
	if err != nil {
		return err
	}
	c.Server = &Server{
		p: &process{
			name: "Temporal server", bin: filepath.Join(c.opts.ServerDir, "temporal-server"), logf: logf,
			args: []string{"--root", c.deployPath(), "--config", "config", "--env", "docker", "--allow-no-auth", "start"},
			env:  childEnv(env...),
		},
		Address:    "127.0.0.1:" + strconv.Itoa(ports[0]),
		MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[len(serverPorts)]),
	}
	return c.Server.Start(ctx)
}

// Start starts the server and waits until its frontend answers.
func (s *Server) Start(ctx context.Context) error {
	if err := s.p.start(); err != nil {
		return err
	}
	_, exited := s.p.running()
	return waitFor(ctx, 2*time.Minute, "the Temporal server at "+s.Address, exited, func(ctx context.Context) error {
		c, err := client.DialContext(ctx, client.Options{HostPort: s.Address})
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.WorkflowService().GetSystemInfo(ctx, &workflowservice.GetSystemInfoRequest{})
		return err
	})
}

// Stop stops the server (SIGTERM; SIGKILL after 20 s) and waits for it.
func (s *Server) Stop() { s.p.stop(20 * time.Second) }

// Kill ends the server with SIGKILL.
func (s *Server) Kill() { s.p.kill() }

// PID is the server's process id (0: not running).
func (s *Server) PID() int { return s.p.pid() }
