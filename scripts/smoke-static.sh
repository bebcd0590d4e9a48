#!/usr/bin/env bash
# Smoke test of a relay binary the way a person who has only that file runs it (CI runs it on the static
# binary that the container image packages): `patchbridge-relay demo --port 0` in an empty temporary folder, with
# no configuration and no PATCHBRIDGE_* variable. Passes when /readyz answers 200 (asked by the binary's own
# `healthcheck`, as the image's HEALTHCHECK does), `/` leads to the demo page, the page and its wasm are served
# from the binary, and the SQLite file is in ./patchbridge-data. Then SIGTERM must end it with exit code 0.
#
#   scripts/smoke-static.sh [BINARY]   (default: the musl build of scripts/build-static.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-${CARGO_TARGET_DIR:-$PWD/target}/x86_64-unknown-linux-musl/release/patchbridge-relay}"
bin=$(realpath "$bin")
[ -x "$bin" ] || { echo "smoke-static: no binary at $bin (scripts/build-static.sh builds it)" >&2; exit 1; }

dir=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -rf "$dir" "$dir.out" "$dir.err"
}
trap cleanup EXIT
fail() { echo "smoke-static: $*" >&2; echo "--- relay stdout:" >&2; cat "$dir.out" >&2 || true; echo "--- relay stderr:" >&2; cat "$dir.err" >&2 || true; exit 1; }

# Only what a fresh shell would have: no PATCHBRIDGE_* from the caller.
(cd "$dir" && exec env -i PATH=/usr/bin:/bin PATCHBRIDGE_LOG=warn "$bin" demo --port 0 >"$dir.out" 2>"$dir.err") &
pid=$!
for _ in $(seq 100); do grep -q '^open http' "$dir.out" 2>/dev/null && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
grep -q '^open http' "$dir.out" || fail "the demo did not start, or started without its page"
url=$(sed -n 's/^patchbridge-relay listening on //p' "$dir.out")

"$bin" healthcheck --url "$url/readyz" >/dev/null || fail "/readyz did not answer 200"
[ "$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "$url/")" = "307 $url/examples/demo/" ] || fail "/ does not lead to the demo page"
page=$(curl -sf "$url/examples/demo/") || fail "the demo page is not served"
grep -q '<patchbridge-agent' <<<"$page" || fail "the demo page has no <patchbridge-agent>"
[ "$(curl -s -o /dev/null -w '%{http_code} %{content_type}' "$url/npm/pkg/patchbridge_agent_bg.wasm")" = "200 application/wasm" ] \
  || fail "the wasm is not served"
[ -f "$dir/patchbridge-data/relay.sqlite3" ] || fail "no ./patchbridge-data/relay.sqlite3 in the folder it was started from"

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
[ "$status" = 0 ] || fail "SIGTERM ended it with exit code $status"
echo "smoke-static: $bin passed (demo from an empty folder: /readyz 200, page and wasm served, SQLite in ./patchbridge-data, clean SIGTERM)"
