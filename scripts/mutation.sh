#!/usr/bin/env bash
# Mutation testing of the money path with the pinned gremlins (scripts/tools.sh gremlins).
#
#   scripts/mutation.sh all [PKG...]   every package of the money path (or the PKGs named, e.g. signer chain/solana)
#   scripts/mutation.sh report [PKG...] the verdict on the last results (MUTATION_OUT), without running again
#   scripts/mutation.sh changed        only the packages of the money path with a changed Go file since the last
#                                      tag (git describe --tags --abbrev=0), working tree included; with no tag, signer
#
# For each package it prints the efficacy (killed / (killed + lived)), the counts and every surviving mutant,
# and it fails when the efficacy is below the package's threshold, when gremlins fails, or when a package yields
# no killed or lived mutant at all: a run never passes silently.
#
# Each package is mutated in a snapshot of its own: go.mod, go.sum, the committed and untracked (not ignored)
# files of the package and of every package of this module it or its tests import, and every testdata/ directory
# (tests read golden files of other packages).
# Gremlins copies that snapshot once per worker, and work in progress in packages outside those imports cannot
# break the run.
#
# Environment: MUTATION_WORKERS (gremlins --workers, default the number of CPUs), MUTATION_OUT (directory for
# the JSON results and logs, default .artifacts/mutation), MUTATION_TIMEOUT_COEFFICIENT (default 5: each
# mutant's test run may take this many times the coverage run before it counts as timed out).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# The money path and the efficacy (percent) each package must reach (docs/mutation.md has the
# measured efficacies and what survives).
declare -A threshold=(
  [signer]=90
  [workflows]=90
  [workflows/solana]=90
  [workflows/evm]=90
  [lease]=90
  [workflows/polygon]=90
  [activities]=85
  [activities/solana]=85
  [chain/solana]=90
)
order=(signer workflows workflows/solana workflows/evm lease workflows/polygon activities activities/solana chain/solana)

out="${MUTATION_OUT:-$root/.artifacts/mutation}"
coefficient="${MUTATION_TIMEOUT_COEFFICIENT:-5}"
workers="${MUTATION_WORKERS:-0}"

die() { echo "mutation: $*" >&2; exit 2; }

# changed_packages prints the packages of the money path with a Go file changed since the last tag.
changed_packages() {
  local base
  if ! base=$(git describe --tags --abbrev=0 2>/dev/null); then
    echo "mutation: no tag in this repository: running signer, the package every signature goes through" >&2
    echo signer
    return
  fi
  echo "mutation: packages changed since tag $base" >&2
  local files
  files=$( { git diff --name-only "$base" -- '*.go'; git ls-files --others --exclude-standard -- '*.go'; } | sort -u)
  local p
  for p in "${order[@]}"; do
    if grep -qE "^$p/[^/]+\.go$" <<<"$files"; then echo "$p"; fi
  done
}

# snapshot DIR PKG copies what the tests of PKG need into DIR and prints the path to give gremlins.
#
# Gremlins v0.6.0 derives a mutant's import path from the directory name, walking up to a directory
# named like the Go package: for chain/solana (package solchain) it finds none and tests the module
# root instead, which has no Go files, so every mutant "dies" of a failed build. Such a package is
# mutated from a directory named after it (DIR/solchain), which only its own in-package tests can
# use: a test file of the package that imports it by path is refused.
snapshot() {
  local dir=$1 pkg=$2 d f name importpath at
  name=$(go list -f '{{.Name}}' "./$pkg")
  importpath=$(go list -f '{{.ImportPath}}' "./$pkg")
  at=$pkg
  if [ "$name" != "$(basename "$pkg")" ]; then
    at=$name
    [ ! -e "$at" ] || die "$pkg is package $name, and ./$name exists: gremlins cannot tell its import path"
    if grep -lF "\"$importpath\"" "$pkg"/*_test.go >/dev/null 2>&1; then
      die "$pkg is package $name and a test imports it by path: gremlins cannot mutate it from ./$name"
    fi
  fi
  local -a dirs
  mapfile -t dirs < <(go list -e -deps -test -f '{{with .Module}}{{if .Main}}{{$.Dir}}{{end}}{{end}}' "./$pkg" | sort -u)
  [ "${#dirs[@]}" -gt 0 ] || die "go list found no package in ./$pkg"
  {
    echo go.mod
    echo go.sum
    git ls-files -co --exclude-standard | grep -E '(^|/)testdata/' || true
    for d in "${dirs[@]}"; do
      d=${d#"$root"/}
      [ "$d" = "$pkg" ] && continue
      git ls-files -co --exclude-standard -- "$d" | grep -E "^$d/([^/]+|testdata/.*)$" || true
    done
  } | sort -u | while read -r f; do
    if [ -f "$f" ]; then cp --parents -- "$f" "$dir/"; fi
  done
  git ls-files -co --exclude-standard -- "$pkg" | grep -E "^$pkg/([^/]+|testdata/.*)$" | while read -r f; do
    if [ -f "$f" ]; then
      mkdir -p "$dir/$at/$(dirname "${f#"$pkg"/}")"
      cp -- "$f" "$dir/$at/${f#"$pkg"/}"
    fi
  done
  echo "./$at"
}

# verdict PKG SECONDS prints PKG's efficacy, counts and surviving mutants from gremlins' JSON results
# and returns 1 when the efficacy is below the package's threshold.
verdict() {
  local pkg=$1 took=$2 name json log
  [ -n "${threshold[$pkg]:-}" ] || die "unknown package $pkg (known: ${order[*]})"
  name=${pkg//\//-}
  json="$out/$name.json"
  log="$out/$name.log"
  [ -s "$json" ] || { echo "FAIL $pkg: gremlins wrote no results in $json (no mutant found?)" >&2; return 1; }
  python3 - "$json" "$pkg" "${threshold[$pkg]}" "$took" "$log" <<'EOF'
import json, sys
path, pkg, threshold, took, log = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
r = json.load(open(path))
counts = {}
lived = []
for f in r.get("files") or []:
    for m in f.get("mutations") or []:
        counts[m["status"]] = counts.get(m["status"], 0) + 1
        if m["status"] == "LIVED":
            lived.append((f["file_name"], m["line"], m["column"], m["type"]))
killed, survived = counts.get("KILLED", 0), counts.get("LIVED", 0)
timed_out = counts.get("TIMED OUT", 0)
efficacy = 100.0 * killed / (killed + survived) if killed + survived else 0.0
print(f"{pkg}: efficacy {efficacy:.2f}% (threshold {threshold:g}%): killed {killed}, lived {survived}, "
      f"timed out {timed_out}, not viable {counts.get('NOT VIABLE', 0)}, not covered {counts.get('NOT COVERED', 0)}"
      + (f"; {took}s" if took.isdigit() else ""))
for fn, line, col, typ in sorted(lived):
    print(f"  LIVED {pkg}/{fn}:{line}:{col} {typ}")
if killed + survived == 0:
    print(f"FAIL {pkg}: no mutant was killed or survived (see {log})", file=sys.stderr)
    sys.exit(1)
if efficacy < threshold:
    print(f"FAIL {pkg}: efficacy {efficacy:.2f}% is below {threshold:g}%", file=sys.stderr)
    sys.exit(1)
EOF
}

# run PKG mutates one package and checks its threshold; returns 1 when the package fails.
run() {
  local pkg=$1 name snap json log rc=0
  [ -n "${threshold[$pkg]:-}" ] || die "unknown package $pkg (known: ${order[*]})"
  [ -d "$pkg" ] || die "no directory $pkg"
  name=${pkg//\//-}
  json="$out/$name.json"
  log="$out/$name.log"
  rm -f "$json"
  snap=$(mktemp -d "${TMPDIR:-/tmp}/mutation-$name.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$snap'" RETURN
  local at
  at=$(snapshot "$snap" "$pkg")

  local -a args=(unleash "$at" --output "$json" --timeout-coefficient "$coefficient")
  if [ "$workers" != 0 ]; then args+=(--workers "$workers"); fi
  echo "== $pkg: gremlins ${args[*]} (log: $log)"
  local start=$SECONDS
  (cd "$snap" && "$gremlins" "${args[@]}") >"$log" 2>&1 || rc=$?
  local took=$((SECONDS - start))
  if [ "$rc" -ne 0 ]; then
    tail -n 30 "$log" >&2
    echo "FAIL $pkg: gremlins exited with $rc after ${took}s" >&2
    return 1
  fi
  verdict "$pkg" "$took"
}

# main is read whole before it runs, so that editing this file during a long run cannot change it.
main() {
  mode=${1:-}
  [ $# -gt 0 ] && shift
  case "$mode" in
    all) if [ $# -gt 0 ]; then pkgs=("$@"); else pkgs=("${order[@]}"); fi ;;
    changed) mapfile -t pkgs < <(changed_packages) ;;
    report)
      # The verdict on the last results in $out, without running gremlins again.
      if [ $# -gt 0 ]; then pkgs=("$@"); else pkgs=("${order[@]}"); fi
      failed=()
      for p in "${pkgs[@]}"; do verdict "$p" "" || failed+=("$p"); done
      if [ "${#failed[@]}" -gt 0 ]; then echo "mutation: FAILED: ${failed[*]}" >&2; exit 1; fi
      exit 0 ;;
    *) die "usage: scripts/mutation.sh all [PKG...] | changed | report [PKG...]" ;;
  esac
  if [ "${#pkgs[@]}" -eq 0 ]; then
    echo "mutation: no package of the money path changed since the last tag: nothing to mutate"
    exit 0
  fi

  gremlins=$("$root/scripts/tools.sh" gremlins)
  mkdir -p "$out"
  failed=()
  for p in "${pkgs[@]}"; do
    run "$p" || failed+=("$p")
  done
  if [ "${#failed[@]}" -gt 0 ]; then
    echo "mutation: FAILED: ${failed[*]}" >&2
    exit 1
  fi
  echo "mutation: every package reached its threshold: ${pkgs[*]}"
}

main "$@"; exit
