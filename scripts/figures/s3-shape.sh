#!/usr/bin/env bash
# The published shape, reproduced on this machine: a small panel against the S3 test
# endpoint with a network's latency (scripts/s3-server.py --latency-ms), printing per cell
# the throughput, the requests per commit and the errors.
#
#   scripts/figures/s3-shape.sh [LATENCY_MS] [DURATION_SECS] [REPS]   (defaults: 25 ms, 12 s, 1)
#
# With REPS > 1 every cell runs REPS times (interleaved order) and each figure is the median
# with its range (min–max) over the repetitions: one run's cell moves by 10–45 % here.
#
# Panel: sizes 1,000 and 10,000; both variants; a continuous cell of 10 commits and
# concurrent cells of 1, 2, 4 and 8 writers; commit_retries = 3, so that contention shows
# as errors. Takes about 5 minutes a repetition. Needs a release build and moto (see docs/s3.md);
# S3_BACKEND=rgw runs it on Ceph's gateway (scripts/rgw-up.sh) behind the same endpoint.
set -euo pipefail
cd "$(dirname "$0")/../.."
LATENCY=${1:-25}
DURATION=${2:-12}
REPS=${3:-1}
S3_SERVER_ARGS="--latency-ms $LATENCY"
# shellcheck source=scripts/figures/s3-endpoint.sh
. scripts/figures/s3-endpoint.sh

cat > "$WORK/shape.toml" <<EOF
name = "shape"
[matrix]
sizes = [1000, 10000]
inline = [true, false]
[continuous]
operations = 10
[concurrent]
concurrency = [1, 2, 4, 8]
duration_secs = $DURATION
[run]
commit_retries = 3
repetitions = $REPS
order = "interleaved"
EOF
start=$(date +%s)
"$BENCH" run "$WORK/shape.toml" --out "$WORK/out" --root s3://bench/shape "${S3_OPTS[@]}" \
  --progress lines 2> "$WORK/run.log" \
  || { tail -20 "$WORK/run.log"; exit 1; }
echo "S3 test endpoint (${S3_BACKEND:-moto}) on 127.0.0.1, ${LATENCY} ms per request; ${DURATION} s concurrent cells;"
echo "commit_retries = 3; write-create-namespace; $REPS repetitions per cell;" \
  "$(($(date +%s) - start)) s in all"
python3 - "$WORK/out/results.jsonl" "$REPS" <<'PY'
import json, statistics, sys
by = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    by.setdefault(r["bench_tag"], []).append(r)
def key(rs):
    r = rs[0]
    return (r["variant"], r["initial_entries"], r["mode"] != "continuous", r["concurrency"])
def req(r):
    io = r.get("io_per_op") or {}
    return sum(io.get(k, 0) for k in ("get", "put", "list", "head", "delete", "copy"))
def med(rs, f):
    return statistics.median(f(r) for r in rs)
reps = int(sys.argv[2])
span = "ops/s (min-max)" if reps > 1 else "ops/s"
print(f"{'variant':<13}{'rows':>7}  {'mode':<11}{'C':>3}{span:>18}{'p50 ms':>8}{'req/commit':>11}"
      f"{'commits':>8}{'errors':>7}{'conflicts':>10}")
for rs in sorted(by.values(), key=key):
    r, tps = rs[0], [x["throughput_ops_per_sec"] for x in rs]
    ops = f"{statistics.median(tps):.2f}" + (f" ({min(tps):.2f}-{max(tps):.2f})" if reps > 1 else "")
    print(f"{r['variant']:<13}{r['initial_entries']:>7}  {r['mode']:<11}{r['concurrency']:>3}{ops:>18}"
          f"{med(rs, lambda x: x['p50_latency_ms']):>8.0f}{med(rs, req):>11.1f}"
          f"{med(rs, lambda x: x['total_operations']):>8.0f}{med(rs, lambda x: x['errors']):>7.0f}"
          f"{med(rs, lambda x: x['conflict_errors']):>10.0f}")
if reps > 1:
    print("(medians over the repetitions; ops/s with its range)")
PY
