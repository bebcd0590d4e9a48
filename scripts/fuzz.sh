#!/usr/bin/env bash
# Fuzzes the relay's parsers with libFuzzer (`cargo +nightly fuzz`; the shipped build stays on stable):
# each provider decoder fed arbitrary byte splits of SSE, the strict request parser over the protocol types,
# the config parser, and the conversation store's JSON. Corpora are seeded from the recorded provider
# streams (relay-server/providers/fixtures), the example configs and the protocol fixtures. Prints, per
# target, the executions run and the crashes found (inputs kept in fuzz/artifacts/<target>/). Not run in CI.
#
# Usage: scripts/fuzz.sh [seconds-per-target] [target...]     (default 60 s each, all targets)
# Env:   JOBS=1 (libFuzzer -jobs; the development machine is shared, keep it at 1)
#        SANITIZER=address (cargo fuzz -s; `none` skips AddressSanitizer for more executions per second: our crates deny
#        `unsafe`, so AddressSanitizer mostly watches dependencies)
#        CARGO_TARGET_DIR (default: fuzz/target)
# Needs: rustup nightly toolchain and `cargo install cargo-fuzz`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_PER_TARGET="${1:-60}"
shift || true
JOBS="${JOBS:-1}"
ALL=(decode_openai_chat decode_openai_responses decode_anthropic_messages protocol_strict relay_config conversation_store_json)
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL[@]}")
cd "$ROOT/fuzz"

seed() { # seed <target> <files...>: copies files into the corpus; decoders get an 8-byte split seed first
  local target="$1"; shift
  mkdir -p "corpus/$target"
  local i=0
  for f in "$@"; do
    [ -f "$f" ] || continue
    i=$((i + 1))
    case "$target" in
      decode_*) { printf '\x2a\x00\x00\x00\x00\x00\x00\x00'; cat "$f"; } > "corpus/$target/seed-$i" ;;
      *) cp "$f" "corpus/$target/seed-$i" ;;
    esac
  done
}
FIX="$ROOT/relay-server/providers/fixtures"
seed decode_openai_chat "$FIX"/openai-chat/*.sse "$FIX"/openai-chat/recorded/*.sse
seed decode_openai_responses "$FIX"/openai-responses/*.sse "$FIX"/openai-responses/recorded/*.sse
seed decode_anthropic_messages "$FIX"/anthropic-messages/*.sse "$FIX"/anthropic-messages/recorded/*.sse
seed relay_config "$ROOT"/examples/relay-config/*.json
seed protocol_strict "$ROOT"/fuzz/seeds/protocol/*.json
seed conversation_store_json "$ROOT"/fuzz/seeds/protocol/*.json

SANITIZER="${SANITIZER:-address}"
cargo +nightly fuzz build -O -s "$SANITIZER"

printf '%-28s %12s %8s %s\n' target executions crashes artifacts
for target in "${TARGETS[@]}"; do
  mkdir -p "artifacts/$target"
  log="$(mktemp)"
  before=$(ls "artifacts/$target" | wc -l)
  set +e
  cargo +nightly fuzz run -O -s "$SANITIZER" "$target" "corpus/$target" -- \
    -max_total_time="$SECONDS_PER_TARGET" -jobs="$JOBS" -workers="$JOBS" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="artifacts/$target/" >"$log" 2>&1
  set -e
  # With -jobs the output goes to fuzz-N.log files; collect from all of them.
  cat fuzz-*.log >>"$log" 2>/dev/null || true
  rm -f fuzz-*.log
  execs=$(grep -h 'stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
  after=$(ls "artifacts/$target" | wc -l)
  printf '%-28s %12s %8s %s\n' "$target" "$execs" "$((after - before))" "fuzz/artifacts/$target/"
  rm -f "$log"
done
