#!/usr/bin/env bash
# Closed- and open-loop p99 of the same cell: a concurrent cell (ROWS rows, no inline index,
# WRITERS writers, SECS s) closed-loop first, for its capacity C (achieved commits/s); then
# open-loop at 0.5, 0.9, 1.1 and 1.5 × C (uniform arrivals), REPS repetitions each. Prints
# per cell the offered and achieved rates, p50 and p99 from the intended start, the
# service p50 and p99, the late starts and the largest lag (medians over the repetitions).
#
#   scripts/figures/open-vs-closed.sh [ROWS] [WRITERS] [SECS] [REPS]   (defaults: 1000 4 10 3)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROWS=${1:-1000}
WRITERS=${2:-4}
SECS=${3:-10}
REPS=${4:-3}
BENCH="${BENCH:-${CARGO_TARGET_DIR:-target}/release/bench}"
[ -x "$BENCH" ] || { echo "build first: cargo build --release ($BENCH is missing)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/open-vs-closed.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
plan() { # NAME [RATES]
  printf 'name = "%s"\n[matrix]\nsizes = [%s]\ninline = [false]\n[concurrent]\nconcurrency = [%s]\nduration_secs = %s\n%s\n[run]\nrepetitions = %s\n' \
    "$1" "$ROWS" "$WRITERS" "$SECS" "${2:+rates = [$2]}" "$REPS" > "$WORK/$1.toml"
  "$BENCH" run "$WORK/$1.toml" --out "$WORK/$1" --root "$WORK/store" --progress lines \
    > /dev/null 2> "$WORK/$1.log" || { tail -5 "$WORK/$1.log" >&2; exit 1; }
}
plan closed
capacity=$(python3 - "$WORK/closed/results.jsonl" <<'PY'
import json, statistics, sys
print(statistics.median(json.loads(l)["throughput_ops_per_sec"] for l in open(sys.argv[1])))
PY
)
rates=$(python3 -c "c=$capacity; print(', '.join(str(round(c*f, 1)) for f in (0.5, 0.9, 1.1, 1.5)))")
plan open "$rates"
python3 - "$WORK" "$ROWS" "$WRITERS" "$SECS" "$REPS" <<'PY'
import json, statistics, sys
work, rows, writers, secs, reps = sys.argv[1:]
med = lambda rs, f: statistics.median(f(r) for r in rs)
print(f"{rows} rows, no inline index, {writers} writers, {secs} s a cell, {reps} repetitions (medians)")
print(f"{'cell':<34}{'offered':>9}{'achieved':>9}{'p50':>9}{'p99':>9}{'svc p50':>9}{'svc p99':>9}{'late':>7}{'max lag':>9}")
for name in ("closed", "open"):
    cells = {}
    for l in open(f"{work}/{name}/results.jsonl"):
        r = json.loads(l)
        assert r["verified"], r
        cells.setdefault(r["bench_tag"], []).append(r)
    for tag, rs in sorted(cells.items(), key=lambda kv: kv[1][0].get("offered_ops_per_sec", 0)):
        off = rs[0].get("offered_ops_per_sec")
        svc = lambda k: med(rs, lambda r: r["service"][k]) if off else None
        f = lambda v, d=1: "–" if v is None else f"{v:.{d}f}"
        print(f"{tag:<34}{f(off):>9}{f(med(rs, lambda r: r['throughput_ops_per_sec'])):>9}"
              f"{f(med(rs, lambda r: r['p50_latency_ms'])):>9}{f(med(rs, lambda r: r['p99_latency_ms'])):>9}"
              f"{f(svc('p50_ms')):>9}{f(svc('p99_ms')):>9}"
              f"{f(med(rs, lambda r: r['late_operations']) if off else None, 0):>7}"
              f"{f(med(rs, lambda r: r['max_lag_ms']) if off else None):>9}")
print("latencies in ms; for open-loop cells p50 and p99 run from the intended start, svc from the actual one")
PY
