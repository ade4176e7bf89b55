#!/usr/bin/env bash
# How noisy is this machine, in verdicts?
#
#   scripts/noise.sh [PAIRS] [REPS]      (PAIRS=0: only part 2)
#
# 1. False positives of `bench compare`: PAIRS pairs of identical runs of the same binary
#    on a small panel (continuous and concurrent cells at 1,000 and 10,000 rows, both
#    variants, REPS repetitions, interleaved order); every pair compared; prints how many
#    cells got a verdict (REGRESSION or improved) although nothing changed, with and
#    without the significance test (the bare ±10 % threshold on the medians).
# 2. The smallest change `bench ab` finds with REPS pairs: continuous cells at 1,000 and
#    10,000 rows (inline indices) against a candidate that is this bench with a planted
#    slowdown of 5 %, 10 % and 20 % of the baseline's mean commit latency per cell
#    (BENCH_OP_DELAY_MS); prints the ratio the delay is due to give (from arm A's own
#    latencies), the measured ratio B/A with its 95 % interval, whether the interval
#    excludes 1, and the verdict.
#
# Defaults: PAIRS=4, REPS=5. Takes about 25 minutes on 2 cores. Needs a release build
# (cargo build --release); uses $BENCH, else the build in $CARGO_TARGET_DIR or target/.
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${1:-4}
REPS=${2:-5}
BENCH="${BENCH:-${CARGO_TARGET_DIR:-target}/release/bench}"
[ -x "$BENCH" ] || { echo "build first: cargo build --release" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

cat > "$WORK/panel.toml" <<EOF
name = "noise"
[matrix]
sizes = [1000, 10000]
inline = [true, false]
[continuous]
operations = 30
[concurrent]
concurrency = [2]
duration_secs = 3
[run]
repetitions = $REPS
order = "interleaved"
EOF

if [ "$PAIRS" -gt 0 ]; then
echo "== 1. bench compare on identical runs ($PAIRS pairs, $REPS repetitions each) =="
cells=0; flagged=0; bare=0
for p in $(seq 1 "$PAIRS"); do
  for side in a b; do
    "$BENCH" run "$WORK/panel.toml" --out "$WORK/id-$p-$side" --root "$WORK/store" \
      --progress lines >/dev/null 2>"$WORK/log" || { cat "$WORK/log"; exit 1; }
  done
  "$BENCH" compare "$WORK/id-$p-a" "$WORK/id-$p-b" > "$WORK/cmp-$p.txt" 2>/dev/null
  # Cells of the main table (before the table of requests): their rows start with the id.
  main=$(sed '/^requests and bytes/,$d' "$WORK/cmp-$p.txt")
  n=$(echo "$main" | grep -cE '^(cont|conc)_')
  f=$(echo "$main" | grep -E '^(cont|conc)_' | grep -cE 'REGRESSION|improved' || true)
  # Without the test: a median moved beyond ±10 % (any of ops/s, p50, p99).
  b=$(python3 - "$WORK/id-$p-a/summary.csv" "$WORK/id-$p-b/summary.csv" <<'PY'
import csv, sys
rows = [{r["bench_tag"]: r for r in csv.DictReader(open(f))} for f in sys.argv[1:]]
n = 0
for tag, a in rows[0].items():
    b = rows[1].get(tag)
    if b and any(abs(float(b[k]) / float(a[k]) - 1) > 0.10 for k in ("tps", "p50_ms", "p99_ms") if float(a[k]) > 0):
        n += 1
print(n)
PY
)
  echo "pair $p: $f of $n cells with a verdict; $b beyond ±10 % on a median without the test"
  cells=$((cells + n)); flagged=$((flagged + f)); bare=$((bare + b))
done
python3 -c "print(f'false positives: {$flagged}/{$cells} cells = {100*$flagged/$cells:.1f} % with the test; {$bare}/{$cells} = {100*$bare/$cells:.1f} % with the threshold alone')"
echo
fi

echo "== 2. bench ab against planted slowdowns ($REPS pairs per cell) =="
printf '%-7s %8s %9s %8s  %-19s %-5s %s\n' rows planted delay_ms "B/A due" "B/A ops/s [95% CI]" seen verdict
for rows in 1000 10000; do
  cat > "$WORK/one-$rows.toml" <<EOF
name = "ab-$rows"
[matrix]
sizes = [$rows]
inline = [true]
[continuous]
operations = 30
[run]
repetitions = $REPS
EOF
  # The baseline's mean commit latency at this size, from one run, sets the delay.
  "$BENCH" run "$WORK/one-$rows.toml" --out "$WORK/base-$rows" --root "$WORK/store" \
    --progress lines >/dev/null 2>&1
  avg=$(python3 -c "import json,statistics,sys; print(statistics.median(json.loads(l)['avg_latency_ms'] for l in open(sys.argv[1])))" "$WORK/base-$rows/results.jsonl")
  for pct in 5 10 20; do
    delay=$(python3 -c "print(round($avg * $pct / 100, 3))")
    cand="$WORK/cand-$rows-$pct.sh"
    printf '#!/bin/sh\nBENCH_OP_DELAY_MS=%s exec %s "$@"\n' "$delay" "$(realpath "$BENCH")" > "$cand"
    chmod +x "$cand"
    out=$("$BENCH" ab "$WORK/one-$rows.toml" --candidate "$cand" --out "$WORK/ab-$rows-$pct" \
      --root "$WORK/store" --progress lines 2>/dev/null | grep -E '^cont_' | head -1 || true)
    # cell, A, ±cv, B, ±cv, B/A, [interval], ...
    ratio=$(echo "$out" | awk '{print $6, $7}')
    # The ratio the delay is due to give, from arm A's own commit latencies in this run:
    # the geometric mean over the pairs of avg / (avg + delay).
    due=$(python3 - "$WORK/ab-$rows-$pct/results.jsonl" "$delay" <<'PY'
import json, math, sys
d = float(sys.argv[2])
a = [json.loads(l)["avg_latency_ms"] for l in open(sys.argv[1]) if '"arm":"A"' in l]
print(f"{math.exp(sum(math.log(x / (x + d)) for x in a) / len(a)):.3f}")
PY
)
    # Seen: the interval excludes 1 (significant), whether or not beyond the threshold.
    hi=$(echo "$ratio" | sed -E 's/.*–([0-9.]+)\].*/\1/')
    seen=$(python3 -c "print('yes' if float('$hi') < 1 else 'no')")
    verdict=$(echo "$out" | grep -oE 'REGRESSION \([^)]*\)|improved \([^)]*\)|within noise' | head -1)
    printf '%-7s %7s%% %9s %8s  %-19s %-5s %s\n' "$rows" "$pct" "$delay" "$due" "$ratio" "$seen" "$verdict"
  done
done
echo "(planted: each commit of B takes delay_ms more, pct % of the baseline's mean commit latency"
echo " in a run before; B/A due: the throughput ratio that delay gives against arm A's own"
echo " latencies in the A/B run; seen: the 95 % interval excludes 1; a verdict needs the whole"
echo " interval beyond the ±10 % threshold, so a change near 10 % is never a verdict)"
