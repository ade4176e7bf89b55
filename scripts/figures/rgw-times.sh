#!/usr/bin/env bash
# How long Ceph's gateway takes to start and stop here: scripts/rgw-up.sh and
# scripts/rgw-down.sh N times each; prints each time, the medians and the gateway's
# daemons' resident memory once it is up.
#
#   scripts/figures/rgw-times.sh [N]   (default 5)
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-5}
WORK=$(mktemp -d)
trap 'scripts/rgw-down.sh "$WORK/c" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
ups=()
downs=()
for _ in $(seq "$N"); do
  t0=$(date +%s.%N)
  scripts/rgw-up.sh "$WORK/c" > /dev/null
  t1=$(date +%s.%N)
  rss=0
  for f in "$WORK"/c/run/*.pid; do
    kib=$(awk '/VmRSS/ {print $2}' "/proc/$(cat "$f")/status")
    rss=$((rss + kib))
  done
  scripts/rgw-down.sh "$WORK/c"
  t2=$(date +%s.%N)
  ups+=("$(echo "$t1 - $t0" | bc)")
  downs+=("$(echo "$t2 - $t1" | bc)")
done
python3 - "$rss" "${ups[*]}" "${downs[*]}" <<'PY'
import statistics, sys
rss, ups, downs = int(sys.argv[1]), [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
print("up   s: " + " ".join(f"{x:.2f}" for x in ups) + f"  median {statistics.median(ups):.2f}")
print("down s: " + " ".join(f"{x:.2f}" for x in downs) + f"  median {statistics.median(downs):.2f}")
print(f"resident memory of its daemons once up: {rss / 1024:.0f} MiB")
PY
