#!/usr/bin/env bash
# Browser tests in Firefox and WebKit (tests/engines/): the demo page's journeys in Debian's Firefox ESR (driven by
# puppeteer-core over WebDriver BiDi) and in WebKitGTK's MiniBrowser (driven by selenium-webdriver through
# WebKitWebDriver, under xvfb-run), against the real relay binary (spawned per test file on a free 127.0.0.1 port
# with a fresh SQLite file). `./dev setup` installs the engines; this script only checks they are there.
#
# Builds what it needs like scripts/test-e2e.sh: npm devDependencies, npm/pkg when missing, the widget, the relay
# (debug). PB_ENGINES=firefox (or webkit) runs one engine; PATCHBRIDGE_RELAY_BIN uses another relay binary.
# Every child process (relays, browsers, drivers, Xvfb) is killed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
export PATH="$HOME/.cargo/bin:$PATH"

missing=()
minibrowser=$(ls /usr/lib/*/webkit2gtk-4.1/MiniBrowser 2>/dev/null | head -n1 || true)
for bin in /usr/bin/firefox-esr /usr/bin/WebKitWebDriver "${minibrowser:-MiniBrowser (package libwebkit2gtk-4.1-0)}" /usr/bin/xvfb-run /usr/bin/xauth; do
  [ -x "$bin" ] || missing+=("$bin")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "test-engines: missing ${missing[*]}; run ./dev setup (Debian: firefox-esr webkit2gtk-driver xvfb xauth)" >&2
  exit 1
fi

if [ ! -d node_modules/puppeteer-core ] || [ ! -d node_modules/selenium-webdriver ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
if [ ! -f npm/pkg/patchbridge_agent_bg.wasm ] || [ ! -f npm/pkg/patchbridge_agent.js ]; then
  scripts/build-wasm.sh
fi
node widget/build.mjs
if [ -z "${PATCHBRIDGE_RELAY_BIN:-}" ]; then
  echo "==> building the relay (debug)"
  cargo build -p patchbridge-relay
  export PATCHBRIDGE_RELAY_BIN="$CARGO_TARGET_DIR/debug/patchbridge-relay"
fi
[ -x "$PATCHBRIDGE_RELAY_BIN" ] || { echo "test-engines: relay binary $PATCHBRIDGE_RELAY_BIN is missing" >&2; exit 1; }

# The runner gets its own process group so that the trap can end it and everything it spawned (the driver layer
# puts each WebKitWebDriver under xvfb-run in a group of its own and kills it on exit too).
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

echo "==> node --test tests/engines (${PB_ENGINES:-firefox,webkit}; relay: $PATCHBRIDGE_RELAY_BIN)"
setsid node --test --test-concurrency=1 --test-timeout=180000 tests/engines/ &
runner=$!
status=0
wait "$runner" || status=$?
runner=
exit "$status"
