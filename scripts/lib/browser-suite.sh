# Shared by scripts/test-e2e.sh and scripts/test-engines.sh (sourced, not run): the build steps every suite that
# drives the built package against the relay binary needs, and a runner that can end everything a suite spawned.
# Expects to be sourced from the repository root with `set -euo pipefail` in effect.

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
export PATH="$HOME/.cargo/bin:$PATH"

# prepare_package_and_relay SUITE NPM_PACKAGE...: npm devDependencies (when a named package is missing or the
# lockfile changed), npm/pkg when it was never built, the widget's bundles (about a second: always rebuilt from
# widget/src), and the debug relay unless PATCHBRIDGE_RELAY_BIN names one (exported for the tests).
prepare_package_and_relay() {
  local suite=$1; shift
  local need_ci=0 package
  for package in "$@"; do [ -d "node_modules/$package" ] || need_ci=1; done
  if [ "$need_ci" = 1 ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
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
  [ -x "$PATCHBRIDGE_RELAY_BIN" ] || { echo "$suite: relay binary $PATCHBRIDGE_RELAY_BIN is missing" >&2; exit 1; }
}

# run_in_own_group COMMAND...: runs the test runner in a process group of its own, so that the EXIT trap can end it
# and everything it spawned (relays, fake upstreams, browsers, drivers, Xvfb), even when a test hangs or the
# script is interrupted. Returns the runner's exit status.
_suite_runner=
_suite_cleanup() {
  if [ -n "$_suite_runner" ] && kill -0 "$_suite_runner" 2>/dev/null; then
    kill -TERM -- "-$_suite_runner" 2>/dev/null || true
    sleep 1
    kill -KILL -- "-$_suite_runner" 2>/dev/null || true
  fi
}
run_in_own_group() {
  trap _suite_cleanup EXIT
  trap 'exit 130' INT TERM
  setsid "$@" &
  _suite_runner=$!
  local status=0
  wait "$_suite_runner" || status=$?
  _suite_runner=
  return "$status"
}
