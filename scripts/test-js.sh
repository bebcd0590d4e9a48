#!/usr/bin/env bash
# JavaScript tests of the BUILT package npm/ (@patchbridge/agent): builds it when needed (scripts/build-wasm.sh
# skips an up-to-date build; the widget's two bundles always rebuild, in about a second), checks the first-load
# size ceilings, runs the build scripts' tests (scripts/tests/), the Node suites (node --test), the headless
# Chromium smoke test, and the consumer test (tests/consumer/: the packed tarball in fresh projects, checked as
# README.md tells a user; it needs the relay binary, built here in debug unless PATCHBRIDGE_RELAY_BIN names one).
# Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
export PATH="$HOME/.cargo/bin:$PATH"
if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -d node_modules/playwright-core ] \
  || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
scripts/build-wasm.sh
node widget/build.mjs
echo "==> size ceilings of the first-load files (scripts/size-ceiling.json)"
node scripts/check-size.mjs
echo "==> node --test scripts/tests (the wasm post-processing steps on fixture modules, the size check)"
node --test scripts/tests/
echo "==> node --test tests/node"
node --test --test-concurrency=1 tests/node/
echo "==> headless Chromium smoke test"
node --test tests/browser/
if [ -z "${PATCHBRIDGE_RELAY_BIN:-}" ]; then
  echo "==> building the relay (debug) for the consumer test"
  cargo build -p patchbridge-relay
  export PATCHBRIDGE_RELAY_BIN="$CARGO_TARGET_DIR/debug/patchbridge-relay"
fi
echo "==> consumer test: the packed package in fresh projects (relay: $PATCHBRIDGE_RELAY_BIN)"
node --test --test-timeout=600000 tests/consumer/
