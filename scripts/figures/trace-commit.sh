#!/usr/bin/env bash
# What one commit does, request by request: continuous cells at ROWS rows (both variants,
# 5 commits) on the S3 test endpoint at LATENCY ms a request, traced (`--trace 3`); prints
# the second traced commit of each variant as its round trips (requests in flight together
# on one line) with their times and bytes, and each record's wait by kind of request.
#
#   scripts/figures/trace-commit.sh [LATENCY] [ROWS]   (defaults: 20, 1000)
#
# Needs a release build and moto (see docs/s3.md). The trace files are left in
# results/trace-commit/traces/ to open in https://ui.perfetto.dev.
set -euo pipefail
cd "$(dirname "$0")/../.."
LATENCY=${1:-20}
ROWS=${2:-1000}
OUT=results/trace-commit
S3_SERVER_ARGS="--latency-ms $LATENCY"
# shellcheck source=scripts/figures/s3-endpoint.sh
. scripts/figures/s3-endpoint.sh
cat > "$WORK/p.toml" <<PLAN
name = "trace-commit"
[matrix]
sizes = [$ROWS]
inline = [false, true]
[continuous]
operations = 5
PLAN
"$BENCH" run "$WORK/p.toml" --out "$OUT" --fresh --trace 3 --root s3://bench/trace \
  "${S3_OPTS[@]}" --progress lines > /dev/null 2> "$WORK/log" \
  || { tail -5 "$WORK/log" >&2; exit 1; }
python3 - "$OUT" "$LATENCY" <<'PY'
import json, sys
out, latency = sys.argv[1], sys.argv[2]
for line in open(f"{out}/results.jsonl"):
    r = json.loads(line)
    trace = json.load(open(f"{out}/{r['trace']}"))
    ev = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    op = [e for e in ev if e["cat"] == "operation"][1]
    reqs = sorted((e for e in ev if e["cat"] == "request"
                   and op["ts"] <= e["ts"] <= op["ts"] + op["dur"]), key=lambda e: e["ts"])
    trips, end = [], -1
    for q in reqs:
        if trips and q["ts"] < end:
            trips[-1].append(q)
            end = max(end, q["ts"] + q["dur"])
        else:
            trips.append([q])
            end = q["ts"] + q["dur"]
    print(f"{r['bench_tag']} at {latency} ms a request: {op['name']}, {op['dur'] / 1000:.0f} ms, "
          f"{len(reqs)} requests in {len(trips)} round trips "
          f"(cell: {r['round_trips_per_op']:.1f} round trips a commit, "
          f"{r['store_wait_ms_per_op']:.0f} of {r['avg_latency_ms']:.0f} ms waiting)")
    for i, t in enumerate(trips, 1):
        start = (t[0]["ts"] - op["ts"]) / 1000
        parts = ", ".join(f"{q['name']} ({q['args']['bytes']:,} B)" if q["args"]["bytes"]
                          else q["name"] for q in t)
        print(f"  {i:>2}  +{start:6.1f} ms  {parts}")
    by = r["store_wait_ms_by_kind"]
    print("  wait by kind, ms a commit: " + ", ".join(
        f"{k} {v:.0f}" for k, v in sorted(by.items(), key=lambda kv: -kv[1])))
PY
