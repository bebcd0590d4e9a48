#!/usr/bin/env bash
# Builds the relay as one static Linux binary (x86_64-unknown-linux-musl: musl libc linked in, rustls for TLS,
# SQLite bundled; no shared library is loaded at run time), with the demo site embedded, and checks that it is
# static. Prints its path on the last line: $CARGO_TARGET_DIR/x86_64-unknown-linux-musl/release/patchbridge-relay.
#
# Needs the Rust musl target and musl-gcc (ring and SQLite compile C): installs them when missing (rustup; apt
# package musl-tools). Builds the npm package's browser files first when npm/dist is missing, so the binary
# carries the demo page (relay-server/build.rs embeds npm/dist as it is).
#
# 11 CPU-minutes from a cold cache (every dependency is compiled again for the musl target): about 6-7 minutes on
# 2 idle cores.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
export PATH="$HOME/.cargo/bin:$PATH"
TARGET=x86_64-unknown-linux-musl

need_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
rustup target list --installed | grep -qx "$TARGET" || rustup target add "$TARGET"
if ! command -v musl-gcc >/dev/null; then
  need_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive need_root apt-get install -y -qq musl-tools
fi
if [ ! -f npm/dist/patchbridge-agent.js ] || [ ! -f npm/dist/patchbridge_agent_bg.wasm ]; then
  scripts/build-wasm.sh
  node widget/build.mjs
fi

# The distributed binary carries no symbol table (about a third of its size); panics still name their location.
CC_x86_64_unknown_linux_musl=musl-gcc CARGO_PROFILE_RELEASE_STRIP=symbols \
  cargo build --release --locked --target "$TARGET" -p patchbridge-relay
bin="$CARGO_TARGET_DIR/$TARGET/release/patchbridge-relay"

# Static: no program interpreter (ld.so) and no needed shared library in its ELF headers.
if readelf -lW "$bin" | grep -q 'INTERP'; then
  echo "build-static: $bin asks for a program interpreter (not static)" >&2; exit 1
fi
if readelf -dW "$bin" | grep -q 'NEEDED'; then
  echo "build-static: $bin needs shared libraries: $(readelf -dW "$bin" | grep NEEDED)" >&2; exit 1
fi
echo "build-static: $("$bin" --version), $(( $(stat -c %s "$bin") / 1024 )) KiB, static ($(readelf -hW "$bin" | awk -F: '/Type:/ {gsub(/^ +/, "", $2); print $2}'))" >&2
echo "$bin"
