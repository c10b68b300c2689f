#!/usr/bin/env bash
# Installs the pinned tools the tests and the local stack need, idempotently, into a per-user cache
# that survives fresh clones. Prints the path of each tool it was asked for.
#
#   scripts/tools.sh temporal   -> path of the pinned Temporal CLI (dev server + Web UI)
#   scripts/tools.sh chromium   -> path of headless-capable Chromium (Debian package, for the Web UI check)
#   scripts/tools.sh lint       -> directory holding the pinned workflowcheck, staticcheck and errcheck
#   scripts/tools.sh geth       -> path of the pinned geth (a real EVM node: --dev serves chainId 1337)
#   scripts/tools.sh gremlins   -> path of the pinned gremlins (mutation testing)
#   scripts/tools.sh temporal-server -> directory holding the pinned Temporal server (temporal-server),
#                                  its SQL schema tool (temporal-sql-tool) and its schemas (schema/)
#   scripts/tools.sh temporal-ui -> path of the pinned Temporal Web UI server (a Go module)
#   scripts/tools.sh softhsm    -> path of SoftHSM2's PKCS#11 module (Debian package softhsm2, for the HSM
#                                  key backend's tests; softhsm2-util comes with it)
set -euo pipefail

TEMPORAL_CLI_VERSION=v1.5.1
WORKFLOWCHECK_VERSION=v0.6.0
STATICCHECK_VERSION=v0.8.2
ERRCHECK_VERSION=v1.30.0
GETH_VERSION=v1.17.10
GREMLINS_VERSION=v0.6.0
# The server the pinned CLI embeds, and the UI server it serves.
TEMPORAL_SERVER_VERSION=v1.29.1
TEMPORAL_UI_VERSION=v2.42.1
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

# goinstall DIR PKG@VERSION BINARY: installs one Go tool into DIR unless it is there already.
goinstall() {
  local dir=$1 pkg=$2 bin=$3
  if [ ! -x "$dir/$bin" ]; then
    mkdir -p "$dir"
    echo "installing $pkg into $dir (once)" >&2
    (cd "$dir" && GOBIN="$dir" GOFLAGS=-mod=mod go install "$pkg") >&2
  fi
}

lint() {
  local dir="$cache/lint-wfc$WORKFLOWCHECK_VERSION-sc$STATICCHECK_VERSION-ec$ERRCHECK_VERSION"
  goinstall "$dir" "go.temporal.io/sdk/contrib/tools/workflowcheck@$WORKFLOWCHECK_VERSION" workflowcheck
  goinstall "$dir" "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" staticcheck
  goinstall "$dir" "github.com/kisielk/errcheck@$ERRCHECK_VERSION" errcheck
  echo "$dir"
}

geth() {
  local dir="$cache/geth-$GETH_VERSION"
  goinstall "$dir" "github.com/ethereum/go-ethereum/cmd/geth@$GETH_VERSION" geth
  echo "$dir/geth"
}

gremlins() {
  local dir="$cache/gremlins-$GREMLINS_VERSION"
  goinstall "$dir" "github.com/go-gremlins/gremlins/cmd/gremlins@$GREMLINS_VERSION" gremlins
  echo "$dir/gremlins"
}

# temporal_server: the real Temporal server and its SQL schema tool, built from the Go module (a few
# minutes, once), and the schema files shipped in that module, copied beside them.
temporal_server() {
  local dir="$cache/temporal-server-$TEMPORAL_SERVER_VERSION"
  if [ ! -x "$dir/temporal-server" ] || [ ! -x "$dir/temporal-sql-tool" ] || [ ! -d "$dir/schema/postgresql" ]; then
    mkdir -p "$dir"
    echo "installing Temporal server $TEMPORAL_SERVER_VERSION into $dir (a few minutes, once)" >&2
    local tmp src
    tmp=$(mktemp -d "$dir/.install.XXXXXX")
    (cd "$tmp" && GOBIN="$tmp" GOFLAGS=-mod=mod go install \
      "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" \
      "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION") >&2
    src=$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "go.temporal.io/server@$TEMPORAL_SERVER_VERSION" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    rm -rf "$dir/schema"
    cp -R "$src/schema" "$dir/schema"
    chmod -R u+w "$dir/schema"
    mv "$tmp/sql" "$dir/temporal-sql-tool"
    mv "$tmp/server" "$dir/temporal-server"
    rm -rf "$tmp"
  fi
  echo "$dir"
}

temporal_ui() {
  local dir="$cache/temporal-ui-$TEMPORAL_UI_VERSION"
  if [ ! -x "$dir/temporal-ui-server" ]; then
    mkdir -p "$dir"
    echo "installing Temporal UI server $TEMPORAL_UI_VERSION into $dir (once)" >&2
    local tmp
    tmp=$(mktemp -d "$dir/.install.XXXXXX")
    (cd "$tmp" && GOBIN="$tmp" GOFLAGS=-mod=mod go install "github.com/temporalio/ui-server/v2/cmd/server@$TEMPORAL_UI_VERSION") >&2
    mv "$tmp/server" "$dir/temporal-ui-server"
    rm -rf "$tmp"
  fi
  echo "$dir/temporal-ui-server"
}

# debian_package PKG TEST FILE: installs the Debian package PKG (once) unless FILE, which it
# provides, passes `test TEST FILE` (-x an executable, -f a library) already; fails if it still does
# not after the install.
debian_package() {
  local pkg="$1" check="$2" file="$3"
  if [ "$check" "$file" ]; then return; fi
  echo "installing $pkg from the Debian packages (once)" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi
  $sudo apt-get update >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "$pkg" >&2
  if ! [ "$check" "$file" ]; then
    echo "scripts/tools.sh: $pkg installed but $file is missing" >&2
    exit 1
  fi
}

chromium() {
  debian_package chromium -x /usr/bin/chromium
  echo /usr/bin/chromium
}

# softhsm: SoftHSM2 from the Debian packages (a software token behind the PKCS#11 interface every HSM
# speaks). Prints the module path; softhsm2-util (token creation) is installed beside it.
softhsm() {
  local module=/usr/lib/softhsm/libsofthsm2.so
  debian_package softhsm2 -f "$module"
  debian_package softhsm2 -x /usr/bin/softhsm2-util
  echo "$module"
}

for tool in "$@"; do
  case "$tool" in
    temporal) temporal ;;
    chromium) chromium ;;
    lint) lint ;;
    geth) geth ;;
    gremlins) gremlins ;;
    temporal-server) temporal_server ;;
    temporal-ui) temporal_ui ;;
    softhsm) softhsm ;;
    *) echo "scripts/tools.sh: unknown tool $tool" >&2; exit 2 ;;
  esac
done
