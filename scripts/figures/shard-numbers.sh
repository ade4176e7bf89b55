#!/usr/bin/env bash
# Does sharding change a cell's numbers? The same small panel run whole and as 2 shards
# merged (`--shard 1/2`, `--shard 2/2`, `bench merge`), one after the other on this machine,
# ROUNDS times alternately (whole, sharded, whole, sharded, ...); prints per cell the median
# throughput and p50 of each way, their spread (min–max over the rounds) and the ratio
# sharded / whole of the medians.
#
#   scripts/figures/shard-numbers.sh [ROUNDS]        (default 3; about 1 minute a round)
#
# Needs a release build (cargo build --release); uses $BENCH, else the build in
# $CARGO_TARGET_DIR or target/.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
BENCH="${BENCH:-${CARGO_TARGET_DIR:-target}/release/bench}"
[ -x "$BENCH" ] || { echo "build first: cargo build --release" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cat > "$WORK/panel.toml" <<EOF
name = "shards"
[matrix]
sizes = [1000, 10000]
inline = [true, false]
[continuous]
operations = 40
[concurrent]
concurrency = [2]
duration_secs = 4
EOF
for r in $(seq 1 "$ROUNDS"); do
  "$BENCH" run "$WORK/panel.toml" --out "$WORK/whole-$r" --root "$WORK/store" \
    --progress lines >/dev/null 2>&1
  for k in 1 2; do
    "$BENCH" run "$WORK/panel.toml" --shard "$k/2" --out "$WORK/shard-$r-$k" \
      --root "$WORK/store" --progress lines >/dev/null 2>&1
  done
  "$BENCH" merge "$WORK/merged-$r" "$WORK/shard-$r-1" "$WORK/shard-$r-2" >/dev/null
done
python3 - "$WORK" "$ROUNDS" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def load(kind):
    by = {}
    for r in range(1, rounds + 1):
        for line in open(f"{work}/{kind}-{r}/results.jsonl"):
            rec = json.loads(line)
            by.setdefault(rec["bench_tag"], []).append(rec)
    return by
whole, sharded = load("whole"), load("merged")
print(f"{rounds} rounds, whole and sharded (2 shards, merged) alternately; medians over the rounds")
print(f"{'cell':<34} {'whole ops/s':>16} {'sharded ops/s':>16} {'ratio':>6} {'p50 ratio':>9}")
ratios = []
for tag in whole:
    w = [x["throughput_ops_per_sec"] for x in whole[tag]]
    s = [x["throughput_ops_per_sec"] for x in sharded[tag]]
    wp = statistics.median(x["p50_latency_ms"] for x in whole[tag])
    sp = statistics.median(x["p50_latency_ms"] for x in sharded[tag])
    ratio = statistics.median(s) / statistics.median(w)
    ratios.append(ratio)
    span = lambda v: f"{statistics.median(v):.1f} ({min(v):.0f}–{max(v):.0f})"
    print(f"{tag:<34} {span(w):>16} {span(s):>16} {ratio:>6.3f} {sp / wp:>9.3f}")
print(f"median ratio sharded/whole over the cells: {statistics.median(ratios):.3f} "
      f"(range {min(ratios):.3f}–{max(ratios):.3f}); (min–max) is the spread over the rounds")
PY
