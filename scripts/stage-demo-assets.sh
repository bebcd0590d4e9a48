#!/usr/bin/env bash
# Copies the demo site that `patchbridge-relay demo` embeds into relay-server/demo-assets/ (git-ignored), so that
# `cargo package` / `cargo publish` of patchbridge-relay carries it: the crate, unpacked by
# `cargo install patchbridge-relay`, has no repository around it to take the files from. Builds the npm package's
# browser files first, so what is staged is this commit's (scripts/build-wasm.sh skips an up-to-date wasm).
#
#   relay-server/demo-assets/examples/demo/*   the demo page (examples/demo/)
#   relay-server/demo-assets/npm/dist/*        the static widget script (npm/dist/, no source maps)
#   relay-server/demo-assets/npm/pkg/*         the wasm it loads from ../pkg/ and the wasm's licence notices
#
# A build inside the repository never reads demo-assets/ (relay-server/build.rs takes npm/dist directly), so
# a stale staging cannot reach a binary built here; only packaging uses it.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build-wasm.sh
node widget/build.mjs

out=relay-server/demo-assets
rm -rf "$out/examples" "$out/npm"
mkdir -p "$out/examples/demo" "$out/npm/dist" "$out/npm/pkg"
cp examples/demo/* "$out/examples/demo/"
find npm/dist -maxdepth 1 -type f ! -name '*.map' ! -name '.*' -exec cp {} "$out/npm/dist/" \;
cp npm/pkg/patchbridge_agent_bg.wasm npm/pkg/THIRD_PARTY_LICENSES.md "$out/npm/pkg/"
echo "stage-demo-assets: $(find "$out" -type f ! -name .gitignore | wc -l) files, $(du -sk "$out" | cut -f1) KiB in $out"
