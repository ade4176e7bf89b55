#!/usr/bin/env bash
# What the findings' patches (docs/findings/patches) cost where nothing fails: `bench ab` of
# the default sweep's continuous 1,000- and 100,000-row cells (inline index on and off), this
# tree's build against lance 14.0.2 as the baseline and the build with every patch applied
# (`scripts/track-record.sh build 14.0.2+fix`) as the candidate, at THRESHOLD % (default 5)
# with BUDGET seconds a cell (default 120). Prints `bench ab`'s table, with each arm's
# requests and bytes per operation and their count verdict. About 5 minutes on a 2-core VM
# once both builds exist.
#
#   FIX=~/.cache/track-record/bench-14.0.2+fix scripts/figures/fix-cost.sh [THRESHOLD] [BUDGET]
#
# BENCH: the baseline (default: this tree's release build).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/figures/ab-default.sh
THRESHOLD=${1:-5}
BUDGET=${2:-120}
BENCH="${BENCH:-${CARGO_TARGET_DIR:-target}/release/bench}"
FIX="${FIX:-$HOME/.cache/track-record/bench-14.0.2+fix}"
[ -x "$FIX" ] || { echo "no patched build at $FIX: scripts/track-record.sh build 14.0.2+fix" >&2; exit 2; }
"$BENCH" worker-info
"$FIX" worker-info
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ab_default "$BENCH" "$FIX" 'cont_inline_*_rows_1000' 'cont_inline_*_rows_100000'
