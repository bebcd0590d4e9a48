#!/usr/bin/env bash
# End-to-end tests (tests/e2e/): the BUILT npm package (@patchbridge/agent in npm/) in Node and in headless
# Chromium, against the real relay binary (spawned per test file on a free 127.0.0.1 port with a fresh SQLite
# file) and a fake upstream provider speaking real OpenAI Chat Completions / Anthropic Messages SSE.
#
# Builds what it needs: npm devDependencies (playwright-core), npm/pkg via scripts/build-wasm.sh when missing, the
# widget (node widget/build.mjs),
# and the relay (debug build; `cargo build` is a no-op when fresh). Set PATCHBRIDGE_RELAY_BIN to use another
# relay binary. UPDATE_SCREENSHOT=1 also refreshes docs/screenshot.png. E2E_RELAY_LOG=1 shows relay logs.
# Exits non-zero when any test fails; every child process (relays, fake upstreams, Chromium) is killed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
export PATH="$HOME/.cargo/bin:$PATH"

if [ ! -d node_modules/playwright-core ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
if [ ! -f npm/pkg/patchbridge_agent_bg.wasm ] || [ ! -f npm/pkg/patchbridge_agent.js ]; then
  scripts/build-wasm.sh
fi
# The widget's two builds (npm/widget.js, npm/dist/) take about a second: always rebuild them from widget/src.
node widget/build.mjs
if [ -z "${PATCHBRIDGE_RELAY_BIN:-}" ]; then
  echo "==> building the relay (debug)"
  cargo build -p patchbridge-relay
  export PATCHBRIDGE_RELAY_BIN="$CARGO_TARGET_DIR/debug/patchbridge-relay"
fi
[ -x "$PATCHBRIDGE_RELAY_BIN" ] || { echo "test-e2e: relay binary $PATCHBRIDGE_RELAY_BIN is missing" >&2; exit 1; }

# The test runner gets its own process group so that the trap can end it and everything it spawned, even when
# a test hangs or this script is interrupted.
runner=
cleanup() {
  if [ -n "$runner" ] && kill -0 "$runner" 2>/dev/null; then
    kill -TERM -- "-$runner" 2>/dev/null || true
    sleep 1
    kill -KILL -- "-$runner" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "==> node --test tests/e2e (relay: $PATCHBRIDGE_RELAY_BIN)"
setsid node --test --test-concurrency=1 --test-timeout=90000 tests/e2e/ &
runner=$!
status=0
wait "$runner" || status=$?
runner=
exit "$status"
