#!/bin/sh
# Creates the local stack's secrets for deploy/compose.yaml, for development only:
#
#   sandbox-token-secret   random HS256 secret the sandbox checks bearer tokens with
#   service-token          a bearer token for the worker, signed with that secret (no expiry)
#   solana-staker.json     a new Solana keypair (Solana CLI format: 64 numbers, seed + public key)
#   payload-keyset.json    the payload codec's keyset: one random AES-256 key, k1, current (what
#                          `starter keyset new --id k1` writes)
#   codec-tokens           two random tokens for the codec server, one a line: the first for the
#                          Web UI, the second for the Temporal CLI (--codec-auth "Bearer <line 2>")
#   codec-ui.env           TEMPORAL_CODEC_ENDPOINT for the Web UI: the codec server with the
#                          first token as its first path segment
#
# Usage: deploy/local-secrets.sh [DIR]     (default: deploy/local-secrets next to this script)
#
# Existing files are kept, so running it again changes nothing. The directory is private to you
# (0700); the token files in it are 0644 because compose bind-mounts each one into a container
# that runs as another user (worker 65532, sandbox 1000), which must be able to read it. The
# Solana keypair, the keyset and the codec tokens are 0600: their readers refuse a file that the
# group or others can read, so compose's keys, payload-keyset and codec-token services copy each
# into a volume as 0600 owned by user 65532. codec-ui.env is 0600 too: compose reads it, as you.
# The token is minted by the sandbox itself: with $SANDBOX_BIN if set, else `go run ./harness/cmd/sandbox`,
# else the stakeflow-sandbox:local image. Nothing secret is printed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
dir=${1:-"$here/local-secrets"}

umask 077
mkdir -p "$dir"
chmod 700 "$dir"

# publish NAME [MODE]: moves $dir/NAME.tmp into place with mode MODE (default 644).
publish() {
  chmod "${2:-644}" "$dir/$1.tmp"
  mv "$dir/$1.tmp" "$dir/$1"
  echo "created $dir/$1"
}

if [ ! -s "$dir/sandbox-token-secret" ]; then
  openssl rand -hex 32 >"$dir/sandbox-token-secret.tmp"
  publish sandbox-token-secret
fi

if [ ! -s "$dir/service-token" ]; then
  if [ -n "${SANDBOX_BIN:-}" ]; then
    SANDBOX_TOKEN_SECRET_FILE="$dir/sandbox-token-secret" \
      "$SANDBOX_BIN" token --subject stakeflow-worker --ttl 0 >"$dir/service-token.tmp"
  elif command -v go >/dev/null 2>&1; then
    (cd "$root" && SANDBOX_TOKEN_SECRET_FILE="$dir/sandbox-token-secret" \
      go run ./harness/cmd/sandbox token --subject stakeflow-worker --ttl 0) >"$dir/service-token.tmp"
  else
    docker compose -f "$here/compose.yaml" build sandbox
    docker run --rm -v "$dir/sandbox-token-secret:/run/secrets/sandbox_token_secret:ro" \
      -e SANDBOX_TOKEN_SECRET_FILE=/run/secrets/sandbox_token_secret \
      stakeflow-sandbox:local token --subject stakeflow-worker --ttl 0 >"$dir/service-token.tmp"
  fi
  if [ ! -s "$dir/service-token.tmp" ]; then
    echo "local-secrets: minting the service token produced nothing" >&2
    exit 1
  fi
  publish service-token
fi

if [ ! -s "$dir/solana-staker.json" ]; then
  pem="$dir/.staker.pem"
  trap 'rm -f "$pem"' EXIT
  openssl genpkey -algorithm ed25519 -out "$pem" 2>/dev/null
  # PKCS#8 DER ends with the 32-byte seed; SubjectPublicKeyInfo DER ends with the 32-byte key.
  seed=$(openssl pkey -in "$pem" -outform DER | tail -c 32 | od -An -v -tu1)
  pub=$(openssl pkey -in "$pem" -pubout -outform DER | tail -c 32 | od -An -v -tu1)
  rm -f "$pem"
  echo $seed $pub | awk '{ printf "["; for (i = 1; i <= NF; i++) printf "%s%d", (i > 1 ? "," : ""), $i; print "]" }' \
    >"$dir/solana-staker.json.tmp"
  publish solana-staker.json 600
fi

if [ ! -s "$dir/payload-keyset.json" ]; then
  printf '{"current": "k1", "keys": [{"id": "k1", "key": "%s"}]}\n' "$(openssl rand -base64 32)" \
    >"$dir/payload-keyset.json.tmp"
  publish payload-keyset.json 600
fi

if [ ! -s "$dir/codec-tokens" ]; then
  { openssl rand -hex 32; openssl rand -hex 32; } >"$dir/codec-tokens.tmp"
  publish codec-tokens 600
fi

if [ ! -s "$dir/codec-ui.env" ]; then
  printf 'TEMPORAL_CODEC_ENDPOINT=http://127.0.0.1:8082/%s\n' "$(head -n 1 "$dir/codec-tokens")" >"$dir/codec-ui.env.tmp"
  publish codec-ui.env 600
fi

# The staker's address (base58 of the public key), for `starter stake --staker ...`.
address=$(tr -d '[]' <"$dir/solana-staker.json" | tr ',' '\n' | tail -n 32 | awk '
  BEGIN { alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz" }
  { b[n++] = $1 + 0 }
  END {
    zeros = 0; while (zeros < n && b[zeros] == 0) zeros++
    len = 0
    for (i = 0; i < n; i++) {
      carry = b[i]
      for (j = 0; j < len; j++) { carry += d[j] * 256; d[j] = carry % 58; carry = int(carry / 58) }
      while (carry > 0) { d[len++] = carry % 58; carry = int(carry / 58) }
    }
    out = ""; for (i = 0; i < zeros; i++) out = out "1"
    for (j = len - 1; j >= 0; j--) out = out substr(alphabet, d[j] + 1, 1)
    print out
  }')
echo "staker address: $address"
