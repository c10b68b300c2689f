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
#   scripts/tools.sh postgresql -> nothing; installs Debian's postgresql for scripts/postgres.sh
set -euo pipefail

WORKFLOWCHECK_VERSION=v0.6.0
STATICCHECK_VERSION=v0.8.2
ERRCHECK_VERSION=v1.30.0
GETH_VERSION=v1.17.10
GREMLINS_VERSION=v0.6.0
# The UI server the pinned CLI serves.
TEMPORAL_UI_VERSION=v2.42.1
cache="${STAKEFLOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stakeflow}"
here="$(cd "$(dirname "$0")/.." && pwd)"
# The Temporal CLI and server are pinned by the module tools/temporal (go.mod and go.sum), built from
# it so the server reuses the CLI's compiled packages. Their cache directories carry a digest of
# go.sum, so a change of any pinned version builds anew.
temporal_module="$here/tools/temporal"
module_version() { awk -v m="$1" '$1 == m { print $2; exit }' "$temporal_module/go.mod"; }
TEMPORAL_CLI_VERSION=$(module_version github.com/temporalio/cli)
TEMPORAL_SERVER_VERSION=$(module_version go.temporal.io/server)
temporal_pins=$(sha256sum "$temporal_module/go.sum" | cut -c1-12)

# temporal_build DIR PKG...: builds the tools module's packages PKG into the fresh directory DIR.
temporal_build() {
  local dir=$1; shift
  (cd "$temporal_module" && GOFLAGS="-mod=readonly -buildvcs=false" go build -o "$dir/" "$@") >&2
}

temporal() {
  local dir="$cache/temporal-$TEMPORAL_CLI_VERSION-$temporal_pins"
  if [ ! -x "$dir/temporal" ]; then
    mkdir -p "$dir"
    echo "installing Temporal CLI $TEMPORAL_CLI_VERSION into $dir (a few minutes, once)" >&2
    local tmp
    tmp=$(mktemp -d "$dir/.install.XXXXXX")
    temporal_build "$tmp" github.com/temporalio/cli/cmd/temporal
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

# temporal_server: the real Temporal server and its SQL schema tool, built from tools/temporal (a
# minute or two once the CLI is built, whose packages it reuses), and the schema files shipped in
# the server's module, copied beside them.
temporal_server() {
  local dir="$cache/temporal-server-$TEMPORAL_SERVER_VERSION-$temporal_pins"
  if [ ! -x "$dir/temporal-server" ] || [ ! -x "$dir/temporal-sql-tool" ] || [ ! -d "$dir/schema/postgresql" ]; then
    mkdir -p "$dir"
    echo "installing Temporal server $TEMPORAL_SERVER_VERSION into $dir (once)" >&2
    local tmp src
    tmp=$(mktemp -d "$dir/.install.XXXXXX")
    temporal_build "$tmp" go.temporal.io/server/cmd/server go.temporal.io/server/cmd/tools/sql
    src=$(cd "$temporal_module" && go list -m -f '{{.Dir}}' go.temporal.io/server)
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

# apt_install PKG: installs the Debian package PKG. Suites run at once may each install one, so the
# installs take turns on a lock (apt-get fails at once while another holds the package database).
apt_install() {
  local pkg=$1 sudo=""
  echo "installing $pkg from the Debian packages (once)" >&2
  if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi
  (
    flock 9
    $sudo apt-get update >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "$pkg" >&2
  ) 9>"${TMPDIR:-/tmp}/stakeflow-apt.lock"
}

# debian_package PKG TEST FILE: installs the Debian package PKG (once) unless FILE, which it
# provides, passes `test TEST FILE` (-x an executable, -f a library) already; fails if it still does
# not after the install.
debian_package() {
  local pkg="$1" check="$2" file="$3"
  if [ "$check" "$file" ]; then return; fi
  apt_install "$pkg"
  if ! [ "$check" "$file" ]; then
    echo "scripts/tools.sh: $pkg installed but $file is missing" >&2
    exit 1
  fi
}

# postgresql: PostgreSQL from the Debian packages, for scripts/postgres.sh (which finds its binaries).
postgresql() {
  if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then apt_install postgresql; fi
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
    postgresql) postgresql ;;
    *) echo "scripts/tools.sh: unknown tool $tool" >&2; exit 2 ;;
  esac
done
