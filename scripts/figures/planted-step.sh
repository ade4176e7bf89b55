#!/usr/bin/env bash
# A real series with a planted slowdown: RUNS runs of a small plan (one continuous cell,
# 1,000 rows, no inline index, 50 commits, 3 repetitions a run), the last half with every
# commit DELAY_MS slower (BENCH_OP_DELAY_MS), each published as it ends into a fresh
# results table; then `bench history` of that table (its chart under OUT/charts/). Prints
# each run's median throughput, then what history says, and where the step was planted.
#
#   scripts/figures/planted-step.sh [RUNS] [DELAY_MS] [OUT]   (defaults: 18, 2, results/planted-step)
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-18}
DELAY=${2:-2}
OUT=${3:-results/planted-step}
BENCH="${BENCH:-${CARGO_TARGET_DIR:-target}/release/bench}"
[ -x "$BENCH" ] || { echo "build first: cargo build --release ($BENCH is missing)" >&2; exit 1; }
rm -rf "$OUT" && mkdir -p "$OUT"
cat > "$OUT/plan.toml" <<PLAN
name = "planted"
operation = "write-create-namespace"
[matrix]
sizes = [1000]
inline = [false]
[continuous]
operations = 50
[run]
repetitions = 3
PLAN
first_slow=$(( RUNS / 2 + 1 ))
for k in $(seq 1 "$RUNS"); do
  delay=0
  [ "$k" -ge "$first_slow" ] && delay=$DELAY
  BENCH_OP_DELAY_MS=$delay "$BENCH" run "$OUT/plan.toml" --out "$OUT/run$k" \
    --root "$OUT/store" --progress lines > /dev/null 2> "$OUT/run$k.log" \
    || { tail -5 "$OUT/run$k.log" >&2; exit 1; }
  "$BENCH" publish "$OUT/run$k" --to "$OUT/db" > /dev/null
  python3 - "$OUT/run$k/results.jsonl" "$k" "$delay" <<'PY'
import json, statistics, sys
tps = [json.loads(l)["throughput_ops_per_sec"] for l in open(sys.argv[1])]
print(f"run {sys.argv[2]:>2}: planted {sys.argv[3]} ms, median {statistics.median(tps):.1f} ops/s "
      f"(runs {min(tps):.1f}–{max(tps):.1f})")
PY
done
echo
set +e
"$BENCH" history "$OUT/db" --charts "$OUT/charts" --fail-on-regression 5
echo "(exit $?; the slowdown was planted from run $first_slow of $RUNS)"
