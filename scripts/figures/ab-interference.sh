#!/usr/bin/env bash
# `bench ab` beside a CPU neighbour: what its verdicts are worth, and why; see
# scripts/figures/ab-interference.py for the parts and what they print:
#
#   scripts/figures/ab-interference.sh cause [TRIALS]            runs, arms' CPUs and the neighbour's phase
#   scripts/figures/ab-interference.sh figure [TRIALS] [ROWS:PLANTED[:TRIALS]...]   verdicts idle and beside neighbours
#
# THRESHOLD (default 1) and CONDITIONS ('idle;2.5 s, 1 thread') narrow what runs.
set -euo pipefail
exec python3 "$(dirname "$0")/ab-interference.py" "$@"
