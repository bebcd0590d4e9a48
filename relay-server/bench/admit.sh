#!/usr/bin/env bash
# Spending admission benchmark on PostgreSQL: a baseline relay build and a candidate, each on a fresh schema of
# ADMIT_PG_URL, both with the default limits' shape (a 60 s and a day sliding window, concurrency) raised far
# above the load, driven by `patchbridge-relay-bench admit` (scripted demo model, no upstream), interleaved
# repeat by repeat; prints calls/s, latency and the relays' admission / settlement means, and the ratios
# candidate / baseline. Stops what it started and drops its schemas (trap). Timings are printed, never asserted.
#
# Usage: RELAY_BIN_BASE=/path/to/old/patchbridge-relay relay-server/bench/admit.sh
# Env:   RELAY_BIN (candidate; default: the release build in CARGO_TARGET_DIR) RELAY_BIN_BASE (required)
#        BENCH_BIN (default: the release bench in CARGO_TARGET_DIR; NO_BUILD=1 skips building both)
#        ADMIT_PG_URL=postgres://postgres@127.0.0.1:5432/test ADMIT_LEVELS=1,16 ADMIT_USERS=one,each
#        ADMIT_SECONDS=2 ADMIT_REPEATS=3 ADMIT_MAX_CONNECTIONS (the relays' database.maxConnections)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
ADMIT_PG_URL="${ADMIT_PG_URL:-postgres://postgres@127.0.0.1:5432/test}"
: "${RELAY_BIN_BASE:?set RELAY_BIN_BASE to the baseline relay binary}"
cd "$ROOT"
if [ "${NO_BUILD:-0}" != 1 ]; then
  cargo build --release -j2 -q -p patchbridge-relay
  cargo build --release -j2 -q -p patchbridge-relay-bench
fi
RELAY="${RELAY_BIN:-$CARGO_TARGET_DIR/release/patchbridge-relay}"
BENCH="${BENCH_BIN:-$CARGO_TARGET_DIR/release/patchbridge-relay-bench}"

WORK="$(mktemp -d /tmp/bench-admit.XXXXXX)"
PIDS=()
SCHEMAS=()
cleanup() {
  local status=$?
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  for schema in "${SCHEMAS[@]}"; do
    psql "$ADMIT_PG_URL" -q -c "DROP SCHEMA IF EXISTS \"$schema\" CASCADE" >/dev/null 2>&1 || true
  done
  if [ "$status" -ne 0 ]; then
    echo "--- logs kept in $WORK" >&2
    tail -n 20 "$WORK"/*.log >&2 2>/dev/null || true
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The default limits' shape, every count far above what the bench reaches.
SPENDING='{ "windows": [
    { "windowSeconds": 60, "sliding": true, "calls": 1000000000000 },
    { "windowSeconds": 86400, "sliding": true, "calls": 1000000000000, "inputTokens": 1000000000000,
      "outputTokens": 1000000000000 } ],
  "maxConcurrentCalls": 1000000 }'

RELAYS=""
# Starts relay binary $2 as label $1 on its own schema; appends "$1=URL" to RELAYS.
start_relay() {
  local label=$1 bin=$2 schema="bench_admit_$$_$1" addr=""
  SCHEMAS+=("$schema")
  printf '{ "server": { "bind": "127.0.0.1:0", "basePath": "/api" }, "identity": { "mode": "development" },
  "database": { "url": "%s", "schema": "%s"%s }, "demo": true, "spending": %s }\n' \
    "$ADMIT_PG_URL" "$schema" "${ADMIT_MAX_CONNECTIONS:+, \"maxConnections\": $ADMIT_MAX_CONNECTIONS}" \
    "$SPENDING" >"$WORK/$label.json"
  "$bin" --config "$WORK/$label.json" >"$WORK/$label.out.log" 2>"$WORK/$label.log" &
  PIDS+=($!)
  for _ in $(seq 1 200); do
    addr=$(sed -n 's#.*patchbridge-relay listening on \(http://\)\{0,1\}\([0-9.:]*\).*#\2#p' "$WORK/$label.out.log" | head -n1)
    [ -n "$addr" ] && break
    kill -0 "${PIDS[-1]}" 2>/dev/null || { echo "admit.sh: relay $label exited" >&2; exit 1; }
    sleep 0.05
  done
  [ -n "$addr" ] || { echo "admit.sh: relay $label did not start" >&2; exit 1; }
  RELAYS="${RELAYS:+$RELAYS,}$label=http://$addr/api"
}
start_relay base "$RELAY_BIN_BASE"
start_relay relay "$RELAY"
"$BENCH" admit --relays "$RELAYS" --levels "${ADMIT_LEVELS:-1,16}" --users "${ADMIT_USERS:-one,each}" \
  --seconds "${ADMIT_SECONDS:-2}" --repeats "${ADMIT_REPEATS:-3}"
