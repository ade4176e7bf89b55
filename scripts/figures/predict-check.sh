#!/usr/bin/env bash
# Does `bench predict` hold? Continuous cells (sizes 1,000 and 10,000, both variants, 10
# commits, REPS repetitions) run on the S3 test endpoint at each latency of LATENCIES (ms a
# request); then every latency's records predict every other latency's throughput, which
# was measured there too. Prints per cell and pair of latencies the predicted and measured
# throughput (medians over the repetitions) and their ratio, and the largest error.
#
#   scripts/figures/predict-check.sh ["LATENCIES ..."] [REPS]   (defaults: "10 25 50", 3)
#
# About 2 minutes a latency. Needs a release build and moto (see docs/s3.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
LATENCIES=${1:-"10 25 50"}
REPS=${2:-3}
RESULTS=$(mktemp -d)
trap 'rm -rf "$RESULTS"' EXIT
measure() {  # run the panel at $1 ms a request into $RESULTS/at-$1
  (
    S3_SERVER_ARGS="--latency-ms $1"
    # shellcheck source=scripts/figures/s3-endpoint.sh
    . scripts/figures/s3-endpoint.sh
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
for at in $LATENCIES; do
  measure "$at"
done
for from in $LATENCIES; do
  for to in $LATENCIES; do
    [ "$from" = "$to" ] && continue
    "$BENCH" predict "$RESULTS/at-$from" --latency-ms "$to" --measured-at-ms "$from" --json \
      > "$RESULTS/pred-$from-$to.jsonl"
  done
done
python3 - "$RESULTS" "$LATENCIES" <<'PY'
import json, statistics, sys
res, lats = sys.argv[1], sys.argv[2].split()
def measured(at):
    by = {}
    for line in open(f"{res}/at-{at}/results.jsonl"):
        r = json.loads(line)
        by.setdefault(r["bench_tag"], []).append(r["throughput_ops_per_sec"])
    return {k: statistics.median(v) for k, v in by.items()}
print("predicted from one latency against measured at another, ops/s (medians):")
print(f"{'cell':<30} {'from ms':>7} {'to ms':>6} {'predicted':>10} {'measured':>9} {'ratio':>6}")
worst = 0.0
for frm in lats:
    for to in lats:
        if frm == to:
            continue
        m = measured(to)
        for line in open(f"{res}/pred-{frm}-{to}.jsonl"):
            p = json.loads(line)
            got = m[p["bench_tag"]]
            ratio = p["predicted_ops_per_sec"] / got
            worst = max(worst, abs(ratio - 1))
            print(f"{p['bench_tag']:<30} {frm:>7} {to:>6} {p['predicted_ops_per_sec']:>10.2f} {got:>9.2f} {ratio:>6.3f}")
print(f"largest error: {worst * 100:.1f} %")
for at in lats:
    trips = {}
    for line in open(f"{res}/at-{at}/results.jsonl"):
        r = json.loads(line)
        trips.setdefault(r["bench_tag"], []).append(r["round_trips_per_op"])
    print(f"round trips a commit at {at} ms: " + ", ".join(
        f"{k} {statistics.median(v):.1f}" for k, v in sorted(trips.items())))
PY
