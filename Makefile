# stakeflow: build, test and run the local stack.
SHELL := /bin/bash
GO ?= go
export GOTOOLCHAIN := local

PKGS := ./...
TEMPORAL_CLI = $(shell scripts/tools.sh temporal)

.PHONY: all demo build test test-unit test-integration vet fuzz-smoke tools dev demo clean

all: build

## build: compile every binary into bin/
build:
	$(GO) build -o bin/ ./cmd/...

## vet: static checks
vet:
	$(GO) vet $(PKGS)
	$(GO) vet -tags integration $(PKGS)

## test: everything CI runs: vet, unit tests (race detector), fuzz smoke, integration tests on real parts
test: vet test-unit fuzz-smoke test-integration

## test-unit: unit tests of every package, with the race detector
test-unit:
	$(GO) test -race -count=1 $(PKGS)

## fuzz-smoke: run each fuzz target briefly on top of its committed seed corpus
fuzz-smoke:
	@set -e; for spec in $$(grep -rl --include='*_test.go' -E '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	  for f in $$(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)' $$spec/*_test.go | awk '{print $$2}'); do \
	    echo "fuzz $$spec $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime 10s $$spec; \
	  done; \
	done

## test-integration: workflows on a real Temporal dev server, the sandbox on a real Solana runtime
test-integration: tools
	TEMPORAL_CLI="$(TEMPORAL_CLI)" $(GO) test -tags integration -count=1 -timeout 20m ./integration/...

## tools: install the pinned Temporal CLI (cached per user)
tools:
	@scripts/tools.sh temporal >/dev/null

clean:
	rm -rf bin .stack

## demo: the main job on the local stack
demo:
	@echo "The local stack (Temporal dev server + Web UI, sandbox, worker) is not assembled yet; see README.md."
