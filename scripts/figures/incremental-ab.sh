#!/usr/bin/env bash
# Whether building bench-lance incrementally (Cargo.toml's [profile.release.package.bench-lance])
# changes what bench measures: this tree built twice, bench-lance whole (incremental off,
# through `--config`) and incrementally (as Cargo.toml has it), then `bench ab` of the
# default sweep's continuous 1,000-row cells (inline index on and off), the whole build as
# the baseline and the incremental one as the candidate, at THRESHOLD % (default 2) with
# BUDGET seconds a cell (default 120). Prints `bench ab`'s verdicts. About 10 minutes on a
# 2-core VM (two builds of bench-lance, then the pairs).
#
#   scripts/figures/incremental-ab.sh [THRESHOLD] [BUDGET]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/figures/ab-default.sh
THRESHOLD=${1:-2}
BUDGET=${2:-120}
target="${CARGO_TARGET_DIR:-target}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cargo build --release --quiet --bin bench --config 'profile.release.package.bench-lance.incremental=false'
cp "$target/release/bench" "$WORK/bench-whole"
cargo build --release --quiet --bin bench
cp "$target/release/bench" "$WORK/bench-incremental"
ab_default "$WORK/bench-whole" "$WORK/bench-incremental" 'cont_inline_*_rows_1000'
