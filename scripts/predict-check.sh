#!/usr/bin/env bash
# Does `bench predict` hold? Continuous cells (sizes 1,000 and 10,000, both variants, 10
# commits, REPS repetitions) run on the S3 test endpoint at FROM ms a request, predicted
# for each latency of TO, and run there too; prints per cell the predicted and measured
# throughput and their ratio.
#
#   scripts/predict-check.sh [FROM] ["TO ..."] [REPS]   (defaults: 20, "10 40 50", 3)
#
# About 2 minutes a latency. Needs a release build and moto (see docs/s3.md).
set -euo pipefail
cd "$(dirname "$0")/.."
FROM=${1:-20}
TO=${2:-"10 40 50"}
REPS=${3:-3}
RESULTS=$(mktemp -d)
trap 'rm -rf "$RESULTS"' EXIT
measure() {  # run the panel at $1 ms a request into $RESULTS/at-$1
  (
    S3_SERVER_ARGS="--latency-ms $1"
    # shellcheck source=scripts/s3-endpoint.sh
    . scripts/s3-endpoint.sh
    cat > "$WORK/p.toml" <<PLAN
name = "predict"
[matrix]
sizes = [1000, 10000]
inline = [true, false]
[continuous]
operations = 10
[run]
repetitions = $REPS
PLAN
    "$BENCH" run "$WORK/p.toml" --out "$RESULTS/at-$1" --root "s3://bench/p$1" \
      "${S3_OPTS[@]}" --progress lines > /dev/null 2> "$WORK/log" \
      || { tail -5 "$WORK/log" >&2; exit 1; }
  )
}
BENCH="${BENCH:-${CARGO_TARGET_DIR:-target}/release/bench}"
measure "$FROM"
for to in $TO; do
  measure "$to"
  "$BENCH" predict "$RESULTS/at-$FROM" --latency-ms "$to" --measured-at-ms "$FROM" --json \
    > "$RESULTS/pred-$to.jsonl"
done
python3 - "$RESULTS" "$FROM" "$TO" <<'PY'
import json, statistics, sys
res, frm, tos = sys.argv[1], sys.argv[2], sys.argv[3].split()
def measured(at):
    by = {}
    for line in open(f"{res}/at-{at}/results.jsonl"):
        r = json.loads(line)
        by.setdefault(r["bench_tag"], []).append(r["throughput_ops_per_sec"])
    return {k: statistics.median(v) for k, v in by.items()}
print(f"predicted from {frm} ms a request against measured, ops/s (medians):")
print(f"{'cell':<30} {'to ms':>6} {'predicted':>10} {'measured':>9} {'ratio':>6}")
worst = 0.0
for to in tos:
    m = measured(to)
    for line in open(f"{res}/pred-{to}.jsonl"):
        p = json.loads(line)
        got = m[p["bench_tag"]]
        ratio = p["predicted_ops_per_sec"] / got
        worst = max(worst, abs(ratio - 1))
        print(f"{p['bench_tag']:<30} {to:>6} {p['predicted_ops_per_sec']:>10.2f} {got:>9.2f} {ratio:>6.3f}")
print(f"largest error: {worst * 100:.1f} %")
PY
