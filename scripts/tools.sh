#!/usr/bin/env bash
# Installs the pinned tools the tests and the local stack need, idempotently, into a per-user cache
# that survives fresh clones. Prints the path of each tool it was asked for.
#
#   scripts/tools.sh temporal   -> path of the pinned Temporal CLI (dev server + Web UI)
set -euo pipefail

TEMPORAL_CLI_VERSION=v1.5.1
cache="${STAKEFLOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stakeflow}"

temporal() {
  local dir="$cache/temporal-$TEMPORAL_CLI_VERSION"
  if [ ! -x "$dir/temporal" ]; then
    mkdir -p "$dir"
    echo "installing Temporal CLI $TEMPORAL_CLI_VERSION into $dir (a few minutes, once)" >&2
    # Build outside the module so the project's go.mod does not pin the CLI's dependencies.
    local tmp
    tmp=$(mktemp -d "$dir/.install.XXXXXX")
    (cd "$tmp" && GOBIN="$tmp" GOFLAGS=-mod=mod go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION") >&2
    mv "$tmp/temporal" "$dir/temporal"
    rm -rf "$tmp"
  fi
  echo "$dir/temporal"
}

for tool in "$@"; do
  case "$tool" in
    temporal) temporal ;;
    *) echo "scripts/tools.sh: unknown tool $tool" >&2; exit 2 ;;
  esac
done
