#!/usr/bin/env bash
# How often `bench ab`'s default rule (run a cell until its interval decides at the
# threshold, looking after every run) gives a false verdict: at the threshold's edge (B
# slower by exactly the threshold, 5 %) and with identical builds, on simulated paired runs
# whose run-to-run spread is what scripts/figures/noise.sh measures (1 % and 3.5 %), with a
# budget of 10 and of 40 runs; the rule's error spent over the looks beside a fixed 95 %
# interval at every look. Prints the Markdown table of docs/results.md ("bench ab's stopping
# rule at the threshold's edge"). Deterministic (fixed seeds); about 2 minutes on a 2-core
# VM, most of it the build.
#
#   scripts/figures/ab-edge.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
exec cargo run --quiet --release -p bench-core --example sequential_edge
