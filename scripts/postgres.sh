#!/usr/bin/env bash
# A real PostgreSQL server for the store tests, from the Debian packages, idempotently.
#
#   scripts/postgres.sh install   -> installs the postgresql package unless initdb is already there
#   scripts/postgres.sh start DIR -> a cluster in DIR (created once) serving 127.0.0.1 on a free port,
#                                    with a database "stakeflow"; prints its DSN. Running again while the
#                                    server runs prints the same DSN.
#   scripts/postgres.sh stop DIR  -> stops the server of DIR (nothing when it is not running)
#
# PostgreSQL refuses to run as root: as root the server runs as the postgres user (DIR is given to it).
set -euo pipefail

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi

bindir() {
  local initdb
  initdb=$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n1 || true)
  if [ -z "$initdb" ]; then
    echo "scripts/postgres.sh: PostgreSQL is not installed (run scripts/postgres.sh install)" >&2
    exit 1
  fi
  dirname "$initdb"
}

# as CMD...: runs CMD as the cluster's owner (postgres when we are root, else ourselves).
as() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

install() {
  if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then return 0; fi
  "$(dirname "$0")/tools.sh" postgresql
  bindir >/dev/null
}

# freeport: a TCP port on 127.0.0.1 that nothing listens on now.
freeport() {
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  echo "scripts/postgres.sh: no free port found" >&2
  exit 1
}

dsn() { echo "postgres://postgres@127.0.0.1:$1/stakeflow?sslmode=disable"; }

start() {
  local dir=$1 bin port
  bin=$(bindir)
  case "$dir" in *"'"*) echo "scripts/postgres.sh: a directory with ' in its name is not supported" >&2; exit 2 ;; esac
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$dir"; fi
  chmod 0700 "$dir"
  if ! as test -w "$dir"; then
    echo "scripts/postgres.sh: the server's user cannot reach $dir (is a parent directory private?)" >&2
    exit 1
  fi
  if [ ! -f "$dir/PG_VERSION" ]; then
    as "$bin/initdb" -D "$dir" -A trust -U postgres -E UTF8 --no-instructions >/dev/null
  fi
  if as "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1 && [ -f "$dir/stakeflow.port" ]; then
    dsn "$(cat "$dir/stakeflow.port")"
    return 0
  fi
  # A port found free may be taken before the server binds it: try a few.
  for _ in 1 2 3 4 5; do
    port=$(freeport)
    if as "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 \
      -o "-p $port -k '$dir' -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null; then
      echo "$port" | as tee "$dir/stakeflow.port" >/dev/null
      as "$bin/psql" -h "$dir" -p "$port" -U postgres -d postgres -qAt \
        -c "SELECT 1 FROM pg_database WHERE datname = 'stakeflow'" | grep -q 1 ||
        as "$bin/createdb" -h "$dir" -p "$port" -U postgres stakeflow
      dsn "$port"
      return 0
    fi
  done
  echo "scripts/postgres.sh: the server in $dir did not start; its log:" >&2
  tail -n 20 "$dir/server.log" >&2 || true
  exit 1
}

stop() {
  local dir=$1 bin
  bin=$(bindir)
  if [ -f "$dir/postmaster.pid" ]; then
    as "$bin/pg_ctl" -D "$dir" -m fast -w stop >/dev/null
  fi
}

case "${1:-}" in
  install) install ;;
  start) start "${2:?usage: scripts/postgres.sh start DIR}" ;;
  stop) stop "${2:?usage: scripts/postgres.sh stop DIR}" ;;
  *) echo "usage: scripts/postgres.sh install | start DIR | stop DIR" >&2; exit 2 ;;
esac
