#!/usr/bin/env bash
# The memory a kept history costs beside its log, against the number of operations: for
# each size, a fresh process (crates/bench-core/examples/history_memory.rs) builds a log of
# that many operations, resets its peak RSS, writes the history one way, and prints the
# peak over what it held before writing (the log, mostly: "process"):
# - stream:  as a run writes it once it has ended (line by line, `history::lines`);
# - journal: as a run writes it while it goes (`history::journal`, one operation at a time);
# - text:    the whole file built in memory first (what a history cost before it streamed).
# REPS runs of each; prints the median, min and max in MiB, the file's size, and the ratio
# of the largest size's extra to the smallest's.
#
#   scripts/figures/history-memory.sh [REPS] [SIZES...]    (defaults: 3, 4500 9000 18000 36000)
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${1:-3}
shift || true
if [ $# -gt 0 ]; then SIZES=("$@"); else SIZES=(4500 9000 18000 36000); fi
target="${CARGO_TARGET_DIR:-target}"
cargo build --quiet --release -p bench-core --example history_memory
exe="$target/release/examples/history_memory"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for n in "${SIZES[@]}"; do
  for mode in stream journal text; do
    for _ in $(seq "$REPS"); do
      "$exe" "$n" "$mode" | awk -v m="$mode" '{v[$1]=$2} END {print m, v["operations"], v["bytes"], v["extra_kib"], v["held_kib"]}'
    done
  done
done >"$WORK/runs"
python3 - "$WORK/runs" <<'PY'
import statistics, sys
from collections import defaultdict
runs = defaultdict(list)
size = {}
held = {}
for line in open(sys.argv[1]):
    mode, ops, nbytes, extra, held_kib = line.split()
    runs[(mode, int(ops))].append(int(extra) / 1024)
    size[int(ops)] = int(nbytes)
    held[int(ops)] = int(held_kib) / 1024
ops = sorted(size)
print("operations  history.jsonl  process  extra peak MiB, median (min-max) of %d" % len(next(iter(runs.values()))))
print("%10s %12s %8s  %-22s %-22s %-22s" % ("", "MiB", "MiB", "stream", "journal", "text"))
for n in ops:
    cells = []
    for mode in ("stream", "journal", "text"):
        x = runs[(mode, n)]
        cells.append("%.1f (%.1f-%.1f)" % (statistics.median(x), min(x), max(x)))
    print("%10d %12.1f %8.1f  %-22s %-22s %-22s" % (n, size[n] / 2**20, held[n], *cells))
lo, hi = ops[0], ops[-1]
for mode in ("stream", "journal", "text"):
    a, b = statistics.median(runs[(mode, lo)]), statistics.median(runs[(mode, hi)])
    print("%-8s extra at %d operations / at %d: %s" % (mode, hi, lo, "%.2f" % (b / a) if a > 0 else "n/a (%.1f MiB / %.1f MiB)" % (b, a)))
PY
