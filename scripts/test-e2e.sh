#!/usr/bin/env bash
# End-to-end tests (tests/e2e/): the BUILT npm package (@patchbridge/agent in npm/) in Node and in headless
# Chromium, against the real relay binary (spawned per test file on a free 127.0.0.1 port with a fresh SQLite
# file) and a fake upstream provider speaking real OpenAI Chat Completions / Anthropic Messages SSE.
#
# Builds what it needs (scripts/lib/browser-suite.sh): npm devDependencies, npm/pkg when missing, the widget, and
# the relay (debug build; `cargo build` is a no-op when fresh). Set PATCHBRIDGE_RELAY_BIN to use another relay
# binary. UPDATE_SCREENSHOT=1 also refreshes docs/screenshot.png. E2E_RELAY_LOG=1 shows relay logs.
# Exits non-zero when any test fails; every child process (relays, fake upstreams, Chromium) is killed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/browser-suite.sh

prepare_package_and_relay test-e2e playwright-core
echo "==> node --test tests/e2e (relay: $PATCHBRIDGE_RELAY_BIN)"
run_in_own_group node --test --test-concurrency=1 --test-timeout=90000 tests/e2e/
