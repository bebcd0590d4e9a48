#!/usr/bin/env bash
# Runtime benchmark of the built package (prints figures; never fails on timing).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build-wasm.sh
exec node --expose-gc bench/run.mjs "$@"
