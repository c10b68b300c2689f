// Package cluster runs stakeflow in its production shape on one machine: the real Temporal server
// (not the dev server) on PostgreSQL, with advanced visibility on PostgreSQL and stakeflow's search
// attributes, its Web UI, the staking-service sandbox on a real Solana runtime, and N worker
// processes (the cmd/worker binary), each with its own copy of the keys and its own health port.
//
// Every piece is started the way deploy/ describes it, from deploy/'s own files: PostgreSQL from
// the Debian packages (scripts/postgres.sh) gets the databases of deploy/temporal/postgres-init.sql,
// deploy/temporal/setup-schema.sh sets up the schemas with the server's SQL tool, the server runs
// with deploy/temporal/config/docker.yaml and deploy/temporal/dynamicconfig.yaml,
// deploy/temporal/create-namespace.sh creates the namespace, and `starter setup` registers the
// search attributes. The sandbox, its runtime and the funded staker keys come from harness/stack.
//
// The processes are the parts that fail in production, so the cluster can kill and start each of
// them: Server.Kill/Stop/Start, Worker.Kill/Stop/Start. `make cluster` runs one until Ctrl-C; the
// failover and rolling-upgrade tests (build tag integration, `make test-cluster`: they need
// TEMPORAL_SERVER_DIR and TEMPORAL_CLI, from scripts/tools.sh) and `make bench-cluster` use it too.
// Options.DevServer runs the same workers on the dev server instead, the benchmark's baseline.
package cluster
