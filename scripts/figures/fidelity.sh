#!/usr/bin/env bash
# Fidelity: bench beside the reference harness it replaces -- manifest_bench of
# lance-namespace-impls, built against the same lance (scripts/figures/reference-build.sh) --
# on the same machine. Three parts:
#
#   fidelity.sh [harness] [ROUNDS] [ROWS] [OPS] [WRITERS] [SECS]   (defaults: 10 1000 100 2 5)
#       The whole harnesses, in paired rounds whose order alternates (ABBA). Cells at ROWS
#       rows, inline indices on and off, write-create-namespace: continuous (one writer, OPS
#       commits) and concurrent (WRITERS writers for SECS seconds). Each run starts on a fresh
#       copy of its golden: the reference's `seed-large` golden copied with cp (as its sweep
#       script copies it to a fresh prefix), bench's own golden copied by bench. Compared per
#       round, bench / reference:
#         continuous  commits per second of the writer's own time (1000 / mean latency): the
#                     reference's throughput clock also holds its worker's start and open,
#                     bench's does not, so their raw throughputs differ by that alone;
#         concurrent  commits per second of the window (the reference's: its commits / SECS,
#                     each worker committing SECS seconds from its own start), and the mean
#                     latency.
#       MODES="continuous" VARIANTS="true" take some cells only.
#   fidelity.sh workers [ROUNDS] [ROWS] [OPS]     (defaults: 12 1000 100)
#       The two workers alone, no coordinator on either side: bench's worker (released by
#       hand) and the reference's, alternating, OPS commits each on a fresh copy of one
#       golden (the reference's, inline indices on); bench / reference mean latency.
#   fidelity.sh accounting [ROWS] [OPS] [BUDGET_SECS]    (defaults: 1000 200 240)
#       What the request accounting costs: `bench ab` of the worker as it is (A) against the
#       same worker without the counting session (B: BENCH_UNCOUNTED=1, by a wrapper
#       script), inline indices on, commit by commit in lockstep.
#
# Ratios are geometric means over the rounds with a 95 % t-interval.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
part=harness
case "${1:-}" in harness | workers | accounting) part="$1"; shift ;; esac
target="${CARGO_TARGET_DIR:-$repo/target}"
(cd "$repo" && cargo build --release --quiet --bin bench)
bench="$target/release/bench"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log="$work/rounds.jsonl"

# Two-sided 95 % t-interval of the geometric mean of ratios (one per line on stdin).
geomean() {
  python3 -c '
import math, statistics, sys
T = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26,
     10: 2.23, 12: 2.18, 15: 2.13, 20: 2.09, 25: 2.06, 30: 2.04, 40: 2.02, 60: 2.00}
logs = [math.log(float(x)) for x in sys.stdin.read().split()]
m = statistics.mean(logs)
half = (T[max(k for k in T if k <= len(logs) - 1)] * statistics.stdev(logs) / math.sqrt(len(logs))
        if len(logs) > 1 else float("nan"))
print(f"{len(logs)} rounds: {math.exp(m):.3f} [{math.exp(m - half):.3f}-{math.exp(m + half):.3f}]")'
}

if [ "$part" = accounting ]; then
  rows="${1:-1000}"; ops="${2:-200}"; budget="${3:-240}"
  printf '#!/bin/sh\nBENCH_UNCOUNTED=1 exec %s "$@"\n' "$bench" >"$work/uncounted.sh"
  chmod +x "$work/uncounted.sh"
  printf 'name = "accounting"\n[matrix]\nsizes = [%s]\ninline = [true]\n[continuous]\noperations = %s\n[run]\nrepetitions = 4\n' \
    "$rows" "$ops" >"$work/plan.toml"
  "$bench" ab "$work/plan.toml" --candidate "$work/uncounted.sh" --out "$work/ab" \
    --root "$work/store" --progress lines --threshold 1 --budget-secs "$budget" 2>/dev/null
  echo "A: the worker as it is; B: the same worker without the request accounting (which"
  echo "counts no requests: B's requests and bytes are 0 by construction)."
  exit 0
fi

ref="$("$here/reference-build.sh")"

if [ "$part" = workers ]; then
  rounds="${1:-12}"; rows="${2:-1000}"; ops="${3:-100}"
  "$ref" seed-large --root "$work/golden" --count "$rows" --inline-optimization true 2>/dev/null
  mean() { python3 -c '
import json, sys
key = sys.argv[1]
ms = [json.loads(l)[key] for l in sys.stdin if chr(34) + key + chr(34) in l]
print(sum(ms) / len(ms))' "$1"; }
  ours() {
    rm -rf "$work/run"; cp -a "$work/golden" "$work/run"
    # Released at once ("go"); its stdin held open until it is done (a worker whose stdin
    # closes takes its coordinator for gone).
    exec 3< <(echo go; exec sleep 600)
    local holder=$!
    "$bench" worker --root "$work/run" --operation write-create-namespace --commit-retries 20 \
      --worker-id 0 --warmup 0 --tables "$((rows - rows / 3))" --inline --operations "$ops" \
      <&3 2>/dev/null | mean ms
    exec 3<&-
    kill "$holder" 2>/dev/null || true
  }
  theirs() {
    rm -rf "$work/run"; cp -a "$work/golden" "$work/run"
    "$ref" worker --root "$work/run" --operation write-create-namespace --operations "$ops" \
      --inline-optimization true 2>/dev/null | mean latency_ms
  }
  printf '%5s %12s %12s %7s\n' round "bench ms" "ref ms" ratio
  for round in $(seq 1 "$rounds"); do
    if [ $((round % 2)) = 1 ]; then b="$(ours)"; r="$(theirs)"; else r="$(theirs)"; b="$(ours)"; fi
    ratio="$(python3 -c "print($b / $r)")"
    printf '%5d %12.3f %12.3f %7.3f\n' "$round" "$b" "$r" "$ratio"
    echo "$ratio" >>"$log"
  done
  echo "mean latency bench / reference, $(geomean <"$log")"
  exit 0
fi

rounds="${1:-10}"; rows="${2:-1000}"; ops="${3:-100}"; writers="${4:-2}"; secs="${5:-5}"

# The reference's goldens, once per variant.
for inline in ${VARIANTS:-true false}; do
  "$ref" seed-large --root "$work/ref-golden-$inline" --count "$rows" \
    --inline-optimization "$inline" 2>/dev/null
done

# reference MODE INLINE: one run on a fresh copy; prints its BenchResult.
reference() {
  local mode="$1" inline="$2" args
  rm -rf "$work/ref-run"
  cp -a "$work/ref-golden-$inline" "$work/ref-run"
  if [ "$mode" = continuous ]; then
    args=(--concurrency 1 --operations "$ops")
  else
    args=(--concurrency "$writers" --duration-secs "$secs")
  fi
  "$ref" run --root "$work/ref-run" --operation write-create-namespace "${args[@]}" \
    --initial-entries "$rows" --inline-optimization "$inline" 2>/dev/null | tail -1
  rm -rf "$work/ref-run"
}

# ours MODE INLINE: one bench run of the one cell (its golden kept in one store); prints
# the record.
ours() {
  local mode="$1" inline="$2"
  {
    echo "name = \"fidelity\""
    echo "operation = \"write-create-namespace\""
    echo "[matrix]"
    echo "sizes = [$rows]"
    echo "inline = [$inline]"
    if [ "$mode" = continuous ]; then
      echo "[continuous]"
      echo "operations = $ops"
    else
      echo "[concurrent]"
      echo "concurrency = [$writers]"
      echo "duration_secs = $secs"
    fi
  } >"$work/plan.toml"
  rm -rf "$work/out"
  "$bench" run "$work/plan.toml" --out "$work/out" --root "$work/bench-store" \
    --progress lines >/dev/null 2>&1
  tail -1 "$work/out/results.jsonl"
}

# Bench's goldens built before the first timed round.
for inline in ${VARIANTS:-true false}; do ours continuous "$inline" >/dev/null; done

for round in $(seq 1 "$rounds"); do
  for mode in ${MODES:-continuous concurrent}; do
    for inline in ${VARIANTS:-true false}; do
      if [ $((round % 2)) = 1 ]; then
        r="$(reference "$mode" "$inline")"; b="$(ours "$mode" "$inline")"
      else
        b="$(ours "$mode" "$inline")"; r="$(reference "$mode" "$inline")"
      fi
      printf '{"round":%d,"mode":"%s","inline":%s,"ref":%s,"bench":%s}\n' \
        "$round" "$mode" "$inline" "$r" "$b" >>"$log"
    done
  done
done

python3 - "$log" "$secs" <<'PY'
import json, math, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
secs = float(sys.argv[2])
T = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26,
     10: 2.23, 12: 2.18, 15: 2.13, 20: 2.09, 25: 2.06, 30: 2.04, 40: 2.02, 60: 2.00}
def t95(df):
    return T[max(k for k in T if k <= df)]
def rate(r, side):
    x = r[side]
    if r["mode"] == "continuous":
        return 1000.0 / x["avg_latency_ms"]
    if side == "ref":
        return x["total_operations"] / secs
    return x["throughput_ops_per_sec"]
print(f"{'round':>5} {'cell':<22} {'ref op/s':>9} {'bench op/s':>10} {'ratio':>6}"
      f" {'ref ms':>7} {'bench ms':>8} {'ref raw op/s':>12}")
cells = {}
for r in rows:
    name = f"{r['mode']} {'inline' if r['inline'] else 'no_index'}"
    a, b = rate(r, "ref"), rate(r, "bench")
    cells.setdefault(name, []).append((b / a, r["bench"]["avg_latency_ms"] / r["ref"]["avg_latency_ms"]))
    print(f"{r['round']:>5} {name:<22} {a:>9.2f} {b:>10.2f} {b / a:>6.3f}"
          f" {r['ref']['avg_latency_ms']:>7.2f} {r['bench']['avg_latency_ms']:>8.2f}"
          f" {r['ref']['throughput_ops_per_sec']:>12.2f}")
print()
print(f"{'cell':<22} {'n':>3} {'bench/ref op/s':>15} {'95 % interval':>17} {'latency bench/ref':>18}")
for name, xs in cells.items():
    logs = [math.log(x) for x, _ in xs]
    m = statistics.mean(logs)
    half = t95(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs)) if len(logs) > 1 else float("nan")
    lat = math.exp(statistics.mean(math.log(y) for _, y in xs))
    print(f"{name:<22} {len(xs):>3} {math.exp(m):>15.3f} {math.exp(m - half):>8.3f}–{math.exp(m + half):<8.3f}"
          f" {lat:>18.3f}")
print("op/s: continuous, 1000 / mean latency; concurrent, commits in the window / its seconds;")
print("ratios are geometric means over the rounds, bench / reference; 1.000 = the same.")
PY
