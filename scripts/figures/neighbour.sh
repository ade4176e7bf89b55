#!/usr/bin/env bash
# A periodic CPU neighbour, as a build or a noisy VM next door: one core busy for BUSY
# seconds, then idle for IDLE seconds, over and over, until killed.
#
#   scripts/figures/neighbour.sh [BUSY] [IDLE]        (defaults: 2.5 2.5)
#
# Used by scripts/figures/noise.sh to measure verdicts beside a neighbour; start it in the
# background and kill it by its pid (`scripts/figures/neighbour.sh & pid=$!; ...; kill $pid`).
set -euo pipefail
BUSY=${1:-2.5}
IDLE=${2:-2.5}
exec python3 - "$BUSY" "$IDLE" <<'PY'
import sys, time
busy, idle = float(sys.argv[1]), float(sys.argv[2])
while True:
    end = time.monotonic() + busy
    x = 0
    while time.monotonic() < end:
        x += 1
    time.sleep(idle)
PY
