// Package check holds the offline checks of stakeflow's deployment files in deploy/. It has no
// code of its own: its tests load each file with the tool that will consume it and assert the
// properties the deployment relies on.
//
//   - deploy/compose.yaml is loaded with the Compose Specification loader (compose-go), with
//     placeholder values interpolated: the services, secrets, configs, health checks and
//     start-up order exist, ports bind to loopback only, secrets come from gitignored files. The
//     Temporal server gets temporal/config/docker.yaml, the configuration `make cluster` runs the
//     real server with, and that file reads every setting compose passes the server.
//   - Every manifest in deploy/k8s is decoded strictly (an unknown or duplicated field is an
//     error) into the Kubernetes API types, kustomization.yaml into kustomize's type: probes,
//     non-root, read-only root filesystem, resources, no Secret data, the PodDisruptionBudget
//     selects the Deployment's pods, only Secret templates are left out of the kustomization.
//   - The worker's JSON configurations (the ConfigMap's and compose's) use only flag names that
//     cmd/worker registers, read from internal/worker/config.go and internal/cli/temporal.go, and
//     values the worker's file loader passes through unchanged.
//   - deploy/Dockerfile parses with BuildKit's parser and linter, has the targets worker,
//     starter, sandbox and codec-server, each running as a non-root user.
//   - The Solana keys reach the worker only as a copy of mode 0600 owned by the worker's user, in a
//     volume the worker mounts read-only (the worker refuses key files the group or others can
//     read): in Kubernetes through the copy-keys init container and an in-memory emptyDir, the
//     keys Secret mounted in no regular container; in compose through the one-shot keys service
//     and a named volume, the key secret not given to the worker. Both run one script, which the
//     checks run here on a Secret volume's layout.
//   - The codec server (cmd/codec-server) is held like the worker: its flags are read from
//     internal/codecserver/config.go, and compose's environment twins and the Deployment's args use
//     only those; its probes knock on /healthz and /readyz where --listen listens; its image is
//     distroless/static, non-root. The payload keyset reaches the worker, the setup starter and the
//     codec server, and the token file the codec server, only as copy-keys' 0600 copies, as the
//     Solana keys do; the Web UI's codec endpoint (it holds a token) comes from a gitignored file.
//   - deploy/local-secrets.sh writes a valid Solana keypair (0600), a token and a secret, a payload
//     keyset and the codec server's tokens (0600), privately.
//
// It is a module of its own so that the main module does not depend on these libraries. Run it
// with `cd deploy/check && go test ./...`.
package check
