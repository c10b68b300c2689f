#!/bin/sh
# Creates the Temporal namespace NAMESPACE (retention RETENTION) unless it exists, then waits until
# the frontend serves it. TEMPORAL_ADDRESS is read by the temporal CLI itself.
set -eu
: "${NAMESPACE:?NAMESPACE is required}"
: "${RETENTION:=7d}"
if temporal operator namespace describe --namespace "$NAMESPACE" >/dev/null 2>&1; then
  echo "namespace ${NAMESPACE} exists"
else
  temporal operator namespace create --namespace "$NAMESPACE" --retention "$RETENTION"
fi
# A new namespace reaches the frontend's cache within seconds; wait for it (bounded).
n=0
until temporal workflow list --namespace "$NAMESPACE" --limit 1 >/dev/null 2>&1; do
  n=$((n + 1))
  if [ "$n" -ge 60 ]; then
    echo "namespace ${NAMESPACE} is not served after 60 attempts" >&2
    exit 1
  fi
  sleep 1
done
echo "namespace ${NAMESPACE} is ready"
