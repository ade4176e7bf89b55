#!/usr/bin/env bash
# How much the verdicts of `bench compare` and `bench ab` are worth on this machine; see
# scripts/figures/noise.py for the parts and what they print:
#
#   scripts/figures/noise.sh compare [PAIRS]          `bench compare` of separate runs, identical or not
#   scripts/figures/noise.sh pairs [SIZES...]         `bench ab` per pairing, size and planted slowdown
#   scripts/figures/noise.sh neighbour                `bench ab` beside a periodic CPU neighbour
#   scripts/figures/noise.sh trials [N] [ROWS]        N identical and N planted-5 % `bench ab` runs
#   scripts/figures/noise.sh decide [N] [ROWS]        `bench ab --threshold 5` alone: N identical, N planted-8 %
set -euo pipefail
exec python3 "$(dirname "$0")/noise.py" "$@"
