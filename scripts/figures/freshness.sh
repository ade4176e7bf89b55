#!/usr/bin/env bash
# What readers see: plans/freshness.toml (one writer declaring tables at 20 a second, two
# readers listing them, 10 s, directly and through one and three REST servers, REPS
# repetitions), then the same plan with the REST servers' planted cache (bench serve's
# BENCH_SERVE_CACHE_MS, a test fixture: listings answered from a view refreshed every
# CACHE_MS ms). Prints per cell, over its repetitions (median [min–max]): the visibility lag
# (p50, max), the stale reads' share, and the other anomalies summed.
#
#   scripts/figures/freshness.sh [REPS] [CACHE_MS]     (defaults: 3 200)
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${1:-3}
CACHE_MS=${2:-200}
BENCH="${BENCH:-${CARGO_TARGET_DIR:-target}/release/bench}"
[ -x "$BENCH" ] || { echo "build first: cargo build --release ($BENCH is missing)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/freshness.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
for run in plain cached; do
  cache=()
  [ "$run" = cached ] && cache=(env "BENCH_SERVE_CACHE_MS=$CACHE_MS")
  "${cache[@]}" "$BENCH" run plans/freshness.toml --out "$WORK/$run" --root "$WORK/store" \
    --set "run.repetitions=$REPS" --progress lines > /dev/null 2> "$WORK/$run.log" \
    || { tail -5 "$WORK/$run.log" >&2; exit 1; }
done
python3 - "$WORK" "$REPS" "$CACHE_MS" <<'PY'
import json, statistics, sys
work, reps, cache = sys.argv[1], sys.argv[2], sys.argv[3]
def spread(v):
    return f"{statistics.median(v):7.2f} [{min(v):.2f}–{max(v):.2f}]"
print(f"{reps} repetitions a cell (median [min–max]); lag in ms; every run verified")
print(f"{'cell':<52}{'lag p50':>22}{'lag max':>24}{'stale %':>22}{'other anomalies':>16}")
for run, label in (("plain", ""), ("cached", f" (cache {cache} ms)")):
    cells = {}
    for l in open(f"{work}/{run}/results.jsonl"):
        r = json.loads(l)
        assert r["verified"], r
        cells.setdefault(r["bench_tag"], []).append(r["consistency"])
    for tag, cs in cells.items():
        if run == "cached" and "rest" not in tag:
            continue
        other = sum(c["monotonic_violations"] + c["phantoms"] for c in cs)
        print(f"{tag.split('_c_3_')[-1] + label:<52}{spread([c['lag_p50_ms'] for c in cs]):>22}"
              f"{spread([c['lag_max_ms'] for c in cs]):>24}{spread([100 * c['stale_rate'] for c in cs]):>22}{other:>16}")
PY
