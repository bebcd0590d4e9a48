#!/usr/bin/env bash
# JavaScript tests of the BUILT package npm/ (@patchbridge/agent): builds it when needed (scripts/build-wasm.sh
# skips an up-to-date build), runs the Node suites (node --test) and the headless Chromium smoke test.
# Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -d node_modules/playwright-core ] \
  || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
scripts/build-wasm.sh
echo "==> node --test tests/node"
node --test --test-concurrency=1 tests/node/
echo "==> headless Chromium smoke test"
node --test tests/browser/
