#!/usr/bin/env bash
# Packages the publishable crates as `cargo publish` would (patchbridge-protocol, patchbridge-providers,
# patchbridge-relay): stages the demo site into relay-server/demo-assets/ first, then checks that the relay crate
# carries the page, the widget script and the wasm. `./dev test` runs it without the verify build (seconds);
# VERIFY=1 runs the full `cargo publish --dry-run` instead, which also compiles each packaged crate on its own
# (minutes; run it before publishing).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
crates=(-p patchbridge-protocol -p patchbridge-providers -p patchbridge-relay)

scripts/stage-demo-assets.sh
if [ "${VERIFY:-}" = 1 ]; then
  cargo publish --dry-run --allow-dirty "${crates[@]}"
else
  cargo package --allow-dirty --no-verify "${crates[@]}"
fi

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' relay-server/Cargo.toml | head -n 1)
crate="$CARGO_TARGET_DIR/package/patchbridge-relay-$version.crate"
listing=$(tar -tzf "$crate")
for file in demo-assets/examples/demo/index.html demo-assets/npm/dist/patchbridge-agent.js \
  demo-assets/npm/pkg/patchbridge_agent_bg.wasm LICENSE README.md build.rs migrations/sqlite/0001_conversations.sql; do
  grep -qx "patchbridge-relay-$version/$file" <<<"$listing" || { echo "package-crates: $crate lacks $file" >&2; exit 1; }
done
for name in patchbridge-protocol patchbridge-providers; do
  grep -qx "$name-$version/LICENSE" <<<"$(tar -tzf "$CARGO_TARGET_DIR/package/$name-$version.crate")" \
    || { echo "package-crates: $name lacks its LICENSE" >&2; exit 1; }
done
echo "package-crates: $(ls "$CARGO_TARGET_DIR"/package/patchbridge-{protocol,providers,relay}-"$version".crate | xargs -n1 basename | tr '\n' ' ')carry their LICENSE; the relay crate carries the demo site ($(( $(stat -c %s "$crate") / 1024 )) KiB)"
