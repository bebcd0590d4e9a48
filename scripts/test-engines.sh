#!/usr/bin/env bash
# Browser tests in Firefox and WebKit (tests/engines/): the widget's journeys (on the demo page and on the widget
# test page under its strict CSP) in Debian's Firefox ESR (driven by
# puppeteer-core over WebDriver BiDi) and in WebKitGTK's MiniBrowser (driven by selenium-webdriver through
# WebKitWebDriver, under xvfb-run), against the real relay binary (spawned per test file on a free 127.0.0.1 port
# with a fresh SQLite file). `./dev setup` installs the engines; this script only checks they are there.
#
# Builds what it needs like scripts/test-e2e.sh (scripts/lib/browser-suite.sh): npm devDependencies, npm/pkg when missing, the widget, the relay
# (debug). PB_ENGINES=firefox (or webkit) runs one engine; PATCHBRIDGE_RELAY_BIN uses another relay binary.
# Every child process (relays, browsers, drivers, Xvfb) is killed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/browser-suite.sh

missing=()
minibrowser=$(ls /usr/lib/*/webkit2gtk-4.1/MiniBrowser 2>/dev/null | head -n1 || true)
for bin in /usr/bin/firefox-esr /usr/bin/WebKitWebDriver "${minibrowser:-MiniBrowser (package libwebkit2gtk-4.1-0)}" /usr/bin/xvfb-run /usr/bin/xauth; do
  [ -x "$bin" ] || missing+=("$bin")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "test-engines: missing ${missing[*]}; run ./dev setup (Debian: firefox-esr webkit2gtk-driver xvfb xauth)" >&2
  exit 1
fi

prepare_package_and_relay test-engines puppeteer-core selenium-webdriver
echo "==> node --test tests/engines (${PB_ENGINES:-firefox,webkit}; relay: $PATCHBRIDGE_RELAY_BIN)"
run_in_own_group node --test --test-concurrency=1 --test-timeout=180000 tests/engines/
