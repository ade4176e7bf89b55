#!/usr/bin/env bash
# How long a cell's copy of its golden takes on S3, by copy parallelism: goldens of the
# given sizes (default 100,000 and 1,000,000 rows, with and without the inline index) on the S3 test endpoint with a
# network's latency (scripts/s3-server.py --latency-ms), each copied REPS times at each
# parallelism (run.copy_parallelism) by a one-commit continuous cell; prints per size and
# parallelism the objects copied and the copy's wall time (median and range over REPS), and
# the speed-up against one copy at a time.
#
#   scripts/figures/copy-times.sh [LATENCY_MS] [REPS] [SIZES]   (defaults: 25 ms, 3, "100000 1000000")
#
# Needs a release build and moto (see docs/s3.md). The goldens are built once and reused.
set -euo pipefail
cd "$(dirname "$0")/../.."
LATENCY=${1:-25}
REPS=${2:-3}
SIZES=${3:-"100000 1000000"}
PARALLELISM=${PARALLELISM:-"1 4 16 64"}
S3_SERVER_ARGS="--latency-ms $LATENCY"
# shellcheck source=scripts/figures/s3-endpoint.sh
. scripts/figures/s3-endpoint.sh
OPTS=(--root s3://bench/copies "${S3_OPTS[@]}")
SIZE_LIST=$(echo "$SIZES" | tr ' ' ',')
for p in $PARALLELISM; do
  cat > "$WORK/copy-$p.toml" <<PLAN
name = "copy-$p"
[matrix]
sizes = [$SIZE_LIST]
inline = [true, false]
[continuous]
operations = 1
[run]
repetitions = $REPS
copy_parallelism = $p
cleanup = "none"
PLAN
  "$BENCH" run "$WORK/copy-$p.toml" --out "$WORK/out-$p" --progress lines "${OPTS[@]}" \
    > /dev/null 2> "$WORK/log-$p" || { tail -5 "$WORK/log-$p" >&2; exit 1; }
done
echo "copy of a golden to a cell's prefix, S3 test endpoint with ${LATENCY} ms a request, $REPS repetitions:"
python3 - "$WORK" "$PARALLELISM" <<'PY'
import json, statistics, sys
work, pars = sys.argv[1], [int(p) for p in sys.argv[2].split()]
rows = {}
for p in pars:
    for line in open(f"{work}/out-{p}/results.jsonl"):
        r = json.loads(line)
        rows.setdefault((r["initial_entries"], r["variant"], p), []).append(r["copy"])
print(f"{'rows':>9} {'variant':>13} {'objects':>8} {'parallel':>8} {'copy s (median)':>16} {'range':>13} {'vs 1 at a time':>15}")
for size, variant in sorted({(s, v) for s, v, _ in rows}):
    base = None
    for p in pars:
        cs = rows[(size, variant, p)]
        ms = [c["ms"] / 1000 for c in cs]
        med = statistics.median(ms)
        base = base or med
        print(f"{size:>9} {variant:>13} {cs[0]['objects']:>8} {p:>8} {med:>16.2f} {min(ms):>6.2f}–{max(ms):<6.2f} {base / med:>14.1f}×")
PY
