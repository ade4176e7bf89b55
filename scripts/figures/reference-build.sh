#!/usr/bin/env bash
# Builds the reference harness -- `examples/manifest_bench.rs` of lance-namespace-impls, as
# cargo fetched it into its registry -- against exactly the lance bench is built with, and
# prints the binary's path. Sourced or run by scripts/figures/fidelity.sh.
#
# The reference is compiled where cargo keeps it (nothing of it is copied here): a scratch
# package in a temporary folder names that file as its binary, takes this workspace's
# Cargo.lock and release profile and depends on bench-lance, so every crate resolves to the
# same version with the same features and the build reuses the workspace's compiled lance
# in $CARGO_TARGET_DIR (a cold build would take as long as lance's own).
#
#   scripts/figures/reference-build.sh        # prints .../release/manifest_bench
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$repo/$target" ;; esac
version="$(awk '/^name = "lance-namespace-impls"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' "$repo/Cargo.lock")"
(cd "$repo" && cargo fetch --quiet)
src=""
for d in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"lance-namespace-impls-$version"; do
  [ -f "$d/examples/manifest_bench.rs" ] && src="$d/examples/manifest_bench.rs"
done
[ -n "$src" ] || { echo "reference-build.sh: no examples/manifest_bench.rs in cargo's registry for lance-namespace-impls $version" >&2; exit 1; }

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/src"
cp "$repo/Cargo.lock" "$scratch/Cargo.lock"
# The reference's own imports, each with bench-lance's requirement and features, so that
# feature unification gives lance what it has in bench's build.
deps="$(sed -n '/^\[dependencies\]/,/^\[/p' "$repo/crates/bench-lance/Cargo.toml" \
  | grep -E '^(lance|lance-core|lance-io|lance-namespace|lance-namespace-impls|arrow|arrow-ipc|bytes|serde|serde_json|tokio) = ')"
cat > "$scratch/Cargo.toml" <<TOML
[package]
name = "reference-harness"
version = "0.0.0"
edition = "2024"
publish = false

[[bin]]
name = "manifest_bench"
path = "$src"

[dependencies]
bench-lance = { path = "$repo/crates/bench-lance" }
$deps

[workspace]

$(sed -n '/^\[profile\.release\]/,$p' "$repo/Cargo.toml")
TOML
# PROTOC as the workspace's .cargo/config.toml gives it, so that lance's build scripts
# see what they saw there and are not run again.
export PROTOC="${PROTOC:-$repo/.cargo/protoc}"
(cd "$scratch" && CARGO_TARGET_DIR="$target" cargo build --release --quiet --bin manifest_bench >&2)
echo "$target/release/manifest_bench"
