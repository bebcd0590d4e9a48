#!/usr/bin/env bash
# Builds the container image localhost/patchbridge-relay:VERSION (and :latest) from Containerfile with podman, from
# the static binary of scripts/build-static.sh (built when missing; STATIC_BIN names another one). Nothing is
# pulled: the image starts FROM scratch. Then checks what was built without running it (podman cannot run
# containers on every build machine): the binary inside is byte for byte the one given, and the image's user,
# entry point, health check, volume and environment are the recipe's.
#
# The image is not started here; scripts/smoke-static.sh tests the binary it packages.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
need_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
if ! command -v podman >/dev/null; then
  need_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive need_root apt-get install -y -qq podman
fi

bin="${STATIC_BIN:-$CARGO_TARGET_DIR/x86_64-unknown-linux-musl/release/patchbridge-relay}"
[ -x "$bin" ] || bin=$(scripts/build-static.sh | tail -n 1)
version=$("$bin" --version | awk '{print $2}')
image="localhost/patchbridge-relay:$version"

context="$CARGO_TARGET_DIR/container-context"
rm -rf "$context"
mkdir -p "$context/data"
cp "$bin" "$context/patchbridge-relay"
cp relay-server/LICENSE "$context/LICENSE"

podman rmi -f "$image" "localhost/patchbridge-relay:latest" >/dev/null 2>&1 || true
podman build --quiet --format docker --file Containerfile --tag "$image" --tag localhost/patchbridge-relay:latest "$context" >/dev/null
podman image prune -f >/dev/null 2>&1 || true

fail() { echo "build-container: $image: $*" >&2; exit 1; }
inspect() { podman image inspect --format "$1" "$image"; }
[ "$(inspect '{{.Config.User}}')" = "65532:65532" ] || fail "user is $(inspect '{{.Config.User}}'), not 65532:65532"
[ "$(inspect '{{json .Config.Entrypoint}}')" = '["/usr/local/bin/patchbridge-relay"]' ] || fail "entry point $(inspect '{{json .Config.Entrypoint}}')"
grep -q '"/usr/local/bin/patchbridge-relay","healthcheck"' <<<"$(inspect '{{json .Config.Healthcheck}}')" \
  || fail "no health check: $(inspect '{{json .Config.Healthcheck}}')"
grep -q '"/data"' <<<"$(inspect '{{json .Config.Volumes}}')" || fail "no /data volume"
grep -q 'PATCHBRIDGE_BIND=0.0.0.0:8787' <<<"$(inspect '{{json .Config.Env}}')" || fail "PATCHBRIDGE_BIND is not set"

# The binary inside, copied out of a created (never started) container.
box=$(podman create "$image")
trap 'podman rm -f "$box" >/dev/null 2>&1 || true' EXIT
podman cp "$box:/usr/local/bin/patchbridge-relay" "$context/from-image"
cmp -s "$bin" "$context/from-image" || fail "the binary in the image differs from $bin"
echo "build-container: $image ($(podman image inspect --format '{{.Size}}' "$image" | awk '{printf "%.1f MiB", $1/1048576}')): FROM scratch, user 65532, health check on /readyz, volume /data; carries $bin unchanged"
