#!/usr/bin/env bash
# Relay benchmark: what the relay adds over calling a model provider directly, with nginx as the floor, in
# one run. Builds release binaries, starts a fake OpenAI Chat Completions upstream, nginx (generated config,
# unbuffered streaming reverse proxy) and the relay in front of it, runs the load generator, prints the
# tables, and stops everything it started (trap).
#
# Then the durable conversation write benchmark (compare-and-set PUTs, SQLite and PostgreSQL): one relay per
# database engine (and a baseline relay beside it, interleaved, when RELAY_BIN_BASE is set).
#
# Usage: scripts/bench-relay.sh            (about 2-3 minutes on 2 cores)
# Then the memory run (PHASES=rss): a fresh relay's RSS after each of RSS_ROUNDS rounds of RSS_STREAMS concurrent
# streams from RSS_USERS users (defaults 20, 500, 50; RSS_CHUNKS=20 chunks each), printed, never asserted.
#
# Env:   PHASES=streams,cas,rss (which parts run)
#        CAS_SECONDS=2 CAS_REPEATS=3 CAS_SQLITE_LEVELS=1,16 CAS_PG_LEVELS=1,16,64 CAS_CONTEXT_BYTES=1024
#        CAS_PG_URL=postgres://postgres@127.0.0.1:5432/test (empty: skip PostgreSQL; a unique schema is created
#        and dropped) CAS_PG_MAX_CONNECTIONS (the relay's database.maxConnections; default: the relay's)
#        RELAY_BIN_BASE=path (a baseline relay build measured beside RELAY_BIN in the write benchmark)
#        CHUNKS=100 LEVELS=1,64,1024 HOLD=1024 PACED=64 (0: no paced phase) INTERVAL_US=5000 (paced chunk spacing)
#        CARGO_TARGET_DIR (default: ./target; ./dev bench sets its shared cache) NGINX=/usr/sbin/nginx
#        RELAY_LOG=info (the relay's PATCHBRIDGE_LOG; default: the relay's own default)
#        NO_BUILD=1 (use the binaries already built)
#        STREAMS_DATABASE='{ "url": "postgres://...", "schema": "..." }' (the streams relay's database section;
#        default: a SQLite file in the temp dir)
#        RELAY_BIN=path (a relay binary, or a wrapper that execs one, instead of the release build)
#        CALLGRIND=1 (streams phase: the relay runs under valgrind's callgrind, ~50x slower, and its instruction
#        counts are printed after the tables: they repeat for the same build and workload however busy the
#        machine is, unlike the timings; keep LEVELS and HOLD small, e.g. LEVELS=1,16 HOLD=10 PACED=0)
# Fails only when something is functionally broken (a stream with missing or extra events, a process that
# does not start); timings are printed, never asserted.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
CHUNKS="${CHUNKS:-100}"
LEVELS="${LEVELS:-1,64,1024}"
HOLD="${HOLD:-1024}"
PACED="${PACED:-64}"
INTERVAL_US="${INTERVAL_US:-5000}"
NGINX="${NGINX:-/usr/sbin/nginx}"
PHASES="${PHASES:-streams,cas,rss}"
CAS_SECONDS="${CAS_SECONDS:-2}"
CAS_REPEATS="${CAS_REPEATS:-3}"
CAS_SQLITE_LEVELS="${CAS_SQLITE_LEVELS:-1,16}"
CAS_PG_LEVELS="${CAS_PG_LEVELS:-1,16,64}"
CAS_CONTEXT_BYTES="${CAS_CONTEXT_BYTES:-1024}"
CAS_PG_URL="${CAS_PG_URL-postgres://postgres@127.0.0.1:5432/test}"

cd "$ROOT"
if [ "${NO_BUILD:-0}" != 1 ]; then
echo "building release binaries (CARGO_TARGET_DIR=$CARGO_TARGET_DIR)..." >&2
# Separately, not in one `cargo build -p a -p b`: building them together unifies dependency features across
# both and would rebuild the relay (a long LTO build) with a feature set nobody else uses.
cargo build --release -j2 -q -p patchbridge-relay
cargo build --release -j2 -q -p patchbridge-relay-bench
fi
BENCH="$CARGO_TARGET_DIR/release/patchbridge-relay-bench"
# RELAY_BIN: run another relay build (or a wrapper that execs one) for an A/B experiment.
RELAY="${RELAY_BIN:-$CARGO_TARGET_DIR/release/patchbridge-relay}"

# 1,024 streams through a proxy need ~3 descriptors each per process; raise the soft limit to the hard one.
ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 8192 ]; then
  echo "bench-relay: the open-files limit is $(ulimit -n); 1,024 streams need at least 8192" >&2
  exit 1
fi

WORK="$(mktemp -d /tmp/bench-relay.XXXXXX)"
PIDS=()
PG_SCHEMAS=()
cleanup() {
  local status=$?
  for schema in "${PG_SCHEMAS[@]}"; do
    psql "$CAS_PG_URL" -q -c "DROP SCHEMA IF EXISTS \"$schema\" CASCADE" >/dev/null 2>&1 || true
  done
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$status" -ne 0 ]; then
    echo "--- logs kept in $WORK" >&2
    tail -n 20 "$WORK"/*.log >&2 2>/dev/null || true
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waits for "<pattern> <addr>" in a file written by a background process; prints the address.
wait_addr() {
  local file=$1 pattern=$2 pid=$3
  for _ in $(seq 1 200); do
    if addr=$(sed -n "s#.*$pattern \\(http://\\)\\{0,1\\}\\([0-9.:]*\\).*#\\2#p" "$file" | head -n1) && [ -n "$addr" ]; then
      echo "$addr"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || { echo "bench-relay: process $pid exited; see $file" >&2; return 1; }
    sleep 0.05
  done
  echo "bench-relay: timed out waiting for '$pattern' in $file" >&2
  return 1
}

if [[ ",$PHASES," == *,streams,* ]]; then
# 1. The fake upstream.
"$BENCH" upstream --bind 127.0.0.1:0 --chunks "$CHUNKS" --interval-us "$INTERVAL_US" >"$WORK/upstream.log" 2>&1 &
PIDS+=($!)
UPSTREAM_ADDR=$(wait_addr "$WORK/upstream.log" "fake-upstream listening on" "${PIDS[-1]}")

# 2. nginx as an unbuffered streaming reverse proxy with keepalive connections to the upstream.
NGINX_PORT=$("$BENCH" free-port)
mkdir -p "$WORK/nginx"
cat >"$WORK/nginx/nginx.conf" <<CONF
daemon off;
master_process on;
worker_processes auto;
worker_rlimit_nofile 16384;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx.log warn;
events { worker_connections 8192; multi_accept on; }
http {
  access_log off;
  client_body_temp_path $WORK/nginx/body;
  proxy_temp_path $WORK/nginx/proxy;
  fastcgi_temp_path $WORK/nginx/fastcgi;
  uwsgi_temp_path $WORK/nginx/uwsgi;
  scgi_temp_path $WORK/nginx/scgi;
  keepalive_requests 1000000;
  keepalive_timeout 300s;
  upstream fake_model { server $UPSTREAM_ADDR; keepalive 2048; keepalive_requests 1000000; }
  server {
    listen 127.0.0.1:$NGINX_PORT backlog=4096;
    location / {
      proxy_pass http://fake_model;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_cache off;
    }
  }
}
CONF
"$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -e "$WORK/nginx.log" &
PIDS+=($!)
NGINX_PID=${PIDS[-1]}
for _ in $(seq 1 200); do
  (exec 3<>"/dev/tcp/127.0.0.1/$NGINX_PORT") 2>/dev/null && break
  kill -0 "$NGINX_PID" 2>/dev/null || { echo "bench-relay: nginx exited" >&2; cat "$WORK/nginx.log" >&2; exit 1; }
  sleep 0.05
done

# 3. The relay: three models on the same upstream: back-to-back chunks, paused mid-response (memory phase),
#    and paced chunks. Every call is one user's: spending limits high enough never to refuse, so their counters
#    run on every call (the relay's spending histograms show what they cost).
# STREAMS_DATABASE: the relay's database section (default: a SQLite file in the temp dir).
STREAMS_DATABASE="${STREAMS_DATABASE:-"{ \"url\": \"sqlite://$WORK/relay.sqlite3\" }"}"
cat >"$WORK/relay.json" <<CONF
{
  "server": { "bind": "127.0.0.1:0", "basePath": "/api" },
  "identity": { "mode": "development" },
  "database": $STREAMS_DATABASE,
  "spending": { "windows": [ { "windowSeconds": 60, "sliding": true, "calls": 1000000000, "outputTokens": 1000000000000 } ],
                "maxConcurrentCalls": 100000 },
  "models": [
    { "id": "bench", "provider": "openai-chat", "baseUrl": "http://$UPSTREAM_ADDR/v1", "upstreamModel": "bench-model", "authScheme": "none" },
    { "id": "bench-hold", "provider": "openai-chat", "baseUrl": "http://$UPSTREAM_ADDR/hold/v1", "upstreamModel": "bench-model", "authScheme": "none" },
    { "id": "bench-paced", "provider": "openai-chat", "baseUrl": "http://$UPSTREAM_ADDR/paced/v1", "upstreamModel": "bench-model", "authScheme": "none" }
  ]
}
CONF
if [ -n "${RELAY_LOG:-}" ]; then export PATCHBRIDGE_LOG="$RELAY_LOG"; fi
RELAY_CMD=("$RELAY")
if [ "${CALLGRIND:-0}" = 1 ]; then
  command -v valgrind >/dev/null || { echo "bench-relay: CALLGRIND=1 needs valgrind" >&2; exit 1; }
  RELAY_CMD=(valgrind --tool=callgrind -q --callgrind-out-file="$WORK/relay.callgrind" "$RELAY")
fi
"${RELAY_CMD[@]}" --config "$WORK/relay.json" >"$WORK/relay.out.log" 2>"$WORK/relay.log" &
PIDS+=($!)
RELAY_PID=${PIDS[-1]}
RELAY_ADDR=$(wait_addr "$WORK/relay.out.log" "patchbridge-relay listening on" "$RELAY_PID")

REV="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$ROOT" status --porcelain -- relay-server ':!relay-server/bench' 2>/dev/null)" ]; then REV="$REV+uncommitted relay-server changes"; fi
echo "relay binary: $RELAY (tree $REV); $("$NGINX" -v 2>&1); relay log filter: ${PATCHBRIDGE_LOG:-default}"
"$BENCH" run \
  --upstream "http://$UPSTREAM_ADDR" \
  --nginx "http://127.0.0.1:$NGINX_PORT" \
  --relay "http://$RELAY_ADDR" \
  --relay-pid "$RELAY_PID" \
  --nginx-pid "$NGINX_PID" \
  --chunks "$CHUNKS" --levels "$LEVELS" --hold "$HOLD" --paced "$PACED"
if [ "${CALLGRIND:-0}" = 1 ]; then
  # SIGTERM: the relay drains and exits, and callgrind writes its counts on the way out.
  kill "$RELAY_PID"
  wait "$RELAY_PID" 2>/dev/null || true
  echo
  echo "Relay instructions (callgrind, user space only; the kernel's share is not counted). Per chunk: run once"
  echo "with CHUNKS=100 and once with CHUNKS=2, subtract, divide by the streams listed above and by 98."
  # Into a file first: a reader that stops early (grep -m1) would fail the pipeline under pipefail.
  callgrind_annotate "$WORK/relay.callgrind" >"$WORK/relay.callgrind.txt" 2>/dev/null
  grep 'PROGRAM TOTALS' "$WORK/relay.callgrind.txt"
  echo "Functions by their own instructions:"
  sed -n '/file:function/,$p' "$WORK/relay.callgrind.txt" | sed -n '3,27p' | cut -c1-160
fi
fi

# 3b. Memory under sustained load: its own upstream and relay, so the rounds start from a fresh process.
if [[ ",$PHASES," == *,rss,* ]]; then
RSS_CHUNKS="${RSS_CHUNKS:-20}"
"$BENCH" upstream --bind 127.0.0.1:0 --chunks "$RSS_CHUNKS" --interval-us 0 >"$WORK/rss-upstream.log" 2>&1 &
PIDS+=($!)
RSS_UPSTREAM=$(wait_addr "$WORK/rss-upstream.log" "fake-upstream listening on" "${PIDS[-1]}")
cat >"$WORK/rss-relay.json" <<CONF
{
  "server": { "bind": "127.0.0.1:0", "basePath": "/api" },
  "identity": { "mode": "development" },
  "database": { "url": "sqlite://$WORK/rss.sqlite3" },
  "spending": { "windows": [ { "windowSeconds": 60, "sliding": true, "calls": 1000000000, "outputTokens": 1000000000000 } ],
                "maxConcurrentCalls": 100000 },
  "models": [ { "id": "bench", "provider": "openai-chat", "baseUrl": "http://$RSS_UPSTREAM/v1", "upstreamModel": "bench-model", "authScheme": "none" } ]
}
CONF
"$RELAY" --config "$WORK/rss-relay.json" >"$WORK/rss-relay.out.log" 2>"$WORK/rss-relay.log" &
PIDS+=($!)
RSS_RELAY_PID=${PIDS[-1]}
RSS_RELAY=$(wait_addr "$WORK/rss-relay.out.log" "patchbridge-relay listening on" "$RSS_RELAY_PID")
echo
"$BENCH" rss --relay "http://$RSS_RELAY" --relay-pid "$RSS_RELAY_PID" --rounds "${RSS_ROUNDS:-20}" \
  --streams "${RSS_STREAMS:-500}" --users "${RSS_USERS:-50}" --chunks "$RSS_CHUNKS"
fi

# 4. The conversation write benchmark: relays in front of a fresh SQLite file / PostgreSQL schema each.
#    (No command substitution around anything that starts a process or records a schema: PIDS and
#    PG_SCHEMAS must be this shell's, for the cleanup.)
if [[ ",$PHASES," == *,cas,* ]]; then
  # Starts relay binary $2 on database JSON $3; appends "$1=URL" to CAS_RELAYS.
  start_cas_relay() {
    local label=$1 bin=$2 database=$3 addr
    printf '{ "server": { "bind": "127.0.0.1:0", "basePath": "/api" }, "identity": { "mode": "development" }, "database": %s, "demo": true }\n' \
      "$database" >"$WORK/cas-$label.json"
    "$bin" --config "$WORK/cas-$label.json" >"$WORK/cas-$label.out.log" 2>"$WORK/cas-$label.log" &
    PIDS+=($!)
    addr=$(wait_addr "$WORK/cas-$label.out.log" "patchbridge-relay listening on" "${PIDS[-1]}")
    CAS_RELAYS="${CAS_RELAYS:+$CAS_RELAYS,}$label=http://$addr/api"
  }
  # The candidate relay and, if RELAY_BIN_BASE is set, the baseline beside it (interleaved by the benchmark).
  cas_engine() {
    local engine=$1 levels=$2
    CAS_RELAYS=""
    start_cas_relay relay "$RELAY" "$(database_json "$engine" relay)"
    if [ -n "${RELAY_BIN_BASE:-}" ]; then
      start_cas_relay base "$RELAY_BIN_BASE" "$(database_json "$engine" base)"
    fi
    "$BENCH" cas --relays "$CAS_RELAYS" --engine "$engine" --levels "$levels" \
      --seconds "$CAS_SECONDS" --repeats "$CAS_REPEATS" --context-bytes "$CAS_CONTEXT_BYTES"
  }
  # Pure: the database section for engine $1, relay $2 (PostgreSQL schemas are recorded by the caller).
  database_json() {
    if [ "$1" = sqlite ]; then
      echo "{ \"url\": \"sqlite://$WORK/cas-$2.sqlite3\" }"
    else
      echo "{ \"url\": \"$CAS_PG_URL\", \"schema\": \"bench_cas_$$_$2\"${CAS_PG_MAX_CONNECTIONS:+, \"maxConnections\": $CAS_PG_MAX_CONNECTIONS} }"
    fi
  }
  cas_engine sqlite "$CAS_SQLITE_LEVELS"
  if [ -z "$CAS_PG_URL" ]; then
    echo "conversation PUT, postgres: skipped (CAS_PG_URL is empty)"
  else
    PG_SCHEMAS+=("bench_cas_$$_relay" "bench_cas_$$_base")
    cas_engine postgres "$CAS_PG_LEVELS"
  fi
fi
