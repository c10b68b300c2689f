# stakeflow: build, test and run the local stack.
SHELL := /bin/bash
GO ?= go
export GOTOOLCHAIN := local

PKGS := ./...
TEMPORAL_CLI = $(shell scripts/tools.sh temporal)

# The pinned geth (a real EVM node for the Polygon tests and the local stack), installed once before
# the targets that start one; harness/gethdev reads it from $GETH.
test-integration record-histories test-chaos chaos bench bench-full demo dev ui-check: export GETH = $(shell scripts/tools.sh geth)

.PHONY: test-checks all bench bench-full bench-go lint test-stacks test-chaos chaos deploy-check images demo build test test-unit test-integration vet fuzz-smoke tools tools-cluster dev ui-check clean cluster test-cluster bench-cluster

all: build

## build: compile every binary into bin/
build:
	$(GO) build -o bin/ ./cmd/...

## vet: static checks, once over every file: the integration tag only adds files (none is built only without it, which the first line holds)
vet:
	@! grep -rl --include='*.go' -E '^//go:build .*!integration' . || { echo "files built only without the integration tag: vet them too"; exit 1; }
	$(GO) vet -tags integration $(PKGS)

# go test's own vet pass (a subset of vet's checks) repeats what make vet checked in make test: off in the tests' runs.
NOVET := -vet=off

## test: everything CI runs: vet and linters, unit tests (race detector), fuzz smoke, deploy checks (test-checks), beside
## integration tests on real parts, the Web UI check, the small chaos run and the cluster tests (test-stacks)
# Both run at once, the checks at a lower CPU priority: the stacks' path (building the tools, then the suites) gets the
# cores when it needs them, the checks the rest.
test:
	$(MAKE) --no-print-directory -j2 --output-sync=target test-checks test-stacks

## test-checks: vet, lint, test-unit, fuzz-smoke and deploy-check, one after the other, at nice 10
test-checks:
	nice -n 10 $(MAKE) --no-print-directory -j1 vet lint test-unit fuzz-smoke deploy-check

## test-stacks: the four suites that each start a local stack (Temporal dev server or the real server on PostgreSQL, sandbox, Solana runtime, geth), at once:
## they wait on chains (finality, epochs), but each stack's nodes also take CPU: on 2 cores, together they take longer than the longest alone
## (measured in docs/testing.md; the cluster suite's server build, which reuses the CLI's packages, runs meanwhile)
test-stacks: tools
	$(MAKE) --no-print-directory -j4 --output-sync=target test-integration ui-check test-chaos test-cluster

## lint: workflowcheck (determinism of workflow code), staticcheck, errcheck (pinned; scripts/tools.sh lint)
lint:
	@set -e; bin="$$(scripts/tools.sh lint)"; \
	  echo "workflowcheck ./workflows/... ./lease/..."; "$$bin/workflowcheck" ./workflows/... ./lease/...; \
	  echo "staticcheck -tags integration ./..."; "$$bin/staticcheck" -tags integration ./...; \
	  echo "errcheck ./..."; "$$bin/errcheck" -ignoretests -exclude .errcheck-excludes ./...

## test-unit: unit tests of every package, with the race detector (the store's run on a real PostgreSQL, installed once)
test-unit:
	scripts/postgres.sh install
	$(GO) test $(NOVET) -race -count=1 $(PKGS)

## fuzz-smoke: run each fuzz target for FUZZ_EXECS inputs on top of its committed seed corpus
# The budget is a count, not a duration: with a duration, Go up to 1.26 can fail a target with a bare
# "context deadline exceeded" when the time runs out while a worker is mid-input (go.dev/issue/75804).
# Minimizing a new input is bounded by a count too: its 60 s default could stall a target for a minute on every new input.
FUZZ_EXECS ?= 50000
fuzz-smoke:
	@set -e; for spec in $$(grep -rl --include='*_test.go' -E '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	  for f in $$(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)' $$spec/*_test.go | awk '{print $$2}'); do \
	    echo "fuzz $$spec $$f"; $(GO) test $(NOVET) -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZ_EXECS)x -fuzzminimizetime 200x $$spec; \
	  done; \
	done

## test-integration: workflows on a real Temporal dev server, the sandbox on a real Solana runtime, and every
## test that starts a real chain (geth --dev, the Solana runtime) beside its package's unit tests
# The PKCS#11 key backend and starter keys generate/list against a real SoftHSM2 token (Debian's softhsm2, installed by scripts/tools.sh softhsm).
HSM_PKGS := ./signer/keys/hsm/... ./internal/starter/
REAL_CHAIN_PKGS := ./activities/evm/ ./activities/solana/ ./chain/evm/ ./chain/solana/ ./harness/cmd/sandbox/ ./harness/gethdev/ ./harness/sandbox/...
# -p 4: the two integration packages take minutes of chain time each; the other packages run beside them rather than after.
test-integration: tools
	TEMPORAL_CLI="$(TEMPORAL_CLI)" $(GO) test $(NOVET) -tags integration -count=1 -p 4 -timeout 30m ./integration/... ./harness/cmd/devstack/... ./harness/stack/... ./cmd/codec-server/ ./workflows/evm/ $(REAL_CHAIN_PKGS) $(HSM_PKGS)

## test-cluster: failover (worker SIGKILLs, a Temporal restart) and a rolling upgrade (the worker from before its newest code change beside this one's) on the real Temporal server on PostgreSQL with worker processes
test-cluster: tools tools-cluster
	TEMPORAL_CLI="$(TEMPORAL_CLI)" TEMPORAL_SERVER_DIR="$$(scripts/tools.sh temporal-server)" $(GO) test $(NOVET) -tags integration -count=1 -timeout 10m ./harness/cluster/...

## record-histories: re-record the workflow histories replayed by the workflows tests
record-histories: tools
	TEMPORAL_CLI="$(TEMPORAL_CLI)" $(GO) test -tags integration -count=1 -timeout 30m ./integration/ -args -record-histories $(CURDIR)/workflows

## deploy-check: offline checks of deploy/ (compose, Kubernetes manifests, Dockerfile; a module of its own)
deploy-check:
	cd deploy/check && $(GO) vet ./... && $(GO) test $(NOVET) -count=1 ./...

## images: build the worker, starter, sandbox and codec-server images (needs a Docker engine)
images:
	for t in worker starter sandbox codec-server; do docker build -f deploy/Dockerfile --target $$t -t stakeflow-$$t:local . || exit 1; done

## test-chaos: 30 operations under faults (worker SIGKILLs, Temporal restart, service errors), checked on chain
test-chaos: tools
	TEMPORAL_CLI="$(TEMPORAL_CLI)" $(GO) test $(NOVET) -tags integration -count=1 -timeout 15m ./harness/chaos/...

## chaos: the full chaos run (200 operations by default; more flags with ARGS="--ops 500 --seed 7")
chaos: tools
	TEMPORAL_CLI="$(TEMPORAL_CLI)" $(GO) run ./harness/cmd/chaos $(ARGS)

## bench: orchestration benchmark on the local stack (in-memory server; the Solana sides, then a Polygon delegate, a Celestia delegate, a Hyperliquid withdrawal and an EigenLayer checkpoint, each against a bare client; 1,000 unstakes parked on the worker binary; results and table in .artifacts/bench/)
bench: tools
	$(GO) build -o bin/ ./cmd/worker
	TEMPORAL_CLI="$(TEMPORAL_CLI)" $(GO) run ./harness/cmd/bench $(BENCH_FLAGS)

## bench-cluster: make bench's cluster mode: stakes through 1, 2 and 4 worker processes on the real Temporal server on PostgreSQL and on the dev server, with CPU per stake of each part (a few minutes; table in .artifacts/bench/cluster.md; more flags with BENCH_FLAGS)
bench-cluster: tools tools-cluster
	$(GO) build -o bin/ ./cmd/worker ./cmd/starter
	TEMPORAL_CLI="$(TEMPORAL_CLI)" TEMPORAL_SERVER_DIR="$$(scripts/tools.sh temporal-server)" $(GO) run ./harness/cmd/bench -cluster $(BENCH_FLAGS)

## bench-full: both server modes and 10,000 unstakes parked on the worker binary (its RSS against the 120 MB goal)
bench-full: tools
	$(GO) build -o bin/ ./cmd/worker
	TEMPORAL_CLI="$(TEMPORAL_CLI)" $(GO) run ./harness/cmd/bench -server memory,file -park 10000 -park-concurrency 48 $(BENCH_FLAGS)

## bench-go: Go benchmarks of the hot paths (decode, verify, sign; envelope decoding; sealing and opening the recorded histories' payloads with and without compression; a signature through SoftHSM2 against a file key)
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./signer/ ./apiclient/ ./codec/
	$(GO) test -tags integration -run '^$$' -bench . -benchmem ./signer/keys/hsm/

## mutation: mutation testing (pinned gremlins) of signer, workflows, activities and chain/solana; fails below each package's efficacy threshold (docs/mutation.md)
mutation:
	scripts/mutation.sh all $(MUTATION_PKGS)

## mutation-changed: make mutation on the packages of the money path with a Go file changed since the last tag (signer when there is no tag)
mutation-changed:
	scripts/mutation.sh changed

## tools: install the pinned Temporal CLI and geth, at once (cached per user)
tools:
	@scripts/tools.sh temporal >/dev/null & cli=$$!; scripts/tools.sh geth >/dev/null; geth=$$?; wait $$cli && exit $$geth

## tools-cluster: install the pinned Temporal server, its SQL tool and schemas, and PostgreSQL (cached per user; the server reuses the packages the CLI's build compiled).
## The Web UI server is built when make cluster first asks for it (CLUSTER_TOOLS): the cluster tests do not start one.
tools-cluster:
	@scripts/tools.sh temporal-server >/dev/null
	@scripts/postgres.sh install

# The cluster's pieces, for make cluster, test-cluster and bench.
CLUSTER_TOOLS = --temporal-server-dir "$$(scripts/tools.sh temporal-server)" --temporal-cli "$(TEMPORAL_CLI)" --ui-server "$$(scripts/tools.sh temporal-ui)"

## cluster: the production shape on this machine until Ctrl-C: the Temporal server on PostgreSQL (advanced visibility, search attributes), its Web UI, the sandbox and WORKERS worker processes (default 2; state in .cluster/)
WORKERS ?= 2
cluster: tools tools-cluster
	$(GO) build -o bin/ ./cmd/worker ./cmd/starter ./harness/cmd/cluster
	bin/cluster --workers $(WORKERS) $(CLUSTER_TOOLS)

clean:
	rm -rf bin .stack

## demo: start the local stack, stake 2 SOL, unstake and withdraw it (each step printed), stop
demo: tools
	$(GO) build -o bin/devstack ./harness/cmd/devstack
	TEMPORAL_CLI="$(TEMPORAL_CLI)" bin/devstack demo

## dev: start the local stack (Temporal + Web UI on :8233, sandbox, worker) until Ctrl-C
dev: tools
	$(GO) build -o bin/devstack ./harness/cmd/devstack
	TEMPORAL_CLI="$(TEMPORAL_CLI)" bin/devstack up

## ui-check: the Web UI lists a stake with its search attributes and shows its encrypted payloads decoded through the codec server, ciphertext without it (headless Chromium, screenshots in .artifacts/ui/)
ui-check: tools
	CHROMIUM="$$(scripts/tools.sh chromium)" TEMPORAL_CLI="$(TEMPORAL_CLI)" $(GO) test $(NOVET) -tags integration -count=1 -timeout 15m ./uitest/...

## schemas: regenerate the workflow contract's JSON Schemas (docs/schemas) from the Go types
.PHONY: schemas
schemas:
	$(GO) generate ./internal/contract
