#!/usr/bin/env bash
# Prints the wasm-bindgen version the build needs: the crate is pinned once, with `=`, in
# controller-wasm/Cargo.toml, and the CLI must be the same version (its glue and the crate's custom sections must
# match), so every script reads it from Cargo.lock instead of writing it down again.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)
[ -n "$version" ] || { echo "no wasm-bindgen in Cargo.lock" >&2; exit 1; }
echo "$version"
