#!/usr/bin/env bash
# How well `bench history`'s change points find steps, beside lance-bench's last-4 t-test,
# on synthetic series of known shape (noise CV 2–10 %, steps of 2–20 %, 20–60 results);
# prints the Markdown tables of docs/results.md ("Change points"). Deterministic (fixed
# seeds); a few minutes on a 2-core VM (the detector runs on every prefix of every series).
#
#   scripts/figures/changepoint-accuracy.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
exec cargo run --quiet --release -p bench-core --example changepoint_accuracy
