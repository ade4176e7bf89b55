#!/usr/bin/env bash
# Trees and roles: runs plans/listing.toml, plans/hot-set.toml and plans/catalog-mixed.toml
# (or those named) on local disk, or with WHERE=s3 on the S3 test endpoint (moto, as
# scripts/figures/s3-endpoint.sh starts it; the plans' durations cut to 2 s and one
# repetition: a check that they run verified there, not a figure), and prints, over each cell's repetitions (median, and the extremes):
# list latency against the tables of the listed namespace; the share of conflicting attempts
# against the writers' target distribution; every (role, operation) of the mixed catalog.
#
#   scripts/figures/roles.sh [PLAN...]        (default: listing hot-set catalog-mixed)
set -euo pipefail
cd "$(dirname "$0")/../.."
PLANS=("${@:-listing hot-set catalog-mixed}")
read -r -a PLANS <<< "${PLANS[*]}"
S3_SERVER_ARGS=""
# shellcheck source=s3-endpoint.sh
source scripts/figures/s3-endpoint.sh
ARGS=()
if [ "${WHERE:-local}" = s3 ]; then
  ARGS=(--root s3://bench/roles "${S3_OPTS[@]}" --set workload.duration_secs=2 --set run.repetitions=1)
fi
for p in "${PLANS[@]}"; do
  run_sweep "$p" "plans/$p.toml" "${ARGS[@]}"
done
python3 - "$WORK" "${PLANS[@]}" <<'PY'
import json, statistics, sys
work, plans = sys.argv[1], sys.argv[2:]
def cells(plan):
    out = {}
    for l in open(f"{work}/{plan}/results.jsonl"):
        r = json.loads(l)
        assert r["verified"], (r["bench_tag"], r["verify_error"])
        out.setdefault(r["bench_tag"], []).append(r)
    return out
def spread(v):
    return f"{statistics.median(v):8.2f} [{min(v):.2f}–{max(v):.2f}]"
for plan in plans:
    cs = cells(plan)
    n = max(len(rs) for rs in cs.values())
    print(f"\n{plan}: {len(cs)} cells, {n} repetition(s) each, every run verified; median [min–max]")
    if plan == "listing":
        print(f"{'tables listed':>14}{'p50 ms':>24}{'p99 ms':>24}{'requests/op':>13}")
        for rs in sorted(cs.values(), key=lambda rs: rs[0]["fixture"]["tables_per_namespace"]):
            f = [r["roles"][0] for r in rs]
            print(f"{rs[0]['fixture']['tables_per_namespace']:>14}{spread([x['p50_latency_ms'] for x in f]):>24}"
                  f"{spread([x['p99_latency_ms'] for x in f]):>24}{statistics.median(x['requests_per_op'] for x in f):>13.2f}")
    elif plan == "hot-set":
        print(f"{'targets':>10}{'conflicting attempts, %':>28}{'updates/s':>24}")
        for rs in cs.values():
            f = [r["roles"][0] for r in rs]
            share = [100 * x["errors"].get("conflict", 0) / x["attempts"] for x in f]
            print(f"{f[0]['targets']:>10}{spread(share):>28}{spread([x['throughput_ops_per_sec'] for x in f]):>24}")
    else:
        for tag, rs in cs.items():
            print(tag)
            print(f"{'role':>8} {'operation':<30}{'ops/s':>24}{'p50 ms':>24}{'p99 ms':>24}  errors")
            for i, f0 in enumerate(rs[0]["roles"]):
                f = [r["roles"][i] for r in rs]
                errors = {k: sum(x["errors"].get(k, 0) for x in f) for x in f for k in x["errors"]}
                print(f"{f0['role']:>8} {f0['operation']:<30}{spread([x['throughput_ops_per_sec'] for x in f]):>24}"
                      f"{spread([x['p50_latency_ms'] for x in f]):>24}{spread([x['p99_latency_ms'] for x in f]):>24}  {errors or 0}")
PY
