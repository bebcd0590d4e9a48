#!/usr/bin/env bash
# Builds the npm package's WebAssembly part into npm/pkg/ (git-ignored):
#   cargo (wasm32-unknown-unknown, profile wasm-release: opt-level z + LTO) -> wasm-bindgen --target web (the CLI
#   version must equal the wasm-bindgen crate's: pinned once, in controller-wasm/Cargo.toml, read from Cargo.lock)
#   -> scripts/wasm-dead-float-display.mjs (std's float formatting, linked by an arm of serde's error text that is
#   never taken, is dropped when the binary shows nothing else reaches it) -> wasm-opt's dead-code removal, names
#   kept -> scripts/wasm-dead-panic-formatting.mjs (the panic message formatting, read only by a panic hook the
#   runtime never installs, is dropped when the binary shows a panic can only trap) -> wasm-opt -Oz from the npm
#   package `binaryen` (never Debian's, whose version drifts); the glue and npm/adapter.js are minified beside it
#   (scripts/minify-js.mjs), and the glue's imports get short names (scripts/wasm-short-import-names.mjs).
#   Each wasm-dead-* step asserts the versions it reasons about and stops the build when it cannot show its change
#   is safe (their fixtures: scripts/tests/); the finished wasm must stay under its gzip ceiling
#   (scripts/size-ceiling.json, scripts/check-size.mjs).
# The build is reproducible and names no folder of the machine that built it: rustc remaps the cargo home, the
# rustup home, the checkout and the target directory to fixed names (panic locations of dependencies carry source
# paths into the wasm), so two builds of one commit on any machine give the same bytes.
# Installs the missing pieces (wasm target, wasm-bindgen-cli, npm devDependencies) itself. Skips the work when
# npm/pkg is newer than every Rust source it depends on, unless FORCE=1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WASM_BINDGEN_VERSION=$(scripts/wasm-bindgen-version.sh)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
export PATH="$HOME/.cargo/bin:$PATH"
OUT=npm/pkg
STAMP=$OUT/.build-stamp

if [ "${FORCE:-0}" != 1 ] && [ -f "$STAMP" ] && [ -f "$OUT/patchbridge_agent_bg.wasm" ] \
  && [ -z "$(find controller-wasm protocol Cargo.toml Cargo.lock scripts/build-wasm.sh scripts/minify-js.mjs scripts/wasm-licenses.mjs scripts/wasm-dead-float-display.mjs scripts/wasm-dead-panic-formatting.mjs scripts/wasm-module-text.mjs scripts/check-size.mjs scripts/size-ceiling.json rust-toolchain.toml scripts/wasm-short-import-names.mjs npm/adapter.js npm/adapter -newer "$STAMP" -type f -print -quit)" ]; then
  echo "build-wasm: $OUT is up to date"
  exit 0
fi

rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  echo "build-wasm: installing wasm-bindgen-cli $WASM_BINDGEN_VERSION"
  cargo install wasm-bindgen-cli --version "=$WASM_BINDGEN_VERSION" --locked \
    || cargo install wasm-bindgen-cli --version "=$WASM_BINDGEN_VERSION"
fi
if [ ! -x node_modules/.bin/wasm-opt ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi

# CARGO_ENCODED_RUSTFLAGS (one flag per \x1f-separated field, so paths may hold spaces) applies to the wasm32
# units only, because --target is given: build scripts and the native workspace keep their own cache. Later
# prefixes win, so the target directory (often inside the checkout) comes after the checkout.
remap=()
for pair in "${CARGO_HOME:-$HOME/.cargo}=/cargo" "${RUSTUP_HOME:-$HOME/.rustup}=/rustup" "$ROOT=/patchbridge" \
  "$(realpath -m "$CARGO_TARGET_DIR")=/target"; do
  remap+=("--remap-path-prefix=$pair")
done
# A RUSTFLAGS of the caller is kept (CARGO_ENCODED_RUSTFLAGS would otherwise replace it).
read -r -a caller_flags <<< "${RUSTFLAGS:-}"
CARGO_ENCODED_RUSTFLAGS=$(IFS=$'\x1f'; echo "${caller_flags[*]}${caller_flags[*]:+$'\x1f'}${remap[*]}") \
  cargo build --profile wasm-release --target wasm32-unknown-unknown -p patchbridge-agent
rm -rf "$OUT.tmp" && mkdir -p "$OUT.tmp"
# The licence notices of the crates compiled into the wasm ship beside it.
node scripts/wasm-licenses.mjs "$OUT.tmp/THIRD_PARTY_LICENSES.md"
# The declarations wasm-bindgen writes (pkg/*.d.ts, not shipped) let `tsc -p npm` type-check index.js against
# the glue. The function names are kept (--keep-debug) for scripts/wasm-dead-float-display.mjs and
# scripts/wasm-dead-panic-formatting.mjs; wasm-opt strips them below.
wasm-bindgen --keep-debug --target web --out-dir "$OUT.tmp" \
  "$CARGO_TARGET_DIR/wasm32-unknown-unknown/wasm-release/patchbridge_agent.wasm"
# wasm-bindgen (--target web) gives every function the wasm imports directly from a JS module its own
# `import * as importN` and its own key in the import object, so "../adapter.js" repeats there and bundlers warn
# ("Duplicate key … in object literal"). Every such namespace is the same module object, so one key per module
# is the same import object; anything unexpected in the glue stops the build instead.
node -e '
const fs = require("node:fs");
const file = process.argv[1];
let text = fs.readFileSync(file, "utf8");
const first = new Map();
const merged = new Set();
text = text.replace(/^import \* as (import\d+) from "([^"]+)";?\n/gm, (line, alias, module) => {
  if (!first.has(module)) { first.set(module, alias); return line; }
  merged.add(alias);
  return "";
});
text = text.replace(/^\s*"[^"]+": (import\d+),\n/gm, (line, alias) => (merged.has(alias) ? "" : line));
for (const alias of merged) {
  if (new RegExp(`\\b${alias}\\b`).test(text)) throw new Error(`glue still uses ${alias}`);
}
const keys = [...text.matchAll(/^\s*("[^"]+"): import\d+,$/gm)].map((m) => m[1]);
if (new Set(keys).size !== keys.length) throw new Error(`duplicate import-object keys remain: ${keys}`);
// The classes get their public members from npm/adapter.js as the glue loads (see defineMembers there).
for (const name of ["AgentController", "DefaultAgentRuntime", "AgentExecution"]) {
  if (!new RegExp(`^(export )?class ${name} `, "m").test(text)) throw new Error(`glue has no class ${name}`);
}
text += "import { defineMembers as __pbDefineMembers } from \"./adapter.js\";\n"
  + "__pbDefineMembers(AgentController, DefaultAgentRuntime, AgentExecution);\n";
fs.writeFileSync(file, text);
' "$OUT.tmp/patchbridge_agent.js"
# The JS the runtime loads ships minified (pkg/patchbridge_agent.js, pkg/adapter.js), without source maps
# (npm/README.md, "What is in the package", says why).
node scripts/minify-js.mjs "$OUT.tmp"
# wasm-bindgen output uses bulk memory / sign-ext / nontrapping conversions when rustc emits them; enable the
# features every supported engine (Node 20, evergreen browsers) has so wasm-opt keeps them.
FEATURES=(--enable-bulk-memory --enable-sign-ext --enable-nontrapping-float-to-int --enable-mutable-globals
  --enable-reference-types --enable-multivalue)
node scripts/wasm-dead-float-display.mjs "$OUT.tmp/patchbridge_agent_bg.wasm" "$OUT.tmp/patchbridge_agent_bg.wasm"
# What the float step made dead goes before the panic step reads the module (names kept, -g): dead std code (the
# float formatting's own tables) would otherwise hold numbers the panic step must count as addresses.
node_modules/.bin/wasm-opt -g --remove-unused-module-elements "${FEATURES[@]}" \
  -o "$OUT.tmp/patchbridge_agent_bg.wasm" "$OUT.tmp/patchbridge_agent_bg.wasm"
node scripts/wasm-dead-panic-formatting.mjs "$OUT.tmp/patchbridge_agent_bg.wasm" "$OUT.tmp/patchbridge_agent_bg.wasm"
node_modules/.bin/wasm-opt -Oz --strip-debug --strip-producers "${FEATURES[@]}" \
  -o "$OUT.tmp/patchbridge_agent_bg.wasm" "$OUT.tmp/patchbridge_agent_bg.wasm"
# The glue's ~75 imports get short names in the wasm and the glue alike (their `__wbg_…_<hash>` names do not
# compress).
node scripts/wasm-short-import-names.mjs "$OUT.tmp"
rm -rf "$OUT" && mv "$OUT.tmp" "$OUT"
touch "$STAMP"
# The builder's folders must not reach the package (the remapping above is what keeps them out).
for dir in "$ROOT" "${CARGO_HOME:-$HOME/.cargo}" "$HOME/"; do
  if grep -rqaF "$dir" "$OUT"; then
    echo "build-wasm: $OUT names the build machine's folder $dir:" >&2
    grep -raoF "$dir" "$OUT" | sort | uniq -c >&2
    exit 1
  fi
done
raw=$(stat -c %s "$OUT/patchbridge_agent_bg.wasm")
gz=$(gzip -9 -c "$OUT/patchbridge_agent_bg.wasm" | wc -c)
echo "build-wasm: $OUT/patchbridge_agent_bg.wasm $raw bytes ($gz gzip)"
# The size ceiling (scripts/size-ceiling.json): a wasm grown past it stops the build (and the next run builds again).
node scripts/check-size.mjs wasm || { rm -f "$STAMP"; exit 1; }
