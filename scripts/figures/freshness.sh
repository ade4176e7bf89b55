#!/usr/bin/env bash
# What readers see: plans/freshness.toml (one writer declaring tables and dropping the
# golden's at 20 commits a second, one reader looking tables up, two listing them, 10 s,
# directly and through one and three REST servers, REPS repetitions) on local disk; then the
# same plan with the REST servers' planted cache (bench serve's BENCH_SERVE_CACHE_MS, a test
# fixture: listings answered from a view refreshed every CACHE_MS ms); then on the S3 test
# endpoint (moto) made slow and faulty (20 ± 10 ms a request, 503 to 10 % of requests, 2 % of
# connections reset) with commits abandoned at 0.5 s (indeterminate: each resolved against
# the copy after the cell). Prints per cell, over its repetitions (median [min–max]): the
# visibility lag (p50, max) beside the listings' own p50 latency, the stale reads' share,
# resurrections and the other anomalies summed, the indeterminate commits with how many
# of them landed, the failures of the checks on the `__manifest` version order summed, and
# the share of the history's commits and reads whose version is known.
#
#   scripts/figures/freshness.sh [REPS] [CACHE_MS]     (defaults: 3 200)
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${1:-3}
CACHE_MS=${2:-200}
S3_SERVER_ARGS="--latency-ms 20 --jitter-ms 10 --throttle-rate 0.1 --reset-rate 0.02 --seed 7"
# shellcheck source=s3-endpoint.sh
source scripts/figures/s3-endpoint.sh
REP=(--set "run.repetitions=$REPS")
run_sweep plain plans/freshness.toml --root "$WORK/store" "${REP[@]}"
BENCH_SERVE_CACHE_MS=$CACHE_MS run_sweep cached plans/freshness.toml --root "$WORK/store" "${REP[@]}"
run_sweep faults plans/freshness.toml --root s3://bench/fresh "${S3_OPTS[@]}" "${REP[@]}" \
  --set run.attempt_timeout_secs=0.5
python3 - "$WORK" "$REPS" "$CACHE_MS" <<'PY'
import json, statistics, sys
work, reps, cache = sys.argv[1], sys.argv[2], sys.argv[3]
def spread(v):
    v = [x for x in v if x is not None]
    return f"{statistics.median(v):7.2f} [{min(v):.2f}–{max(v):.2f}]" if v else "-"
print(f"{reps} repetitions a cell (median [min–max]); lag in ms; every run verified")
print(f"{'cell':<40}{'lag p50':>22}{'lag max':>24}{'list p50':>20}{'stale %':>22}{'resurr.':>8}"
      f"{'other':>6}{'indet. (landed)':>16}{'order':>6}{'known %':>22}")
runs = (("plain", ""), ("cached", f" (cache {cache} ms)"), ("faults", " (S3, faults)"))
for run, label in runs:
    cells = {}
    for l in open(f"{work}/{run}/results.jsonl"):
        r = json.loads(l)
        assert r["verified"], (r["bench_tag"], r.get("verify_error"))
        lists = [f for f in r["roles"] if f["operation"] == "warm-read-list-tables"]
        cells.setdefault(r["bench_tag"], []).append(dict(r["consistency"], list_p50=lists[0]["p50_latency_ms"]))
    for tag, cs in cells.items():
        if run == "cached" and "rest" not in tag:
            continue
        other = sum(c["monotonic_violations"] + c["phantoms"] for c in cs)
        resurrected = sum(c["resurrections"] for c in cs)
        indet = sum(c["indeterminate"] for c in cs)
        landed = sum(c.get("indeterminate_landed") or 0 for c in cs)
        orders = [c.get("order") or {} for c in cs]
        checks = ("not_its_version", "no_such_state", "versions_back", "write_order",
                  "one_version_twice")
        order = sum(o[k]["count"] for o in orders if o for k in checks)
        known = [100 * (o["commits_known"] + o["reads_known"]) / max(1, o["commits"] + o["reads"])
                 for o in orders if o]
        print(f"{tag.split('_c_4_')[-1] + label:<40}{spread([c['lag_p50_ms'] for c in cs]):>22}"
              f"{spread([c['lag_max_ms'] for c in cs]):>24}{spread([c['list_p50'] for c in cs]):>20}"
              f"{spread([100 * c['stale_rate'] for c in cs]):>22}{resurrected:>8}{other:>6}"
              f"{f'{indet} ({landed})':>16}{order:>6}{spread(known):>22}")
PY
cat "$WORK/times"
