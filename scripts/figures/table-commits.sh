#!/usr/bin/env bash
# Table commits and long histories (plans/table-append.toml, plans/long-history.toml), on
# local disk and on the S3 test endpoint with a network's latency:
#  1. table-append as written (1, 4, 16 writers × LANCE_USE_VERSION_HINT 0/1, 10 s cells,
#     3 repetitions), on local disk; then on S3 with REPS repetitions;
#  2. long-history as written on local disk (100 and 10,000 versions, tracking off and on);
#     then on S3 with the histories S3_VERSIONS (building 10,000 versions over a network
#     takes long) and 20 lookups a cell.
# Prints per cell the median commits/s (or lookup latency) with its range over the
# repetitions, the requests an operation makes, and each golden's history build time.
#
#   scripts/figures/table-commits.sh [LATENCY_MS] [REPS] [S3_VERSIONS]
#   (defaults: 25, 1, "100 2000")
set -euo pipefail
cd "$(dirname "$0")/../.."
LATENCY=${1:-25}
REPS=${2:-1}
S3_VERSIONS=${3:-100 2000}
S3_SERVER_ARGS="--latency-ms $LATENCY"
# shellcheck source=s3-endpoint.sh
source scripts/figures/s3-endpoint.sh
s3_plan() { # PLAN VERSIONS REPS OPS: the plan with S3's histories, repetitions, lookups
  sed -e "s/^table_versions = \[100, 10000\]/table_versions = [${2// /, }]/" \
      -e "s/^repetitions = 3/repetitions = $3/" -e "s/^operations = 50/operations = $4/" "$1"
}
run_sweep local-append plans/table-append.toml --root "$WORK/store-local"
run_sweep local-history plans/long-history.toml --root "$WORK/store-local"
s3_plan plans/table-append.toml "" "$REPS" 50 > "$WORK/append-s3.toml"
s3_plan plans/long-history.toml "$S3_VERSIONS" 3 20 > "$WORK/history-s3.toml"
run_sweep s3-append "$WORK/append-s3.toml" --root s3://bench/append "${S3_OPTS[@]}"
run_sweep s3-history "$WORK/history-s3.toml" --root s3://bench/history "${S3_OPTS[@]}"
python3 - "$WORK" "$LATENCY" <<'PY'
import json, re, statistics, sys
work, latency = sys.argv[1], sys.argv[2]
def records(name):
    out = {}
    for line in open(f"{work}/{name}/results.jsonl"):
        r = json.loads(line)
        assert r["verified"], r
        out.setdefault(r["bench_tag"], []).append(r)
    return out
def spread(v, fmt="{:.1f}"):
    return f"{fmt.format(statistics.median(v))} ({fmt.format(min(v))}-{fmt.format(max(v))})"
def kinds(io):
    return " ".join(f"{k} {io[k]:.1f}" for k in ("get", "head", "put", "conditional_put", "list", "delete") if io.get(k))
print(open(f"{work}/times").read())
for place in ("local", "s3"):
    where = "local disk" if place == "local" else f"S3 endpoint, {latency} ms a request"
    print(f"== table-append, {where}: commits/s median (range); conflicts+timeouts; requests a commit")
    for tag, rs in sorted(records(f"{place}-append").items(), key=lambda x: (x[1][0]["concurrency"], x[0])):
        bad = sum(r["conflict_errors"] + (r.get("timeout_errors") or 0) for r in rs)
        print(f"  {tag:<62} {spread([r['throughput_ops_per_sec'] for r in rs]):>22} {bad:>4}  {kinds(rs[0]['io_per_op'])}")
    print(f"== long-history, {where}: lookup p50 ms median (range); requests a lookup")
    for tag, rs in sorted(records(f"{place}-history").items(), key=lambda x: (x[1][0]["table_versions"], x[0])):
        print(f"  {tag:<74} {spread([r['p50_latency_ms'] for r in rs], '{:.2f}'):>22}  {kinds(rs[0]['io_per_op'])}")
    for line in open(f"{work}/{place}-history.log"):
        m = re.search(r"golden (\S+): built .* shared table of (\d+) versions \(([\d.]+)s of history\)", line)
        if m:
            v, s = int(m.group(2)), float(m.group(3))
            print(f"  golden {m.group(1)}: {v} versions in {s:.1f} s ({s / v * 10000:.0f} s per 10,000)")
PY
