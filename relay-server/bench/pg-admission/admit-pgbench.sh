#!/usr/bin/env bash
# The database side of a PostgreSQL spending admission, without the relay: pgbench runs one call's counter
# statements (admission, then settlement) as the relay wrote them before migration 0005 (`transaction.sql`) and
# as it writes them since (`statement.sql`), the latter also with its commit waiting for the WAL flush
# (`statement, synchronous`: the migration's functions without their `synchronous_commit` line), each on a fresh
# schema, interleaved repeat by repeat, at each client count, with one user for every client and with a user per
# client. Prints transactions/s (one call each) and the admission and settlement latency pgbench measured per
# statement (for the transaction: its statements summed), then each variant beside the transaction as a ratio.
# Drops its schemas (trap). Timings are printed, never asserted.
#
# Usage: relay-server/bench/pg-admission/admit-pgbench.sh
# Env:   PG_URL=postgres://postgres@127.0.0.1:5432/test CLIENTS="1 16" SECONDS_PER_RUN=4 REPEATS=3
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MIGRATIONS="$HERE/../../migrations/postgres"
PG_URL="${PG_URL:-postgres://postgres@127.0.0.1:5432/test}"
CLIENTS="${CLIENTS:-1 16}"
SECONDS_PER_RUN="${SECONDS_PER_RUN:-4}"
REPEATS="${REPEATS:-3}"
WORK="$(mktemp -d /tmp/admit-pgbench.XXXXXX)"
SCHEMAS=(bench_pgadm_$$_tx bench_pgadm_$$_stmt bench_pgadm_$$_sync)
cleanup() {
  for s in "${SCHEMAS[@]}"; do psql "$PG_URL" -q -c "DROP SCHEMA IF EXISTS $s CASCADE" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

schema() { # $1 schema, then migration files
  local s=$1
  shift
  { echo "CREATE SCHEMA $s; SET search_path TO $s;"; cat "$@"; } | psql "$PG_URL" -q -v ON_ERROR_STOP=1 >/dev/null
}
grep -v "set_config('synchronous_commit'" "$MIGRATIONS/0005_spending_statements.sql" >"$WORK/0005_sync.sql"
schema "${SCHEMAS[0]}" "$MIGRATIONS/0003_spending.sql" "$MIGRATIONS/0004_spending_instances.sql"
schema "${SCHEMAS[1]}" "$MIGRATIONS/0003_spending.sql" "$MIGRATIONS/0004_spending_instances.sql" \
  "$MIGRATIONS/0005_spending_statements.sql"
schema "${SCHEMAS[2]}" "$MIGRATIONS/0003_spending.sql" "$MIGRATIONS/0004_spending_instances.sql" "$WORK/0005_sync.sql"
LABELS=("transaction" "statement" "statement, synchronous")
FILES=("$HERE/transaction.sql" "$HERE/statement.sql" "$HERE/statement.sql")

# One run: prints "tps admit_ms settle_ms" (pgbench's per-statement averages; the transaction's summed per
# transaction block: the statements up to the first COMMIT are the admission).
run() { # $1 variant index, $2 clients, $3 users
  local s=${SCHEMAS[$1]}
  psql "$PG_URL" -q -c "VACUUM $s.spending_calls" -c "VACUUM $s.spending_usage" >/dev/null
  PGOPTIONS="-c search_path=$s" pgbench "$PG_URL" -n -M prepared -r -T "$SECONDS_PER_RUN" -c "$2" -j 2 \
    -D nusers="$3" -f "${FILES[$1]}" 2>/dev/null | awk '
      /^tps/ { tps = $3 }
      /^ +[0-9.]+ +[0-9]+ +/ {
        ms = $1; text = $0
        if (text ~ /\\set/) next
        if (text ~ /patchbridge_admit/) { admit += ms; next }
        if (text ~ /patchbridge_settle/) { settle += ms; next }
        if (done_admit) settle += ms; else admit += ms
        if (text ~ /COMMIT/) done_admit = 1
      }
      END { printf "%s %.3f %.3f\n", tps, admit, settle }'
}

printf '%-24s %-12s %4s %9s %10s %10s\n' "variant" "users" "C" "calls/s" "admit ms" "settle ms"
for c in $CLIENTS; do
  for users in one each; do
    n=1
    [ "$users" = each ] && n=$c
    declare -A figures=()
    for _ in $(seq 1 "$REPEATS"); do
      for v in 0 1 2; do figures[$v]+="$(run "$v" "$c" "$n")"$'\n'; done
    done
    declare -A med=()
    for v in 0 1 2; do
      # Median of each column over the repeats.
      med[$v]=$(printf '%s' "${figures[$v]}" | awk 'NF { for (i = 1; i <= 3; i++) col[i, NR] = $i; n = NR }
        END { for (i = 1; i <= 3; i++) { for (r = 1; r <= n; r++) v[r] = col[i, r]; asort(v); printf "%s ", v[int((n + 1) / 2)]; delete v } }')
      read -r tps admit settle <<<"${med[$v]}"
      printf '%-24s %-12s %4s %9.0f %10.3f %10.3f\n' "${LABELS[$v]}" "$users" "$c" "$tps" "$admit" "$settle"
    done
    read -r t0 a0 s0 <<<"${med[0]}"
    for v in 1 2; do
      read -r tps admit settle <<<"${med[$v]}"
      awk -v l="${LABELS[$v]}" -v t="$tps" -v a="$admit" -v s="$settle" -v t0="$t0" -v a0="$a0" -v s0="$s0" \
        'BEGIN { printf "  ratio %-22s %9.2fx %9.2fx %9.2fx   (/ transaction)\n", l, t / t0, a / a0, s / s0 }'
    done
    unset figures med
  done
done
